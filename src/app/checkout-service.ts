import { lockBookingRow, updateBooking, updateBookingIn } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import type { CheckoutStatus } from '../data/tables.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import {
  type BookingStatus,
  effectiveStatus,
  transition,
  whatBecameOf,
} from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import { AWAITING_PROOF, awaitsContactProof } from '../domain/public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../domain/waitlist.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { bookingPagePath } from './booking-page-token.ts';
import { takeBookingTurn } from './booking-reference.ts';
import { settleRequirement } from './booking-requirements.ts';
import { announceChange } from './outbox-service.ts';
import { bookEntriesFilledBy } from './waitlist/offer-outcomes.ts';

/**
 * The built-in local payment provider's hosted checkout (payments.ts): what the page at
 * /checkout/{session} shows, and its two actions. The session id is the customer's capability: whoever
 * holds the payment_url may look at the checkout, pay it or leave it, and nothing else.
 *
 * Leaving (abandon) releases nothing by itself: the booking stays pending_payment and keeps its slot
 * until the hold lapses, and the checkout stays payable until then, so a customer who changes their
 * mind can come back and pay. An unpaid checkout expires with the hold (lazily, like the booking).
 */

/**
 * open / abandoned: payable. paid: done. expired: the hold lapsed (or the sweeper wrote it).
 * closed: the booking left pending_payment some other way (cancelled, for example).
 */
export type CheckoutState = 'open' | 'abandoned' | 'paid' | 'expired' | 'closed';

export interface CheckoutView {
  sessionId: string;
  state: CheckoutState;
  /** The deposit due on this checkout (minor units). */
  amountMinor: number;
  currency: string;
  expiresAt: number;
  completedAt: number | null;
  /** Where it is paid at the provider (Stripe's page); the local provider's is this server's own page. */
  providerUrl: string | null;
  /**
   * Where paying or leaving sends the customer when the booking was made with checkout_success_url or
   * checkout_cancel_url (placeholders substituted): the local page's forms lead there.
   */
  returnUrls: string[];
  organisation: { name: string; slug: string; locale: string };
  /** `active` false: the location no longer takes bookings (its page is Not found). */
  location: { slug: string; name: string; timezone: string; active: boolean };
  /** The booking's own page (/p/manage/{token}), where it is seen, moved or cancelled; null without one. */
  bookingPath: string | null;
  /** Why the deposit is not taken yet (a contact to prove, an offer to claim first), or null. */
  notPayableYet: string | null;
  booking: {
    reference: string;
    /** As of now (lazy expiry applied). */
    status: BookingStatus;
    startsAt: number;
    endsAt: number;
    totalPriceMinor: number;
  };
  services: { name: string; priceMinor: number }[];
}

export interface CheckoutOutcome {
  reference: string;
  locationSlug: string;
  /** Where to send the customer: the configured URL with placeholders substituted, or our default page. */
  redirectUrl: string;
}

/** The page the customer lands on after paying when no checkout_success_url was given. */
export function defaultSuccessPath(sessionId: string): string {
  return `${checkoutPath(sessionId)}/done`;
}

/** The checkout page itself, where a customer who left without paying lands by default. */
export function checkoutPath(sessionId: string): string {
  return `/checkout/${encodeURIComponent(sessionId)}`;
}

/**
 * The configured redirect with `{booking_reference}` and `{location_slug}` substituted (URL-encoded;
 * percent-encoded braces are recognised too), or `fallback` when none was configured.
 */
export function redirectUrl(
  template: string | null | undefined,
  fallback: string,
  values: { reference: string; slug: string },
): string {
  if (!template) return fallback;
  return template
    .replace(/\{booking_reference\}|%7Bbooking_reference%7D/gi, () => encodeURIComponent(values.reference))
    .replace(/\{location_slug\}|%7Blocation_slug%7D/gi, () => encodeURIComponent(values.slug));
}

/**
 * A checkout_success_url or checkout_cancel_url as it is kept and redirected to: serialised as a
 * browser reads it (line breaks and tabs dropped; spaces and other scripts' characters percent-encoded;
 * an international host in punycode), placeholders still recognised (redirectUrl). The URL parser
 * takes the text as given, but a Location header carries Latin-1 only: a success URL in Cyrillic
 * answered the customer who had just paid with a 500.
 */
export function redirectTemplate(url: string | undefined): string | undefined {
  return url === undefined ? undefined : new URL(url).href;
}

/** The checkout with everything its page shows, or 404 not_found. Reads only. */
export async function getCheckout(db: Db, sessionId: string, now: number): Promise<CheckoutView> {
  const row = await findSession(db, sessionId);
  const services = await db
    .selectFrom('booking_services')
    .innerJoin('services', 'services.id', 'booking_services.service_id')
    .select(['services.name', 'booking_services.price_minor'])
    .where('booking_services.organisation_id', '=', row.organisation_id)
    .where('booking_services.booking_id', '=', row.booking_id)
    .orderBy('booking_services.position')
    .execute();
  return {
    sessionId: row.session_id,
    state: stateOf(row, now),
    amountMinor: row.amount_minor,
    currency: row.currency,
    expiresAt: row.expires_at,
    completedAt: row.completed_at,
    providerUrl: row.provider_url ?? null,
    returnUrls: [row.success_url, row.cancel_url].flatMap((url) =>
      url ? [redirectUrl(url, '', valuesOf(row))] : [],
    ),
    organisation: { name: row.organisation_name, slug: row.organisation_slug, locale: row.locale },
    location: {
      slug: row.location_slug,
      name: row.location_name,
      timezone: row.timezone,
      active: Boolean(row.location_active),
    },
    bookingPath: row.page_token ? bookingPagePath(row.page_token) : null,
    notPayableYet: notPayableYet(row.pending_requirements),
    booking: {
      reference: row.reference,
      status: effectiveStatus(bookingClock(row), now),
      startsAt: row.starts_at,
      endsAt: row.ends_at,
      totalPriceMinor: row.total_price_minor,
    },
    services: services.map((s) => ({ name: s.name, priceMinor: s.price_minor })),
  };
}

/**
 * The payment provider confirms the deposit: in one write transaction the booking moves
 * pending_payment -> confirmed (deposit paid, hold cleared), the checkout becomes paid and the event
 * is logged. On Booking Protection's pending_confirmation hold the deposit is one of its steps
 * (booking-requirements.ts settleRequirement: the last one confirms). 404 for an unknown session; 409
 * conflict when it is not payable (already paid, expired with the hold, or the booking no longer awaits it).
 */
export function payDeposit(
  db: Db,
  sessionId: string,
  now: number,
  actor = 'payment:local',
): Promise<CheckoutOutcome> {
  return writeTransaction(db, async (trx) => {
    await takeCheckoutTurn(trx, sessionId);
    // A public booking's deposit is paid once its contact is proven. (The provider's own word, its
    // webhook, is recorded whenever it comes: money taken is never refused; confirmDeposit.)
    const row = await findSession(trx, sessionId);
    const waiting = notPayableYet(row.pending_requirements);
    if (waiting) throw new AppError('conflict', waiting);
    return confirmDeposit(trx, sessionId, now, actor);
  });
}

/**
 * Why a booking's deposit is not taken yet, or null when it may be: a public booking's once its
 * contact is proven; a waitlist offer's once the time is claimed (nothing is taken for a time that
 * may yet be let go or lapse, which would leave the deposit paid on an expired booking). Asked before
 * the checkout page, or Stripe's, is shown, and again as the test mode pays.
 */
function notPayableYet(pendingRequirementsJson: string | null): string | null {
  const pendingRequirements: string[] = JSON.parse(pendingRequirementsJson ?? '[]');
  if (awaitsContactProof({ pendingRequirements })) return AWAITING_PROOF;
  if (pendingRequirements.includes(WAITLIST_CLAIM)) {
    return 'This time is offered, not booked yet: book it on its booking page first, then pay the deposit.';
  }
  return null;
}

/**
 * payDeposit inside the caller's transaction (Stripe's webhook), also keeping the provider's ids of
 * the session and of the payment (what a refund returns).
 */
export async function confirmDeposit(
  trx: Db,
  sessionId: string,
  now: number,
  actor: string,
  refs: { providerRef: string; paymentRef: string | null } | null = null,
): Promise<CheckoutOutcome> {
  const read = await findSession(trx, sessionId);
  // The booking's row first, as the hold sweeper takes it before the booking's checkouts: another
  // instance's sweep expiring this hold meanwhile is waited for and seen (refused as expired below)
  // rather than deadlocked with (it waiting for the checkout this closes, this for the booking).
  await lockBookingRow(trx, read.organisation_id, read.booking_id);
  const row = await findSession(trx, sessionId);
  refuseUnlessPayable(row, now);
  if (refs) {
    await trx
      .updateTable('checkout_sessions')
      .set({ provider_ref: refs.providerRef, payment_ref: refs.paymentRef })
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.session_id)
      .execute();
  }
  if (effectiveStatus(bookingClock(row), now) === 'pending_confirmation') {
    // Booking Protection's hold: the deposit is one of its steps (the last one confirms it); the
    // customer goes back to the booking's page for any other, or to see it confirmed.
    await closeCheckouts(trx, row.organisation_id, row.booking_id, now);
    await settleRequirement(
      trx,
      { organisationId: row.organisation_id, bookingId: row.booking_id },
      'deposit',
      { deposit_status: 'paid' },
      now,
      actor,
    );
    const page = row.page_token ? bookingPagePath(row.page_token) : defaultSuccessPath(row.session_id);
    return outcome(row, redirectUrl(row.success_url, page, valuesOf(row)));
  }
  const moved = transition(bookingClock(row), 'deposit_paid', now);
  if (!moved.ok) throw new AppError('conflict', `This deposit cannot be paid: ${moved.reason}.`);
  // Confirmed only if still as read: on PostgreSQL another instance's sweeper (its clock a little
  // ahead) may have expired the hold since, its slot free for someone else; refused as it is now.
  const written = await updateBookingIn(trx, row.organisation_id, row.booking_id, row.booking_status, {
    status: moved.to,
    updated_at: now,
  });
  if (!written) {
    refuseUnlessPayable(await findSession(trx, sessionId), now);
    throw new AppError('conflict', 'This booking changed meanwhile; try again.');
  }
  await recordDepositPaid(trx, row.organisation_id, row.booking_id, now);
  await logBookingEvent(trx, {
    organisationId: row.organisation_id,
    bookingId: row.booking_id,
    from: moved.from,
    to: moved.to,
    actor,
    at: now,
    details: { deposit_minor: row.amount_minor, currency: row.currency },
  });
  return outcome(row, redirectUrl(row.success_url, defaultSuccessPath(row.session_id), valuesOf(row)));
}

/**
 * Takes the turn of the checkout's booking (write-locks.ts), as a cancellation or a move of it does:
 * on PostgreSQL a payment and a cancellation at once then see each other's outcome, instead of each
 * writing over the other's from what it read before (a cancelled booking confirmed, or a paid deposit
 * neither kept on a live booking nor refunded). Before anything of the booking is read.
 */
export async function takeCheckoutTurn(trx: Db, sessionId: string): Promise<void> {
  const id = sessionId.toLowerCase();
  if (!UUID.test(id)) return;
  const row = await trx
    .selectFrom('checkout_sessions as s')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 's.organisation_id').onRef('b.id', '=', 's.booking_id'),
    )
    .select(['s.organisation_id', 'b.reference'])
    .where('s.id', '=', id)
    .executeTakeFirst();
  if (row) await takeBookingTurn(trx, row.organisation_id, row.reference);
}

/** Whether the checkout can still be paid now (open or left, its booking still awaiting payment). */
export async function checkoutState(db: Db, sessionId: string, now: number): Promise<CheckoutState> {
  return stateOf(await findSession(db, sessionId), now);
}

/**
 * What a paid deposit changes, whoever reports it (the checkout, or staff at the till): the deposit is
 * paid, the booking holds nothing any more (a confirmed booking is not a hold), and its unpaid
 * checkouts are closed as paid. The caller moves the status and logs the event.
 */
export async function recordDepositPaid(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
): Promise<void> {
  await updateBooking(trx, organisationId, bookingId, {
    deposit_status: 'paid',
    hold_expires_at: null,
    updated_at: now,
  });
  await closeCheckouts(trx, organisationId, bookingId, now);
  // Confirmed now: the customer hears so, the unsent link goes, and the reminder is scheduled.
  await announceChange(
    trx,
    organisationId,
    bookingId,
    { kind: 'confirmed', drop: ['payment_link', 'booking_page_link'], remind: true },
    now,
  );
  // The client's waiting entries this booking fills end now it is confirmed, not while it was held.
  await bookEntriesFilledBy(trx, organisationId, bookingId, now);
}

/** The booking's unpaid checkouts are closed as paid (its deposit is). */
async function closeCheckouts(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
): Promise<void> {
  await trx
    .updateTable('checkout_sessions')
    .set({ status: 'paid', completed_at: now })
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', 'in', ['open', 'abandoned'])
    .execute();
}

/**
 * The customer leaves without paying: an open checkout is marked abandoned (again: a no-op). Nothing
 * is released; the booking keeps its hold and the checkout stays payable until the hold lapses. The
 * customer goes back to checkout_cancel_url, or else to the booking's own page.
 * 404 for an unknown session; 409 conflict when it is paid, expired or closed.
 */
export function abandonCheckout(db: Db, sessionId: string, now: number): Promise<CheckoutOutcome> {
  return writeTransaction(db, async (trx) => {
    const row = await findSession(trx, sessionId);
    refuseUnlessPayable(row, now);
    if (row.status === 'open') {
      await trx
        .updateTable('checkout_sessions')
        .set({ status: 'abandoned' })
        .where('organisation_id', '=', row.organisation_id)
        .where('id', '=', row.session_id)
        .where('status', '=', 'open')
        .execute();
    }
    // Without a cancel URL of the caller's, "back" is the booking's own page (the checkout itself
    // only for a booking without one): there it is paid later, moved or cancelled.
    const back = row.page_token ? bookingPagePath(row.page_token) : checkoutPath(row.session_id);
    return outcome(row, redirectUrl(row.cancel_url, back, valuesOf(row)));
  });
}

type SessionRow = Awaited<ReturnType<typeof findSession>>;

async function findSession(db: Db, sessionId: string) {
  // Session ids are UUIDs; anything else cannot be one, so it is not looked up.
  const id = sessionId.toLowerCase();
  const row = UUID.test(id)
    ? await db
        .selectFrom('checkout_sessions as s')
        .innerJoin('bookings as b', (join) =>
          join.onRef('b.organisation_id', '=', 's.organisation_id').onRef('b.id', '=', 's.booking_id'),
        )
        .innerJoin('locations as l', (join) =>
          join.onRef('l.organisation_id', '=', 'b.organisation_id').onRef('l.id', '=', 'b.location_id'),
        )
        .innerJoin('organisations as o', 'o.id', 's.organisation_id')
        .leftJoin('booking_pages as p', (join) =>
          join.onRef('p.organisation_id', '=', 'b.organisation_id').onRef('p.booking_id', '=', 'b.id'),
        )
        .select([
          's.id as session_id',
          's.organisation_id',
          's.booking_id',
          's.status',
          's.amount_minor',
          's.currency',
          's.success_url',
          's.cancel_url',
          's.expires_at',
          's.completed_at',
          's.provider_url',
          'b.reference',
          'b.status as booking_status',
          'b.starts_at',
          'b.ends_at',
          'b.hold_expires_at',
          'b.pending_requirements',
          'b.total_price_minor',
          'l.slug as location_slug',
          'l.name as location_name',
          'l.timezone',
          'l.active as location_active',
          'o.name as organisation_name',
          'o.slug as organisation_slug',
          'o.locale',
          'p.token as page_token',
        ])
        .where('s.id', '=', id)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new AppError('not_found', 'No checkout has this id; check the link you were given.');
  return row;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function stateOf(
  row: {
    status: CheckoutStatus;
    expires_at: number;
    booking_status: BookingStatus;
    starts_at: number;
    hold_expires_at: number | null;
  },
  now: number,
): CheckoutState {
  if (row.status === 'paid') return 'paid';
  if (row.status === 'expired' || row.expires_at <= now) return 'expired';
  const status = effectiveStatus(bookingClock(row), now);
  if (status === 'expired') return 'expired';
  if (status !== 'pending_payment' && status !== 'pending_confirmation') return 'closed';
  return row.status;
}

function refuseUnlessPayable(row: SessionRow, now: number): void {
  const state = stateOf(row, now);
  if (state === 'paid') throw new AppError('conflict', 'This deposit has already been paid.');
  if (state === 'expired') {
    throw new AppError('conflict', 'This checkout has expired: the booking was not paid in time.');
  }
  if (state === 'closed') {
    throw new AppError(
      'conflict',
      `This booking is no longer awaiting payment: it ${whatBecameOf(effectiveStatus(bookingClock(row), now))}.`,
    );
  }
}

function bookingClock(row: {
  booking_status: BookingStatus;
  starts_at: number;
  hold_expires_at: number | null;
}) {
  return { status: row.booking_status, startsAt: row.starts_at, holdExpiresAt: row.hold_expires_at };
}

function valuesOf(row: SessionRow) {
  return { reference: row.reference, slug: row.location_slug };
}

function outcome(row: SessionRow, url: string): CheckoutOutcome {
  return { reference: row.reference, locationSlug: row.location_slug, redirectUrl: url };
}

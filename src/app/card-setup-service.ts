import { randomUUID } from 'node:crypto';
import {
  findBookingById,
  findBookingsOfSeries,
  findSeriesRule,
  updateBooking,
} from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Booking } from '../domain/booking/booking.ts';
import { effectiveStatus, isLive } from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import type { SeriesNote } from '../domain/outbox.ts';
import { AWAITING_PROOF, awaitsContactProof } from '../domain/public-booking-policy.ts';
import { settleRequirement } from './booking-requirements.ts';
import { getBooking } from './booking-service.ts';
import { announceChange } from './outbox-service.ts';
import { providerDeadline } from './payment-calls.ts';
import type { PaymentProvider } from './payments.ts';
import { otherStaffOf } from './series-note.ts';

/**
 * Booking Protection's card setup: the customer saves a card (without being charged) that late
 * cancellation and no-show fees are later charged to off-session. The hosted booking page starts it
 * (`startCardSetup`); the provider reports the saved card (`completeCardSetup`, from Stripe's webhook).
 */

/** How long a card setup of a booking that holds nothing (already confirmed) stays open. */
const UNHELD_SETUP_MS = 24 * 60 * 60_000;

export interface StartedCardSetup {
  setupId: string;
  /** Where the customer enters the card, at the provider. */
  url: string;
}

/**
 * Opens a card setup for a live booking whose location has Booking Protection and whose card is not
 * saved yet: a `card_setups` row and the provider's hosted page. 404 for an unknown reference; 409
 * conflict when there is nothing to set up; 503 payments_unavailable without a provider.
 *
 * The booking's setup already open (a second press, a double click, back from the provider's page
 * unsaved) is handed out again rather than a new one opened: one customer and one page at the provider,
 * as a deposit has its one checkout.
 *
 * The provider is asked before the write transaction, not inside it (a provider across the network
 * holds no writer while it answers: checkouts-opened-first.ts says why), and the booking is checked
 * again inside it; a booking that changed meanwhile leaves a setup nobody was given, which lapses.
 */
export async function startCardSetup(
  db: Db,
  payments: PaymentProvider | null,
  organisationId: string,
  reference: string,
  publicBaseUrl: string,
  now: number,
  urls: { successUrl?: string; cancelUrl?: string } = {},
): Promise<StartedCardSetup> {
  const asked = await getBooking(db, organisationId, reference);
  const provider = requireCardSetupWanted(asked, payments, now);
  const expiresAt = asked.holdExpiresAt ?? now + UNHELD_SETUP_MS;
  const open = await reusableSetup(db, organisationId, asked.id, asked.holdExpiresAt, now);
  if (open) return open;
  const setupId = randomUUID();
  const url = await provider.openCardSetup(
    {
      id: setupId,
      bookingReference: asked.reference,
      currency: asked.currency,
      expiresAt,
      createdAt: now,
      successUrl: urls.successUrl,
      cancelUrl: urls.cancelUrl,
    },
    publicBaseUrl,
    // The customer, then the setup: both within the minute a request waits for the provider.
    providerDeadline(),
  );
  return writeTransaction(db, async (trx) => {
    const booking = await getBooking(trx, organisationId, reference);
    requireCardSetupWanted(booking, payments, now);
    await trx
      .insertInto('card_setups')
      .values({
        id: setupId,
        organisation_id: organisationId,
        booking_id: booking.id,
        status: 'open',
        provider_ref: null,
        provider_url: url,
        customer_ref: null,
        payment_method_ref: null,
        expires_at: expiresAt,
        created_at: now,
        completed_at: null,
      })
      .execute();
    await updateBooking(trx, organisationId, booking.id, {
      protection_setup_status: 'pending',
      updated_at: now,
    });
    return { setupId, url };
  });
}

/**
 * Time a setup handed out again has left at least: the provider's page may close a minute before ours
 * does (Stripe's sessions last under 24 hours), and the customer needs a while to enter the card.
 */
const REUSE_MARGIN_MS = 5 * 60_000;

/**
 * The booking's open setup (the latest), when it can be handed out again: its page is known, it has
 * REUSE_MARGIN_MS left, and, for a held booking, it lasts as long as the hold (a hold extended since
 * outlasts an older setup, which a new one would not). Undefined otherwise.
 */
async function reusableSetup(
  db: Db,
  organisationId: string,
  bookingId: string,
  holdExpiresAt: number | null,
  now: number,
): Promise<StartedCardSetup | undefined> {
  const row = await db
    .selectFrom('card_setups')
    .select(['id', 'provider_url', 'expires_at'])
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'open')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!row?.provider_url || row.expires_at - now < REUSE_MARGIN_MS) return undefined;
  if (holdExpiresAt !== null && row.expires_at < holdExpiresAt) return undefined;
  return { setupId: row.id, url: row.provider_url };
}

/** The provider, when `booking` wants a card saved: else 503 without a provider, or 409 conflict. */
function requireCardSetupWanted(
  booking: Booking,
  payments: PaymentProvider | null,
  now: number,
): PaymentProvider {
  if (!payments) {
    throw new AppError('payments_unavailable', 'No payment provider is set up to save a card online.');
  }
  if (!booking.protection.applies) {
    throw new AppError(
      'conflict',
      'This booking does not need a card: its location has no Booking Protection.',
    );
  }
  if (!isLive(booking, now)) {
    throw new AppError(
      'conflict',
      `A card cannot be saved for this booking: it is ${effectiveStatus(booking, now)}.`,
    );
  }
  if (awaitsContactProof(booking)) throw new AppError('conflict', AWAITING_PROOF);
  if (booking.protection.setupStatus === 'succeeded') {
    throw new AppError('conflict', 'A card is already saved for this booking.');
  }
  return payments;
}

export type CardSetupRow = NonNullable<Awaited<ReturnType<typeof findCardSetup>>>;

/** The card setup with this id (our id, as given to the provider), or undefined. */
export function findCardSetup(trx: Db, setupId: string) {
  return trx.selectFrom('card_setups').selectAll().where('id', '=', setupId).executeTakeFirst();
}

/** What a saved card writes on a booking it protects. */
function cardSavedChanges(now: number) {
  return {
    protection_setup_status: 'succeeded',
    payment_method_saved: 1,
    protection_setup_completed_at: now,
  } as const;
}

/**
 * The provider saved the card: inside the caller's transaction the setup succeeds, the booking's
 * card is saved (payment_method_saved, setup status succeeded) and its protection_setup step is settled
 * (booking-requirements.ts: the last step confirms the hold). A visit of a series saves the card of
 * every other visit still waiting for one (saveCardForSeries). Applying it again changes nothing.
 */
export async function completeCardSetup(
  trx: Db,
  setup: CardSetupRow,
  saved: { customerRef: string; paymentMethodRef: string; providerRef: string | null },
  now: number,
  actor: string,
): Promise<void> {
  if (setup.status === 'succeeded') return;
  await trx
    .updateTable('card_setups')
    .set({
      status: 'succeeded',
      customer_ref: saved.customerRef,
      payment_method_ref: saved.paymentMethodRef,
      provider_ref: saved.providerRef,
      completed_at: now,
    })
    .where('organisation_id', '=', setup.organisation_id)
    .where('id', '=', setup.id)
    .execute();
  const teller = await seriesConfirmation(trx, setup, now);
  const telling = (bookingId: string) =>
    teller === undefined
      ? {}
      : {
          silent: bookingId !== teller.bookingId,
          series: bookingId === teller.bookingId ? teller.note : undefined,
        };
  await settleRequirement(
    trx,
    { organisationId: setup.organisation_id, bookingId: setup.booking_id },
    'protection_setup',
    cardSavedChanges(now),
    now,
    actor,
    telling(setup.booking_id),
  );
  await saveCardForSeries(trx, setup, saved, telling, now, actor);
}

/** The visits of a series one card confirms: held for the same client, the card their last step. */
function confirmedByTheCard(visit: Booking, clientId: string, now: number): boolean {
  return (
    visit.clientId === clientId &&
    visit.pendingRequirements.length === 1 &&
    visit.pendingRequirements[0] === 'protection_setup' &&
    effectiveStatus(visit, now) === 'pending_confirmation'
  );
}

/**
 * Which visit tells the customer that the card confirmed their series, and what it says: the earliest
 * visit the card confirms, naming the others ("Also booked: the 2 visits after it, …"); undefined for
 * a booking of no series (it tells its own confirmation, as any booking does).
 */
async function seriesConfirmation(
  trx: Db,
  setup: CardSetupRow,
  now: number,
): Promise<{ bookingId: string; note: SeriesNote } | undefined> {
  const booking = await findBookingById(trx, setup.organisation_id, setup.booking_id);
  if (!booking?.seriesId) return undefined;
  const confirmed = (await findBookingsOfSeries(trx, setup.organisation_id, booking.seriesId)).filter(
    (visit) => confirmedByTheCard(visit, booking.clientId, now),
  );
  const [first, ...rest] = confirmed;
  if (!first) return undefined;
  const rule = await findSeriesRule(trx, setup.organisation_id, booking.seriesId);
  const otherStaff = await otherStaffOf(trx, setup.organisation_id, first.staffId, rest);
  return {
    bookingId: first.id,
    note: {
      following: rest.length,
      everyWeeks: rule?.everyWeeks,
      lastStartsAt: rest.at(-1)?.startsAt,
      otherStaff,
    },
  };
}

/**
 * A customer saves one card for a series (design.md 9.5), not one per visit within each hold's
 * minutes: the card saved on one visit is saved (a succeeded card_setups row of its own, which fees
 * are charged to) on every other visit of the series held for the same client and still waiting for
 * it, whose step is settled: confirmed when it was the last, with its reminder and webhook event, but
 * one confirmation message for the series (`telling`: seriesConfirmation's); a visit with a step left
 * (a deposit) gets its page's link, as contact-proof.ts proveLaterVisits does.
 */
async function saveCardForSeries(
  trx: Db,
  setup: CardSetupRow,
  saved: { customerRef: string; paymentMethodRef: string },
  telling: (bookingId: string) => { silent?: boolean; series?: SeriesNote | undefined },
  now: number,
  actor: string,
): Promise<void> {
  const organisationId = setup.organisation_id;
  const booking = await findBookingById(trx, organisationId, setup.booking_id);
  if (!booking?.seriesId) return;
  for (const visit of await findBookingsOfSeries(trx, organisationId, booking.seriesId)) {
    if (visit.id === booking.id || visit.clientId !== booking.clientId) continue;
    if (!visit.pendingRequirements.includes('protection_setup')) continue;
    if (effectiveStatus(visit, now) !== 'pending_confirmation') continue;
    await trx
      .insertInto('card_setups')
      .values({
        id: randomUUID(),
        organisation_id: organisationId,
        booking_id: visit.id,
        status: 'succeeded',
        provider_ref: null,
        provider_url: null,
        customer_ref: saved.customerRef,
        payment_method_ref: saved.paymentMethodRef,
        expires_at: now,
        created_at: now,
        completed_at: now,
      })
      .execute();
    const target = { organisationId, bookingId: visit.id };
    const settled = await settleRequirement(
      trx,
      target,
      'protection_setup',
      cardSavedChanges(now),
      now,
      actor,
      telling(visit.id),
    );
    // A step left (a deposit): the visit's own page link, for what it still needs.
    if (settled === 'outstanding') {
      await announceChange(
        trx,
        organisationId,
        visit.id,
        { kind: 'booking_page_link', drop: ['booking_page_link'], remind: false },
        now,
      );
    }
  }
}

/** The provider says the setup page expired unused: it can no longer save a card. */
export async function expireCardSetup(trx: Db, setup: CardSetupRow, now: number): Promise<void> {
  await trx
    .updateTable('card_setups')
    .set({ status: 'expired', completed_at: now })
    .where('organisation_id', '=', setup.organisation_id)
    .where('id', '=', setup.id)
    .where('status', '=', 'open')
    .execute();
}

/** The card saved for a booking through its provider's card setup (the latest), if any. */
export async function savedCard(
  trx: Db,
  organisationId: string,
  bookingId: string,
): Promise<{ customerRef: string; paymentMethodRef: string } | undefined> {
  const row = await trx
    .selectFrom('card_setups')
    .select(['customer_ref', 'payment_method_ref'])
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'succeeded')
    .orderBy('completed_at', 'desc')
    .executeTakeFirst();
  if (!row?.customer_ref || !row.payment_method_ref) return undefined;
  return { customerRef: row.customer_ref, paymentMethodRef: row.payment_method_ref };
}

/** The customer and payment method a card saved in the local test mode is written with: no card at all. */
export const TEST_MODE_CARD = 'local';

/**
 * The local test mode's card setup page was submitted: the setup succeeds without any card (the saved
 * "card" is the test mode's, which charges nothing). 404 for an unknown setup; 409 when it is no
 * longer open. Answers the booking's page token (where the customer returns), if it has a page.
 */
export function saveCardInTestMode(
  db: Db,
  setupId: string,
  now: number,
): Promise<{ reference: string; pageToken: string | null }> {
  return writeTransaction(db, async (trx) => {
    const setup = await requireOpenSetup(trx, setupId, now);
    await completeCardSetup(
      trx,
      setup,
      { customerRef: TEST_MODE_CARD, paymentMethodRef: TEST_MODE_CARD, providerRef: null },
      now,
      'payment:local',
    );
    // The booking's page, if it has one, is where the customer goes back to.
    return pageOfSetup(trx, setup);
  });
}

/**
 * The local test mode's card setup page is opened: the open setup's booking reference and page token
 * (the way back without saving), if it has a page. 404 for an unknown setup; 409 once it is not open.
 */
export async function openSetupInTestMode(
  db: Db,
  setupId: string,
  now: number,
): Promise<{ reference: string; pageToken: string | null }> {
  return pageOfSetup(db, await requireOpenSetup(db, setupId, now));
}

/** The setup's booking reference and the token of its page (null for a booking without one). */
async function pageOfSetup(
  db: Db,
  setup: CardSetupRow,
): Promise<{ reference: string; pageToken: string | null }> {
  const booking = await db
    .selectFrom('bookings as b')
    .leftJoin('booking_pages as p', (join) =>
      join.onRef('p.organisation_id', '=', 'b.organisation_id').onRef('p.booking_id', '=', 'b.id'),
    )
    .select(['b.reference', 'p.token'])
    .where('b.organisation_id', '=', setup.organisation_id)
    .where('b.id', '=', setup.booking_id)
    .executeTakeFirstOrThrow();
  return { reference: booking.reference, pageToken: booking.token };
}

/** The card setup with this id while it can still save a card: else 404, or 409 once it is not open. */
export async function requireOpenSetup(db: Db, setupId: string, now: number): Promise<CardSetupRow> {
  const setup = UUID.test(setupId) ? await findCardSetup(db, setupId.toLowerCase()) : undefined;
  if (!setup) throw new AppError('not_found', 'No card setup has this id; check the link you were given.');
  if (setup.status !== 'open' || setup.expires_at <= now) {
    throw new AppError('conflict', 'This card setup is no longer open; ask for a new link.');
  }
  return setup;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

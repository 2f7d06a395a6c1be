import { randomUUID } from 'node:crypto';
import {
  eventRow,
  findBookingByReference,
  findBookingsOfClient,
  findVisitsOfClient,
  insertNewBooking,
  isOverlapRefusal,
  toBooking,
} from '../data/booking-repository.ts';
import { findClientById } from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import { expireHolds, lapsedHoldsIn } from '../data/hold-expiry.ts';
import { findLocationById } from '../data/location-repository.ts';
import type { BookingServicesTable, BookingsTable, IdempotencyRecordsTable } from '../data/tables.ts';
import { endWaitlistEntry } from '../data/waitlist-repository.ts';
import { bookingsAt } from '../data/write-locks.ts';
import { SLOT_UNAVAILABLE } from '../domain/availability/start-refusal.ts';
import { type Booking, type CreatedBooking, NOTES_MAX_LENGTH } from '../domain/booking/booking.ts';
import { bookingHold, claimedHold } from '../domain/booking/holds.ts';
import { withSeriesHorizon } from '../domain/booking/series.ts';
import { effectiveStatus, holdEnd, LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import { type Usual, usualOf } from '../domain/booking/usual.ts';
import { AppError, refusalError } from '../domain/errors.ts';
import type { SeriesNote } from '../domain/outbox.ts';
import { CONTACT_VERIFICATION } from '../domain/public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../domain/waitlist.ts';
import { prepareSlotCheck } from './availability-service.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { bookingPageUrl, newBookingPage, providerReturnUrl } from './booking-page-token.ts';
import { canonicalReference, generateReference } from './booking-reference.ts';
import { redirectUrl } from './checkout-service.ts';
import type { CheckoutAsk, CheckoutOpener } from './checkouts-opened-first.ts';
import { type PublicContact, publicContactRows } from './contact-proof.ts';
import { requireLocation } from './directory-service.ts';
import { checkFreeText } from './free-text.ts';
import type { DeferredRecordRead } from './idempotency.ts';
import { messagesOf, newBookingAnnouncement } from './outbox-service.ts';
import type { PaymentProvider } from './payments.ts';
import { explainNoSlot } from './start-check.ts';
import { textedCountriesOf } from './texted-countries.ts';
import { timeOrderedId } from './time-ordered-id.ts';
import { entriesFilledBy } from './waitlist/entry-view.ts';
import { publishCreatedBooking, subscribed } from './webhooks/events.ts';

/** Who is booking: the organisation (from the API key) and how the event log names them. */
export interface Caller {
  organisationId: string;
  currency: string;
  referencePrefix: string;
  /** e.g. `api_key:<id>`. */
  actor: string;
  source: BookingsTable['source'];
  /**
   * The organisation's catalogue_version as the caller read it before anything else (a request's key
   * lookup): the booking's catalogue reads are then reused while it stays (readCatalogue). Absent:
   * they are read afresh.
   */
  catalogueVersion?: number;
}

export interface NewBooking {
  locationSlug: string;
  serviceIds: string[];
  staffId?: string | undefined;
  clientId: string;
  startsAt: number;
  notes?: string | undefined;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
  /** The series this booking is an occurrence of (booking-series.ts). */
  seriesId?: string | undefined;
  /**
   * A later occurrence of a series: a confirmed booking gets its reminder but no confirmation of its
   * own; the series' first occurrence sends that.
   */
  confirmedWithSeries?: boolean | undefined;
  /** The first occurrence of a new series: its confirmation names the later visits booked with it. */
  seriesNote?: SeriesNote | undefined;
  /** Days beyond the location's max_advance_days this booking may lie (a later occurrence of a series). */
  extraAdvanceDays?: number | undefined;
}

export interface CheckoutContext {
  /** Who takes deposits; null: nobody, and a booking that needs one is refused. */
  payments: PaymentProvider | null;
  /**
   * Where `payments` calls across the network: the checkouts opened before the transaction, given by
   * withCheckoutsOpenedFirst (checkouts-opened-first.ts), whose work must end with its endOfWork.
   */
  opener?: CheckoutOpener | undefined;
  /**
   * Scheme, host and port the customer reaches this server at, for payment_url. null: none is known
   * (`booking mcp` without PUBLIC_BASE_URL), so no link could be given, and a booking the customer
   * must finish through one (a deposit, Booking Protection) is refused.
   */
  publicBaseUrl: string | null;
  /**
   * The caller hands the customer the hosted booking page (MCP `book`, the public page): at a location
   * with Booking Protection the booking becomes a pending_confirmation hold the customer finishes
   * there. Without it (REST POST /v1/bookings) such a location answers 409 booking_protection_required.
   */
  hostedFlow?: boolean;
  /**
   * Only Booking Protection's hold is wanted (REST POST /v1/bookings/protected-holds, what MCP `book`
   * uses over `booking mcp --base-url`): it is made as with hostedFlow, and a location without
   * protection answers 409 conflict (param location_slug), since POST /v1/bookings books there.
   */
  protectedHoldOnly?: boolean;
  /**
   * A booking made on the public page (no key): the contact it gave, written with it for the caps
   * (contact-proof.ts), and whether that contact must be proven first (`policies.public_verification`
   * code): the booking is then a pending_confirmation hold whose first requirement is
   * contact_verification, and its only message is the code, sent to that contact alone.
   */
  publicContact?: { contact: PublicContact; askProof: boolean } | undefined;
  /**
   * The waitlist worker offers a freed time (design.md 9.4): the booking is a pending_confirmation
   * hold whose first step is the customer's claim on the booking page, held for the location's
   * waitlist_offer_minutes; a deposit or Booking Protection's card are the steps after it.
   */
  waitlistOffer?: boolean;
  /**
   * A later visit of a series booked on the public page whose contact must be proven: it waits for
   * the proof of the series' first visit (its code goes with that one), and sends nothing itself.
   */
  awaitsSeriesProof?: boolean;
}

/**
 * What a booking made with `checkout` is held for first, beyond its location's and services' terms:
 * its contact's proof (a public booking under `public_verification: code`, or a later visit of such a
 * series), or a waitlist offer's claim.
 */
export function heldFirstFor(checkout: CheckoutContext): { proofFirst: boolean; offer: boolean } {
  return {
    proofFirst: checkout.publicContact?.askProof === true || checkout.awaitsSeriesProof === true,
    offer: checkout.waitlistOffer === true,
  };
}

/**
 * The provider's URL of a deposit's checkout: opened here by a provider on this server; by one across
 * the network, opened before the transaction (undefined: asked for, and this run writes nothing).
 */
async function openedCheckout(
  payments: PaymentProvider,
  opener: CheckoutOpener | undefined,
  ask: CheckoutAsk,
): Promise<string | undefined> {
  if (!payments.remote) return payments.openCheckout(ask.session, ask.publicBaseUrl);
  if (!opener) {
    throw new Error(
      `${payments.name} is called outside write transactions: book through withCheckoutsOpenedFirst.`,
    );
  }
  return opener.take(ask);
}

/** The booking's client, or 404 not_found (param client_id) when there is none. */
function requireClient<T>(client: T | undefined): T {
  if (!client) throw new AppError('not_found', 'No client has this id.', 'client_id');
  return client;
}

/**
 * Books a slot, inside the caller's write transaction: the slot is re-checked with the same engine
 * that offered it, its bookings read under the location's turn, then written; the database's overlap trigger is the last
 * guard. No deposit: confirmed. A deposit: pending_payment with a hosted checkout of the configured
 * payment provider, held for the location's pending_payment_hold_minutes; with no provider, 503
 * payments_unavailable before anything is written.
 */
export async function createBooking(
  trx: Db,
  caller: Caller,
  input: NewBooking,
  now: number,
  checkout: CheckoutContext,
  options: {
    /**
     * The idempotency record of the answer to `created` (ResponseRecord.rowFor), written in the
     * booking's own write statement when nothing written after it changes the answer (no deposit, so
     * no checkout): a round trip fewer on PostgreSQL. createBooking then returns that same `created`.
     */
    recordWith?: (created: CreatedBooking) => IdempotencyRecordsTable | undefined;
    /**
     * The caller runs nothing more in its transaction, and takes its answer's record from recordWith
     * (which must be given). The last write then carries the COMMIT on PostgreSQL (insertNewBooking's
     * `lastStatement`): the booking's, or its booking.created event's where an endpoint subscribes to
     * it; none where a deposit is due (its checkout is written after the booking, as is its record).
     */
    lastStatement?: boolean;
    /**
     * An idempotency key's record, read with the staff's bookings once the key's turn and then the
     * location's are granted (see SlotCheckReads): a round trip fewer on PostgreSQL. Nothing is
     * written before it is read; a record found ends the work (DeferredRecordRead.settle).
     */
    keyRecord?: DeferredRecordRead;
  } = {},
): Promise<CreatedBooking> {
  checkFreeText(input.notes, NOTES_MAX_LENGTH, 'notes');
  const location = withSeriesHorizon(
    await requireLocation(
      trx,
      caller.organisationId,
      input.locationSlug,
      'location_slug',
      caller.catalogueVersion,
    ),
    input.extraAdvanceDays ?? 0,
  );
  const protectedHold = location.protection.applies;
  if (!protectedHold && checkout.protectedHoldOnly) {
    throw new AppError(
      'conflict',
      'Booking Protection does not apply at this location, so there is no hold to make: book it with POST /v1/bookings.',
      'location_slug',
    );
  }
  if (protectedHold && !checkout.hostedFlow && !checkout.protectedHoldOnly) {
    throw new AppError(
      'booking_protection_required',
      'Bookings at this location need Booking Protection and are taken only through its hosted booking page.',
    );
  }
  // A public booking whose contact must be proven first is held for that, proof first, and a waitlist
  // offer for its claim: the slot must leave that hold time before it starts too (holdNotice).
  const heldFor = heldFirstFor(checkout);
  const request = { location, serviceIds: input.serviceIds, staffId: input.staffId, heldFor };
  // The client is read with the staff's bookings (one statement on PostgreSQL: a round trip fewer),
  // after what may refuse the booking before them; a refusal found there is said only of a client that
  // exists, so an unknown client is still the first thing said (as when the client was read first).
  const prepare = async () => {
    const check = await prepareSlotCheck(
      trx,
      caller.organisationId,
      request,
      input.startsAt,
      now,
      caller.catalogueVersion,
    ).catch(async (error: unknown) => {
      // "Not offered here" may really be "no such service": that is a 404, asked only on this path.
      if (error instanceof AppError && error.param === 'service_ids') {
        await requireExistingServices(trx, caller.organisationId, input.serviceIds);
      }
      throw error;
    });
    const depositMinor = check.services.reduce((total, s) => total + (s.depositMinor ?? 0), 0) || null;
    if (depositMinor && !checkout.payments) {
      throw new AppError(
        'payments_unavailable',
        'This booking needs a deposit, and no payment provider is set up to take it online; book it with the location directly.',
      );
    }
    if (protectedHold && !checkout.payments) {
      throw new AppError(
        'payments_unavailable',
        'Bookings at this location need a card saved for Booking Protection, and no payment provider is set up to take one; book it with the location directly.',
      );
    }
    const linksBase = checkout.publicBaseUrl;
    if ((depositMinor || protectedHold) && linksBase === null) {
      throw new AppError(
        'payments_unavailable',
        `This booking is finished by the customer through a link (${depositMinor ? 'to pay its deposit' : 'to save a card for Booking Protection'}), and links are unavailable here: booking mcp has no PUBLIC_BASE_URL, the address booking serve prints (see mcp.json); book it with the location directly.`,
      );
    }
    return { check, depositMinor, linksBase };
  };
  const { check, depositMinor, linksBase } = await prepare().catch(async (error: unknown) => {
    if (error instanceof AppError)
      requireClient(await findClientById(trx, caller.organisationId, input.clientId));
    throw error;
  });
  // Nothing read above is what the location's turn guards (the catalogue); from here the
  // location's bookings are decided one at a time (on PostgreSQL; SQLite has one writer already), so
  // the turn is held for as few queries as can be: it is taken by the read of the staff's bookings.
  const { services } = check;
  const { offer } = heldFor;
  const slot = await check.slot(trx, {
    turn: bookingsAt(location.id),
    clientId: input.clientId,
    keyRecord: options.keyRecord,
    // The client's waiting entries here, read with the bookings: one this booking fits ends with it. An
    // offer is the waitlist's own booking, which ends its entry once claimed (offer-outcomes.ts).
    ...(!offer && { waitingAt: location.id }),
  });
  const client = requireClient(check.readClient());
  if (!slot) {
    throw refusalError(await explainNoSlot(trx, caller.organisationId, request, input.startsAt, now));
  }

  const id = timeOrderedId();
  // Booking Protection: a hold the customer finishes on the booking page (card setup, and the deposit
  // when one is due), for pending_confirmation_hold_minutes. Otherwise a deposit holds the slot until paid.
  // A public booking whose contact must be proven first holds the slot the same way, proof first.
  const awaitsSeriesProof = checkout.awaitsSeriesProof === true;
  const { proofFirst } = heldFor;
  const steps = [
    ...(proofFirst ? [CONTACT_VERIFICATION] : []),
    ...(offer ? [WAITLIST_CLAIM] : []),
    ...(protectedHold ? ['protection_setup'] : []),
    ...(depositMinor && (protectedHold || proofFirst || offer) ? ['deposit'] : []),
  ];
  const requirements = steps.length > 0 ? steps : null;
  const status = requirements ? 'pending_confirmation' : depositMinor ? 'pending_payment' : 'confirmed';
  const terms = { protection: protectedHold, deposit: depositMinor !== null, proofFirst, offer };
  const hold = bookingHold(location.policy, terms);
  // Never past the start: a hold lapses when its appointment begins, whatever its minutes.
  const holdExpiresAt = hold === null ? null : holdEnd(now, hold.minutes, slot.startsAt);
  // A waitlist offer's deposit is paid only once the time is claimed, and the claim holds it afresh
  // for its steps (claims.ts): its checkout stays payable that long past the offer's last minute.
  const claimed = offer ? claimedHold(location.policy, terms) : null;
  const checkoutUntil =
    holdExpiresAt !== null && claimed
      ? holdEnd(now, location.policy.waitlistOfferMinutes + claimed.minutes, slot.startsAt)
      : holdExpiresAt;
  const last = services[services.length - 1]!;
  const blockedUntil = slot.endsAt + last.bufferAfterMinutes * 60_000;
  const newRow = (reference: string): BookingsTable => ({
    id,
    organisation_id: caller.organisationId,
    reference,
    location_id: location.id,
    staff_id: slot.staffId,
    client_id: input.clientId,
    status,
    starts_at: slot.startsAt,
    ends_at: slot.endsAt,
    blocked_until: blockedUntil,
    currency: caller.currency,
    total_price_minor: services.reduce((total, s) => total + s.priceMinor, 0),
    deposit_minor: depositMinor,
    deposit_status: depositMinor ? 'pending' : 'not_required',
    notes: input.notes ?? null,
    hold_expires_at: holdExpiresAt,
    pending_requirements: requirements && JSON.stringify(requirements),
    protection_applies: protectedHold ? 1 : 0,
    late_cancellation_fee_percentage: protectedHold
      ? location.protection.late_cancellation_fee_percentage
      : null,
    no_show_fee_percentage: protectedHold ? location.protection.no_show_fee_percentage : null,
    protection_setup_status: protectedHold ? 'pending' : null,
    payment_method_saved: 0,
    protection_setup_completed_at: null,
    cancelled_at: null,
    cancel_reason: null,
    deposit_refunded: null,
    source: caller.source,
    series_id: input.seriesId ?? null,
    created_at: now,
    updated_at: now,
  });
  let start = slot.startsAt;
  const segments: BookingServicesTable[] = services.map((service, position) => {
    const segment = {
      organisation_id: caller.organisationId,
      booking_id: id,
      position,
      service_id: service.id,
      starts_at: start,
      ends_at: start + service.durationMinutes * 60_000,
      duration_minutes: service.durationMinutes,
      buffer_after_minutes: service.bufferAfterMinutes,
      price_minor: service.priceMinor,
      deposit_minor: service.depositMinor,
    };
    start = segment.ends_at;
    return segment;
  });
  // Lapsed holds in the block are written expired first (the exclusion constraint cannot read the
  // clock); they are among the bookings the slot check just read, under the turn.
  const block = { staffId: slot.staffId, from: slot.startsAt, to: blockedUntil };
  await expireHolds(
    trx,
    lapsedHoldsIn(check.readHolds(), block, now),
    now,
    'system:lazy-expiry',
    logBookingEvent,
  );
  // A deposit's checkout opened before this run (checkouts-opened-first.ts) names the booking's
  // reference and page: they are kept.
  const opensCheckout = depositMinor !== null && checkoutUntil !== null && linksBase !== null;
  const planned = opensCheckout ? checkout.opener?.planned() : undefined;
  const page = newBookingPage(caller.organisationId, id, now, planned?.pageToken);
  const pageToken = page.token;
  const event = eventRow(
    {
      organisationId: caller.organisationId,
      bookingId: id,
      from: null,
      to: status,
      actor: caller.actor,
      at: now,
    },
    1,
  );
  // The booking, its segments, first event, page and messages: one statement on PostgreSQL. A
  // reference is drawn at random and the unique index decides; the rare one taken already (nothing
  // written) is drawn again.
  const textedCountries = await textedCountriesOf(trx, caller.organisationId, caller.catalogueVersion);
  // The COMMIT goes with the last write when the caller runs nothing after, and the answer's record (if
  // any) goes with the writes: not with a deposit, whose checkout is written after the booking.
  // A waitlist entry this booking gives what it waits for ends as booked (design.md 9.4), so no offer
  // follows for a time the client no longer needs; it is written after the booking (the order every
  // change to both keeps), so the COMMIT cannot go with the booking's writes then.
  // Only a confirmed booking: a hold (a deposit, a card, a code to come) may lapse, and the client
  // would have lost their place for nothing (as an offer claimed but not paid keeps its entry).
  const bookedServiceIds = services.map((s) => s.id);
  const waiting = status === 'confirmed' ? check.readWaiting() : [];
  const endedEntries = entriesFilledBy(
    waiting,
    { serviceIds: bookedServiceIds, staffId: slot.staffId, startsAt: slot.startsAt },
    location.timezone,
  );
  const commitWithWrites =
    options.lastStatement === true &&
    options.recordWith !== undefined &&
    !depositMinor &&
    endedEntries.length === 0;
  // Which write is last: the booking's, or its booking.created event's. (Asked only then: a caller
  // without a catalogue version would read the subscriptions twice, here and in publishing. The one
  // caller that asks for lastStatement, createBookingIdempotently, has the key's.)
  const eventAfterBooking =
    !commitWithWrites ||
    (await subscribed(trx, caller.organisationId, 'booking.created', caller.catalogueVersion));
  let row: BookingsTable;
  let messages: ReturnType<typeof messagesOf>;
  let proof: ReturnType<typeof publicContactRows>['proof'] | undefined;
  // Built before the write when the answer is known by then (no deposit: no checkout after it).
  let answered: CreatedBooking | undefined;
  let idempotency: IdempotencyRecordsTable | undefined;
  let plannedReference = planned?.session.bookingReference;
  do {
    row = newRow(plannedReference ?? generateReference(caller.referencePrefix));
    plannedReference = undefined;
    const target = { organisationId: caller.organisationId, bookingId: id, reference: row.reference };
    const contact =
      checkout.publicContact &&
      publicContactRows(target, checkout.publicContact.contact, proofFirst, now, input.seriesNote);
    proof = contact?.proof;
    messages = contact?.message
      ? { rows: [contact.message], notices: [] }
      : messagesOf(
          { ...target, client, textedCountries },
          {
            ...newBookingAnnouncement(status, row.starts_at, location.policy.reminderHoursBefore),
            silent: input.confirmedWithSeries === true && status === 'confirmed',
            series: status === 'confirmed' ? input.seriesNote : undefined,
          },
          now,
        );
    // A later visit of a public series waits, silent, for the contact its first visit proves.
    if (awaitsSeriesProof) messages = { rows: [], notices: [] };
    if (options.recordWith && !depositMinor) {
      answered = {
        booking: createdBookingOf(row, location, pageToken, input.serviceIds, null),
        deposit: null,
        paymentUrl: null,
        notices: messages.notices,
      };
      idempotency = options.recordWith(answered);
    }
  } while (
    !(await whileSlotFree(
      insertNewBooking(
        trx,
        {
          booking: row,
          segments,
          event,
          page,
          outbox: messages.rows,
          proof,
          idempotency,
        },
        { lastStatement: commitWithWrites && !eventAfterBooking },
      ),
    ))
  );
  const { reference } = row;
  for (const entry of endedEntries) {
    await endWaitlistEntry(trx, caller.organisationId, entry.id, { status: 'booked', bookingId: id }, now);
  }

  let paymentUrl: string | null = null;
  let sessionId: string | null = null;
  if (opensCheckout && checkout.payments) {
    sessionId = planned?.session.id ?? randomUUID();
    const values = { reference, slug: location.slug };
    // A protected hold's deposit is one of its steps: the customer goes back to the booking's page.
    const successUrl = input.successUrl
      ? redirectUrl(input.successUrl, '', values)
      : status === 'pending_confirmation'
        ? providerReturnUrl(linksBase, pageToken)
        : undefined;
    const session = {
      id: sessionId,
      bookingReference: reference,
      amountMinor: depositMinor,
      currency: caller.currency,
      expiresAt: checkoutUntil,
      createdAt: now,
      successUrl,
      // The contract's default: the booking's page, which offers to pay again or to cancel (the
      // checkout link would hand the customer straight back to the provider's page).
      cancelUrl: input.cancelUrl
        ? redirectUrl(input.cancelUrl, '', values)
        : bookingPageUrl(linksBase, pageToken),
    };
    // The provider's own page (Stripe's) is kept; the customer is given this server's stable link to it.
    const providerUrl = await openedCheckout(checkout.payments, checkout.opener, {
      session,
      publicBaseUrl: linksBase,
      pageToken,
    });
    if (providerUrl !== undefined) {
      await trx
        .insertInto('checkout_sessions')
        .values({
          id: sessionId,
          organisation_id: caller.organisationId,
          booking_id: id,
          status: 'open',
          amount_minor: depositMinor,
          currency: caller.currency,
          success_url: input.successUrl ?? null,
          cancel_url: input.cancelUrl ?? null,
          expires_at: checkoutUntil,
          created_at: now,
          completed_at: null,
          provider_url: providerUrl,
        })
        .execute();
    }
    paymentUrl = checkout.payments.checkoutUrl(sessionId, linksBase);
  }
  const { notices } = messages;
  // Built from what was just written: reading it back would cost three queries on the hot path.
  const booking =
    answered?.booking ?? createdBookingOf(row, location, pageToken, input.serviceIds, sessionId);
  // (Skipped only where nobody subscribes: publishing would write nothing.)
  if (eventAfterBooking) {
    await publishCreatedBooking(trx, caller.organisationId, booking, now, {
      catalogueVersion: caller.catalogueVersion,
      lastStatement: commitWithWrites,
    });
  }
  return (
    answered ?? {
      booking,
      deposit: depositMinor ? { amount: depositMinor, currency: caller.currency } : null,
      paymentUrl,
      notices,
    }
  );
}

/** The booking as written, from its row: reading it back would cost three queries on the hot path. */
function createdBookingOf(
  row: BookingsTable,
  location: { slug: string; timezone: string },
  pageToken: string,
  serviceIds: string[],
  sessionId: string | null,
): Booking {
  return toBooking(
    { ...row, location_slug: location.slug, timezone: location.timezone, page_token: pageToken },
    serviceIds,
    [],
    sessionId,
  );
}

/**
 * slot_unavailable as the database's overlap guard answered it: on PostgreSQL that error has ended the
 * transaction, so a caller that asks more in it (a series listing its clashes) must stop at once.
 */
export class SlotTakenMeanwhile extends AppError {
  constructor() {
    const { reason, message, param } = SLOT_UNAVAILABLE;
    super('conflict', message, param, { reason });
  }
}

/**
 * A write that takes a slot, after the availability re-check saw it free: only a guard in the
 * database can still disagree (a concurrent instance's booking, see takeTurn), and its refusal means
 * the slot was taken meanwhile.
 */
export async function whileSlotFree<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw isOverlapRefusal(error) ? new SlotTakenMeanwhile() : error;
  }
}

/** The booking with this reference (as a caller may say it: see readReference), or 404. */
export async function getBooking(db: Db, organisationId: string, reference: string): Promise<Booking> {
  const booking = await findBookingByReference(
    db,
    organisationId,
    await canonicalReference(db, organisationId, reference),
  );
  if (!booking) throw new AppError('not_found', 'No booking has this reference.', 'reference');
  return booking;
}

/** How many upcoming bookings of one client are listed: a caller has a few, not hundreds. */
export const UPCOMING_BOOKINGS_LIMIT = 20;

/**
 * The client's live bookings that have not started yet, soonest first: how a receptionist finds "my
 * appointment" for a caller who does not know its reference. 404 for an unknown client.
 */
export async function listUpcomingBookings(
  db: Db,
  organisationId: string,
  clientId: string,
  now: number,
): Promise<Booking[]> {
  if (!(await findClientById(db, organisationId, clientId))) {
    throw new AppError('not_found', 'No client has this id.', 'client_id');
  }
  const bookings = await findBookingsOfClient(db, organisationId, clientId, {
    statuses: LIVE_STATUSES,
    from: now,
    limit: UPCOMING_BOOKINGS_LIMIT,
    // Left out in the query, so that the list is full when more live bookings follow.
    liveAt: now,
  });
  // A hold that has lapsed is expired already, whether or not the sweeper has written it down.
  return bookings.filter((b) => LIVE_STATUSES.includes(effectiveStatus(b, now)));
}

/**
 * The client's live booking at this location starting at this instant, if any: a caller booking a
 * time they already hold (a retry worded differently, another stylist named) is answered with it.
 */
export async function findLiveBookingAt(
  db: Db,
  organisationId: string,
  ask: { clientId: string; locationSlug: string; startsAt: number },
  now: number,
): Promise<Booking | undefined> {
  const bookings = await findBookingsOfClient(db, organisationId, ask.clientId, {
    statuses: LIVE_STATUSES,
    at: ask.startsAt,
    limit: UPCOMING_BOOKINGS_LIMIT,
  });
  return bookings.find(
    (b) => b.locationSlug === ask.locationSlug && LIVE_STATUSES.includes(effectiveStatus(b, now)),
  );
}

/** How many of a client's latest visits their usual is read from. */
const VISITS_READ_FOR_USUAL = 12;

/** The client's usual (last service, stylist, interval), or null for one who never came nor booked; 404 for an unknown client. */
export async function getClientUsual(
  db: Db,
  organisationId: string,
  clientId: string,
  now: number,
): Promise<(Usual & { locationSlug: string; timezone: string }) | null> {
  if (!(await findClientById(db, organisationId, clientId))) {
    throw new AppError('not_found', 'No client has this id.', 'client_id');
  }
  const usual = usualOf(
    await findVisitsOfClient(db, organisationId, clientId, VISITS_READ_FOR_USUAL, now),
    now,
  );
  if (!usual) return null;
  const location = await findLocationById(db, organisationId, usual.locationId);
  return location ? { ...usual, locationSlug: location.slug, timezone: location.timezone } : null;
}

/** 404 (param service_ids) for an id that is no service of the organisation at all. */
async function requireExistingServices(
  trx: Db,
  organisationId: string,
  serviceIds: readonly string[],
): Promise<void> {
  const rows = await trx
    .selectFrom('services')
    .select('id')
    .where('organisation_id', '=', organisationId)
    .where('id', 'in', serviceIds)
    .execute();
  const known = new Set(rows.map((r) => r.id));
  const unknown = serviceIds.find((id) => !known.has(id));
  if (unknown) throw new AppError('not_found', `No service has the id ${unknown}.`, 'service_ids');
}

import { findSeriesRule, updateBookingIn, upsertFee } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { eventsOfBooking } from '../data/diary-repository.ts';
import { expireHolds, lapsedHoldsIn } from '../data/hold-expiry.ts';
import { findLocationById } from '../data/location-repository.ts';
import { bookingsAt } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { SLOT_UNAVAILABLE } from '../domain/availability/start-refusal.ts';
import type { Slot } from '../domain/availability/types.ts';
import { type Booking, CANCEL_REASON_MAX_LENGTH, type FeeKind } from '../domain/booking/booking.ts';
import {
  type ChangeDecision,
  type ChangeDisclosure,
  type ChangeKind,
  decideChange,
  type FeeDisclosure,
  pendingFee,
  STAFF_CANNOT_TAKE_IT,
} from '../domain/booking/change-policy.ts';
import { heldTermsOf } from '../domain/booking/holds.ts';
import { seriesSpanDays, withSeriesHorizon } from '../domain/booking/series.ts';
import { heldUntil } from '../domain/booking/state-machine.ts';
import type { Location } from '../domain/catalogue.ts';
import { AppError, type Refusal, refusalError } from '../domain/errors.ts';
import type { SeriesNote } from '../domain/outbox.ts';
import { type AvailabilityRequest, prepareSlotCheck } from './availability-service.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { takeBookingTurn } from './booking-reference.ts';
import { getBooking, whileSlotFree } from './booking-service.ts';
import { checkFreeText } from './free-text.ts';
import { announceChange } from './outbox-service.ts';
import {
  type CancelRefunded,
  cancellationInDoubt,
  DepositRefunds,
  dropPaymentCall,
  isRefusal,
  refuseWhileCancelling,
  withRefundsFirst,
} from './payment-calls.ts';
import type { PaymentProvider } from './payments.ts';
import { explainNoSlot, slotOrRefusal } from './start-check.ts';
import { bookEntriesFilledBy } from './waitlist/offer-outcomes.ts';

/** Who is changing the booking, as the event log names them. */
export interface Changer {
  organisationId: string;
  actor: string;
  /**
   * The provider that took the booking's deposit, which returns it on a timely cancellation; absent
   * or null, a deposit paid through a provider cannot be refunded (503 payments_unavailable).
   */
  payments?: PaymentProvider | null;
}

export interface TimeChange {
  startsAt: number;
  /** Another staff member; without one the booking stays with its own. */
  staffId?: string | undefined;
}

/** A change made, and what it meant for the customer (late, the deposit, a fee), for the caller to say. */
export interface RescheduleResult {
  booking: Booking;
  disclosure: ChangeDisclosure;
}

/**
 * What a change would do, without doing it (a dry run): the same decision the change makes. A refusal
 * the change would answer with 409 conflict (not_changeable, late_change, and for a reschedule every
 * reason a start can be refused for) is reported here as data; anything else it would refuse (an
 * unknown reference, a staff member who cannot deliver the services) is thrown, as by the change.
 */
export interface ChangePreview {
  /** The booking as it is now. */
  booking: Booking;
  refusal: Refusal | null;
  disclosure: ChangeDisclosure;
}

export interface ReschedulePreview extends ChangePreview {
  /** The slot the booking would move to (with its staff member), or null when refused. */
  slot: Slot | null;
}

/**
 * Moves a live booking to another start (and optionally another staff member; without one it stays
 * with the same). The new time must be a slot availability offers for the same services, the
 * booking's own current time not counting as busy; otherwise 409 conflict with the reason (see
 * explainNoSlot). A change less than cancellation_window_hours before the current start is late:
 * refused with 409 when the location's late_reschedule is forbid (see decideChange).
 */
export async function rescheduleBooking(
  db: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
): Promise<Booking> {
  return (await rescheduleBookingWithDisclosure(db, changer, reference, change, now)).booking;
}

/** rescheduleBooking, also telling what the change meant: late or not, the deposit, no fee. */
export function rescheduleBookingWithDisclosure(
  db: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
): Promise<RescheduleResult> {
  return writeTransaction(db, (trx) => rescheduleInTransaction(trx, changer, reference, change, now));
}

/** Why the booking cannot be moved at all now (late under late_reschedule "forbid", its state), if so. */
export async function rescheduleRefusal(db: Db, changer: Changer, reference: string, now: number) {
  const { decision } = await decide(db, changer, reference, 'reschedule', now);
  return decision.refusal?.message ?? null;
}

/** What rescheduling would do now: the decision, and whether the new start is a slot (or why not). */
export async function previewReschedule(
  db: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
): Promise<ReschedulePreview> {
  const { booking, location, decision, seriesSpan } = await decide(db, changer, reference, 'reschedule', now);
  if (staysPut(booking, change, decision)) {
    const { startsAt, endsAt, staffId } = booking;
    return { booking, refusal: null, disclosure: unchanged(decision), slot: { startsAt, endsAt, staffId } };
  }
  const disclosure = disclosureOf(decision);
  if (decision.refusal) return { booking, refusal: decision.refusal, disclosure, slot: null };
  const request = rescheduleRequest(location, booking, change, seriesSpan, now);
  const { slot, refusal } = await asBookingConflict(change, () =>
    slotOrRefusal(db, changer.organisationId, request, change.startsAt, now),
  );
  return { booking, refusal, disclosure, slot };
}

/**
 * A reschedule as the faces ask for it: made, or with `dryRun` only decided. Either way a refusal is
 * the same 409 conflict, and the answer is the booking as it is (or would be) with what the change
 * means for the customer.
 */
export async function rescheduleOrPreview(
  db: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
  dryRun: boolean,
): Promise<RescheduleResult> {
  if (!dryRun) return rescheduleBookingWithDisclosure(db, changer, reference, change, now);
  const { booking, refusal, disclosure, slot } = await previewReschedule(db, changer, reference, change, now);
  if (refusal || !slot) throw refusalError(refusal ?? SLOT_UNAVAILABLE);
  return {
    booking: { ...booking, startsAt: slot.startsAt, endsAt: slot.endsAt, staffId: slot.staffId },
    disclosure,
  };
}

/**
 * How a change of one visit of a series is told (series-changes.ts): the visit it was asked of says
 * what became of the later visits it took along (`series`); each of those is `quiet`, telling nothing
 * of its own but what only it can say (its deposit refunded or kept, its fee). Nothing given: a change
 * of one booking, told as such.
 */
export interface Telling {
  series?: SeriesNote | undefined;
  quiet?: boolean | undefined;
}

/** A reschedule inside the caller's write transaction (a series' "this and the following"). */
export async function rescheduleInTransaction(
  trx: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
  telling: Telling = {},
): Promise<RescheduleResult> {
  await takeBookingTurn(trx, changer.organisationId, reference);
  const { booking, location, decision, seriesSpan } = await decide(
    trx,
    changer,
    reference,
    'reschedule',
    now,
  );
  const put = staysPut(booking, change, decision);
  if (decision.refusal && !put) throw refusalError(decision.refusal);
  await refuseWhileCancelling(trx, changer.organisationId, booking.id);
  // Asked for the time and staff member it has (a retried move): nothing to change, write or tell.
  if (put) return { booking, disclosure: unchanged(decision) };
  const request = rescheduleRequest(location, booking, change, seriesSpan, now);
  const check = await asBookingConflict(change, () =>
    prepareSlotCheck(trx, changer.organisationId, request, change.startsAt, now),
  );
  // The catalogue is read; the location's bookings are decided one at a time from here (see createBooking).
  const { services } = check;
  const slot = await check.slot(trx, { turn: bookingsAt(location.id) });
  if (!slot) {
    throw refusalError(await explainNoSlot(trx, changer.organisationId, request, change.startsAt, now));
  }

  const last = services[services.length - 1]!;
  const blockedUntil = slot.endsAt + last.bufferAfterMinutes * 60_000;
  // Lapsed holds in the block, among the bookings the slot check read, are written expired first.
  const block = { staffId: slot.staffId, from: slot.startsAt, to: blockedUntil };
  await expireHolds(
    trx,
    lapsedHoldsIn(check.readHolds(), block, now),
    now,
    'system:lazy-expiry',
    logBookingEvent,
  );
  const written = await whileSlotFree(
    updateBookingIn(trx, changer.organisationId, booking.id, booking.status, {
      staff_id: slot.staffId,
      starts_at: slot.startsAt,
      ends_at: slot.endsAt,
      blocked_until: blockedUntil,
      // A hold still ends at its (new) start at the latest: nothing is confirmed once it has begun.
      hold_expires_at: heldUntil(booking.holdExpiresAt, slot.startsAt),
      updated_at: now,
    }),
  );
  if (!written) {
    // Changed since it was read: a hold another instance's sweeper (its clock a little ahead) expired
    // meanwhile. Refused as that status now is, never moved (nor its customer told of a move).
    const again = await decide(trx, changer, reference, 'reschedule', now);
    throw refusalError(
      again.decision.refusal ?? {
        reason: 'not_changeable',
        message: 'This booking changed meanwhile; try again.',
      },
    );
  }
  // Each service keeps its price snapshot; its times (and length, if the catalogue changed) follow the slot.
  let start = slot.startsAt;
  for (const [position, service] of services.entries()) {
    const end = start + service.durationMinutes * 60_000;
    await trx
      .updateTable('booking_services')
      .set({
        starts_at: start,
        ends_at: end,
        duration_minutes: service.durationMinutes,
        buffer_after_minutes: service.bufferAfterMinutes,
      })
      .where('organisation_id', '=', changer.organisationId)
      .where('booking_id', '=', booking.id)
      .where('position', '=', position)
      .execute();
    start = end;
  }
  await logBookingEvent(trx, {
    organisationId: changer.organisationId,
    bookingId: booking.id,
    from: booking.status,
    to: booking.status,
    actor: changer.actor,
    at: now,
    details: { rescheduled: { from: booking.startsAt, to: slot.startsAt, staff_id: slot.staffId } },
  });
  // The reminder follows the booking to its new start (or goes, if that is now too close). An
  // earlier move not sent yet goes too: it would say this same new time (messages are written when
  // they go), so the customer would hear of one move twice.
  await announceChange(
    trx,
    changer.organisationId,
    booking.id,
    {
      kind: 'rescheduled',
      drop: ['reminder', 'rescheduled'],
      remind: true,
      silent: telling.quiet === true,
      series: telling.series,
    },
    now,
  );
  // Moved to a time the client waits for: that entry ends, booked (as a new booking there would).
  if (booking.status === 'confirmed') await bookEntriesFilledBy(trx, changer.organisationId, booking.id, now);
  return {
    booking: await getBooking(trx, changer.organisationId, booking.reference),
    disclosure: disclosureOf(decision),
  };
}

/**
 * A move is of the booking's own services, and naming no staff member keeps its own. When the
 * catalogue changed since it was booked (its staff member made inactive or no longer doing these
 * services here, a service no longer bookable online or offered here), nothing the caller sent is
 * invalid: the booking stands in the way, so the answer is 409 conflict naming staff_id (name someone
 * else) or service_ids, not the 400 invalid_request a staff_id sent and refused gets.
 */
async function asBookingConflict<T>(change: TimeChange, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'invalid_request') throw error;
    if (error.param === 'service_ids') throw new AppError('conflict', error.message, 'service_ids');
    if (error.param === 'staff_id' && change.staffId === undefined) {
      throw new AppError('conflict', STAFF_CANNOT_TAKE_IT, 'staff_id');
    }
    throw error;
  }
}

/**
 * The same services at the same location, at the new start, the booking's own time not busy. An
 * occurrence of a series may lie beyond max_advance_days by the series' own length (it was booked so),
 * and may move within that much; never further, however often it is moved. A hold still waiting for
 * its customer needs, at its new start, the time to be finished that a new booking would on the terms
 * it was made under (heldTermsOf), not those its location asks of a booking made now.
 */
function rescheduleRequest(
  location: Location,
  booking: Booking,
  change: TimeChange,
  seriesSpan: number,
  now: number,
): AvailabilityRequest {
  return {
    location: withSeriesHorizon(location, seriesSpan),
    serviceIds: booking.serviceIds,
    staffId: change.staffId ?? booking.staffId,
    excludeBookingId: booking.id,
    movesHold: heldTermsOf(booking, now),
  };
}

/**
 * The booking's location as a move of it sees it: an occurrence of a series may move as far ahead as
 * the series reaches beyond max_advance_days (rescheduleRequest), so a page lists its times that far.
 */
export async function rescheduleHorizon(db: Db, booking: Booking, location: Location): Promise<Location> {
  const rule =
    booking.seriesId === null
      ? undefined
      : await findSeriesRule(db, booking.organisationId, booking.seriesId);
  return withSeriesHorizon(location, rule ? seriesSpanDays(rule) : 0);
}

export interface CancellationResult {
  booking: Booking;
  /** As REST's Cancellation says it: true only when a paid deposit was refunded. */
  depositRefunded: boolean;
  disclosure: ChangeDisclosure;
}

/**
 * Cancels a live booking before it starts. On time: a paid deposit is refunded. Late (inside the
 * cancellation window): refused when late_cancellation is forbid; otherwise a paid deposit is retained
 * and, when the booking's protection snapshot applies, the late-cancellation fee is recorded (status
 * null until staff process it), credited with the retained deposit.
 *
 * A deposit paid through the provider is refunded between two transactions, never inside one
 * (withRefundsFirst); `refunds` carries answers the provider gave before (the sweeper's, completing a
 * cancellation asked earlier).
 */
export function cancelBooking(
  db: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  now: number,
  refunds?: DepositRefunds,
): Promise<CancellationResult> {
  checkFreeText(reason, CANCEL_REASON_MAX_LENGTH, 'reason');
  const asked = {
    organisationId: changer.organisationId,
    reference,
    scope: 'one' as const,
    reason: reason ?? null,
    actor: changer.actor,
    requestedAt: now,
  };
  return withRefundsFirst(
    db,
    changer.payments,
    asked,
    {
      turns: (trx) => takeBookingTurn(trx, changer.organisationId, reference),
      work: (trx, made) => cancelInTransaction(trx, changer, reference, reason, now, made),
      cancelRefunded: cancelRefunded(changer.payments),
    },
    refunds,
  );
}

/**
 * A refund made that its cancellation did not write (withRefundsFirst): the booking is cancelled with
 * it, as the cancellation was asked (its reason, actor and time), while it is live; a booking no longer
 * live (cancelled meanwhile on its own, say) is left as it is, the refund written on its own. A
 * deposit refunded never leaves its booking live.
 */
export function cancelRefunded(payments: PaymentProvider | null | undefined): CancelRefunded {
  return async (trx, answer, asked) => {
    const booking = await trx
      .selectFrom('bookings')
      .select('reference')
      .where('organisation_id', '=', answer.ask.organisationId)
      .where('id', '=', answer.ask.bookingId)
      .executeTakeFirst();
    if (!booking) return false;
    const refunds = new DepositRefunds();
    refunds.know(answer.ask, answer.outcome);
    const changer = { organisationId: asked.organisationId, actor: asked.actor, payments };
    try {
      await cancelInTransaction(
        trx,
        changer,
        booking.reference,
        asked.reason ?? undefined,
        asked.requestedAt,
        refunds,
      );
      // The refund is its booking's one checkout's (one per booking): the cancellation wrote it, and
      // asked for no other. Otherwise it wrote the booking refunded for a refund it never had, and
      // the one made was left unwritten; nothing of it is kept.
      if (refunds.unwritten().length > 0 || refunds.asked().length > 0) {
        throw new Error(
          `The refund of checkout ${answer.ask.checkoutId} is not its booking's deposit refund: a booking has one checkout`,
        );
      }
      return true;
    } catch (error) {
      // Refused before it wrote anything (not live any more): the refund is written on its own.
      if (isRefusal(error)) return false;
      throw error;
    }
  };
}

/**
 * The cancellation a booking cancelled already had, as it was answered then: whether it was late (its
 * event says), its paid deposit refunded or retained, the late-cancellation fee recorded. What a
 * series' "this and the following" answers of the visit asked about when that one was cancelled
 * before (on its own meanwhile, or by the same ask).
 */
export async function pastCancellation(db: Db, booking: Booking): Promise<CancellationResult> {
  const events = await eventsOfBooking(db, booking.organisationId, booking.id);
  const cancelled = events.findLast((event) => event.to_status === 'cancelled');
  const details = cancelled?.details ? (JSON.parse(cancelled.details) as { late?: unknown }) : {};
  const { depositStatus } = booking;
  const depositOutcome = depositStatus === 'refunded' || depositStatus === 'retained' ? depositStatus : null;
  const fee = booking.fees.late_cancellation;
  return {
    booking,
    depositRefunded: booking.depositRefunded === true,
    disclosure: {
      late: details.late === true || fee !== undefined,
      depositRefunded: depositOutcome === null ? null : depositOutcome === 'refunded',
      depositOutcome,
      fee: fee
        ? {
            amountMinor: fee.amountMinor,
            depositCreditMinor: fee.depositCreditMinor,
            chargeAmountMinor: fee.chargeAmountMinor,
            currency: fee.currency,
            feePercentage: fee.feePercentage,
          }
        : null,
    },
  };
}

/** What cancelling would do now (late or not, the deposit, the fee), or why it would be refused. */
export async function previewCancellation(
  db: Db,
  changer: Changer,
  reference: string,
  now: number,
): Promise<ChangePreview> {
  const { booking, decision } = await decideCancellation(db, changer, reference, now);
  return { booking, refusal: decision.refusal, disclosure: disclosureOf(decision) };
}

/**
 * A cancellation as the faces ask for it: made, or with `dryRun` only decided (the booking stays as it
 * is); a refusal is the same 409 conflict either way.
 */
export async function cancelOrPreview(
  db: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  now: number,
  dryRun: boolean,
  refunds?: DepositRefunds,
): Promise<CancellationResult> {
  if (!dryRun) return cancelBooking(db, changer, reference, reason, now, refunds);
  const { booking, refusal, disclosure } = await previewCancellation(db, changer, reference, now);
  if (refusal) throw refusalError(refusal);
  return { booking, depositRefunded: disclosure.depositRefunded === true, disclosure };
}

/**
 * A cancellation inside a write transaction of withRefundsFirst (one booking, or each of a series'
 * "this and the following"): a deposit refund it has no answer to in `refunds` is asked for there, and
 * the run is rolled back.
 */
export async function cancelInTransaction(
  trx: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  now: number,
  refunds: DepositRefunds,
  telling: Telling = {},
): Promise<CancellationResult> {
  await takeBookingTurn(trx, changer.organisationId, reference);
  const { booking, decision: decided, at, asked } = await decideCancellation(trx, changer, reference, now);
  if (decided.refusal) throw refusalError(decided.refusal);
  // A refund asked before may have been made: it is asked again (same key) whatever the policy says now.
  const due = decided.depositRefunded === true || asked !== undefined;
  const refunded = await refundDeposit(trx, changer, booking, due, refunds);
  const decision = withRefund(decided, refunded, booking);
  const { late, depositOutcome } = decision;
  const depositRefunded = decision.depositRefunded === true;
  const written = await updateBookingIn(trx, changer.organisationId, booking.id, booking.status, {
    status: 'cancelled',
    cancelled_at: at,
    cancel_reason: reason ?? asked?.reason ?? null,
    deposit_refunded: depositRefunded ? 1 : 0,
    deposit_status:
      depositOutcome === 'refunded' || depositOutcome === 'retained' ? depositOutcome : booking.depositStatus,
    updated_at: at,
  });
  if (!written) {
    // Changed since it was read: a hold another instance's sweeper (its clock a little ahead) expired
    // meanwhile. Refused as that status now is, never written cancelled over it (two endings, two events).
    const now = await decideCancellation(trx, changer, reference, at);
    throw refusalError(
      now.decision.refusal ?? {
        reason: 'not_changeable',
        message: 'This booking changed meanwhile; try again.',
      },
    );
  }
  if (decision.fee) await writePendingFee(trx, booking, 'late_cancellation', decision.fee, at);
  await logBookingEvent(trx, {
    organisationId: changer.organisationId,
    bookingId: booking.id,
    from: booking.status,
    to: 'cancelled',
    actor: changer.actor,
    at,
    details: { late, deposit_refunded: depositRefunded },
  });
  // Nothing else pending is said any more: no reminder, no link for a booking that is gone. A later
  // visit cancelled with its series still tells the customer what became of its own money.
  const moneyToTell = depositOutcome === 'refunded' || depositOutcome === 'retained' || Boolean(decision.fee);
  await announceChange(
    trx,
    changer.organisationId,
    booking.id,
    {
      kind: 'cancelled',
      drop: 'all',
      remind: false,
      silent: telling.quiet === true && !moneyToTell,
      series: telling.series,
    },
    at,
  );
  return {
    booking: await getBooking(trx, changer.organisationId, booking.reference),
    depositRefunded,
    disclosure: disclosureOf(decision),
  };
}

/**
 * The refund of a deposit paid through the provider, which the cancellation writes: true once the
 * provider accepted it, false when it refused (the deposit stays paid, to be returned by hand); null
 * when no provider payment is involved (a deposit taken at the desk is returned there, or none was
 * paid). A refund due that the run has no answer to is asked for (`refunds.ask`, the run is rolled back
 * and the refund made before the next); the answer is written with its call removed. A refund made
 * although the cancellation now finds it not due (the booking changed meanwhile) is written all the
 * same: the money went back.
 */
async function refundDeposit(
  trx: Db,
  changer: Changer,
  booking: Booking,
  due: boolean,
  refunds: DepositRefunds,
): Promise<boolean | null> {
  // A booking has one checkout at most (opened with it; the database refuses a second, migration
  // 0036), so one paid checkout at most to refund.
  const paid = await trx
    .selectFrom('checkout_sessions')
    .select(['id', 'amount_minor', 'currency', 'payment_ref'])
    .where('organisation_id', '=', changer.organisationId)
    .where('booking_id', '=', booking.id)
    .where('status', '=', 'paid')
    .where('payment_ref', 'is not', null)
    .executeTakeFirst();
  if (!paid?.payment_ref) return null;
  const answered = refunds.take(paid.id);
  if (answered) {
    await dropPaymentCall(trx, changer.organisationId, 'refund', paid.id);
    if (answered.status === 'refused') return false;
    await trx
      .updateTable('checkout_sessions')
      .set({ refund_ref: answered.refundRef })
      .where('organisation_id', '=', changer.organisationId)
      .where('id', '=', paid.id)
      .execute();
    return true;
  }
  if (!due) return null;
  if (!changer.payments) {
    throw new AppError(
      'payments_unavailable',
      'The deposit was paid online and no payment provider is set up to refund it; cancel it once payments are configured.',
    );
  }
  refunds.ask({
    organisationId: changer.organisationId,
    bookingId: booking.id,
    checkoutId: paid.id,
    paymentRef: paid.payment_ref,
    amountMinor: paid.amount_minor,
    currency: paid.currency,
  });
  // Written only in a run that has the provider's answer.
  return true;
}

/**
 * The decision as the refund's outcome makes it: a refund refused leaves the deposit paid (and says
 * so); a refund made is the deposit refunded, whatever the decision now (no deposit then credits a fee).
 */
function withRefund(decided: ChangeDecision, refunded: boolean | null, booking: Booking): ChangeDecision {
  if (refunded === null || refunded === (decided.depositRefunded === true)) return decided;
  if (!refunded) return { ...decided, depositRefunded: false, depositOutcome: null };
  const fee = decided.fee && pendingFee(booking, 'late_cancellation', 0);
  return { ...decided, depositRefunded: true, depositOutcome: 'refunded', fee };
}

/**
 * What the policy decides of cancelling the booking: now, or, while a cancellation asked earlier waits
 * for its refund's outcome (a call in doubt), as of when that one was asked: asking again joins it,
 * as the sweeper completes it, so the first ask decides (on time, say, though it is late by now) and the
 * refund made for it is the one written. `at` is the time the cancellation is written as of.
 */
async function decideCancellation(db: Db, changer: Changer, reference: string, now: number) {
  const decided = await decide(db, changer, reference, 'cancel', now);
  const asked = await cancellationInDoubt(db, changer.organisationId, decided.booking.id);
  if (!asked) return { ...decided, at: now, asked };
  // A refund is asked only of a cancellation on time, so this one was on time as it was asked, under
  // the policy then. The salon may have changed it since (a wider window, late cancellations
  // forbidden): read now, it refused the cancellation whose refund Stripe may have made, and the
  // booking stayed live with its deposit refunded.
  const at = asked.requested_at;
  return { ...(await decide(db, changer, reference, 'cancel', at, { onTime: true })), at, asked };
}

/**
 * The booking, its location and what the policy decides of the change now (shared with previews).
 * `onTime`: the change is known to have been asked on time (a cancellation in doubt), whatever the
 * cancellation window says now.
 */
async function decide(
  db: Db,
  changer: Changer,
  reference: string,
  kind: ChangeKind,
  now: number,
  options: { onTime?: boolean } = {},
) {
  const booking = await getBooking(db, changer.organisationId, reference);
  const location = await locationOf(db, booking);
  const rule =
    booking.seriesId === null
      ? undefined
      : await findSeriesRule(db, changer.organisationId, booking.seriesId);
  const rules = options.onTime ? { ...location.policy, cancellationWindowHours: 0 } : location.policy;
  const decision = decideChange(booking, rules, kind, now);
  return {
    booking,
    location,
    decision: kind === 'reschedule' ? closedToMoves(decision, location) : decision,
    seriesSpan: rule ? seriesSpanDays(rule) : 0,
  };
}

/**
 * A location made inactive takes no bookings (its slug is 404 to availability and to a new booking),
 * so none is moved to another time there either; its bookings stay where they are and can still be
 * cancelled. A refusal the booking has already (not live, late) is the one said.
 */
export function closedToMoves(decision: ChangeDecision, location: Location): ChangeDecision {
  if (location.active || decision.refusal) return decision;
  return {
    ...decision,
    refusal: {
      reason: 'closed',
      message: `${location.name} no longer takes bookings, so this one cannot be moved; it can still be cancelled.`,
      param: 'starts_at',
    },
  };
}

/**
 * Whether a move asks for the start and staff member the booking already has, on a booking still
 * live: a retried move (the same PATCH again, an MCP host calling again). It changes nothing, so it
 * is neither refused as late (the retry of a move into the window would be) nor told to the customer
 * a second time; a booking no longer live is still refused (not_changeable).
 */
function staysPut(booking: Booking, change: TimeChange, decision: ChangeDecision): boolean {
  return (
    change.startsAt === booking.startsAt &&
    (change.staffId === undefined || change.staffId === booking.staffId) &&
    decision.refusal?.reason !== 'not_changeable'
  );
}

/** What a move that changes nothing means: not late, a paid deposit where it was. */
function unchanged(decision: ChangeDecision): ChangeDisclosure {
  return { ...disclosureOf(decision), late: false };
}

function disclosureOf(decision: ChangeDecision): ChangeDisclosure {
  const { late, depositRefunded, depositOutcome, fee } = decision;
  return { late, depositRefunded, depositOutcome, fee };
}

/**
 * Records the fee a late cancellation or a no-show owes, when the booking's protection snapshot has a
 * percentage for it: computed now (credited with the retained deposit), processed later by staff.
 */
export async function recordPendingFee(
  trx: Db,
  booking: Booking,
  kind: FeeKind,
  retainedDepositMinor: number,
  now: number,
): Promise<void> {
  const fee = pendingFee(booking, kind, retainedDepositMinor);
  if (fee) await writePendingFee(trx, booking, kind, fee, now);
}

async function writePendingFee(
  trx: Db,
  booking: Booking,
  kind: FeeKind,
  fee: FeeDisclosure,
  now: number,
): Promise<void> {
  await upsertFee(trx, {
    organisation_id: booking.organisationId,
    booking_id: booking.id,
    kind,
    status: null,
    currency: fee.currency,
    fee_percentage: fee.feePercentage,
    amount_minor: fee.amountMinor,
    deposit_credit_minor: fee.depositCreditMinor,
    charge_amount_minor: fee.chargeAmountMinor,
    failure_reason: null,
    processed_at: null,
    created_at: now,
  });
}

async function locationOf(trx: Db, booking: Booking): Promise<Location> {
  const location = await findLocationById(trx, booking.organisationId, booking.locationId);
  if (!location) throw new Error(`Booking ${booking.reference} refers to a missing location`);
  return location;
}

import { appendEvent, updateBooking, upsertFee } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { expireLapsedHoldsInBlock } from '../data/hold-expiry.ts';
import { findLocationById } from '../data/location-repository.ts';
import { bookingsAt, bookingTurn, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Booking, FeeKind } from '../domain/booking/booking.ts';
import { computeFee } from '../domain/booking/fees.ts';
import { normaliseReference } from '../domain/booking/reference.ts';
import { type BookingEvent, transition } from '../domain/booking/state-machine.ts';
import type { Location } from '../domain/catalogue.ts';
import { conflict } from '../domain/errors.ts';
import { prepareSlotCheck } from './availability-service.ts';
import { getBooking, slotUnavailable, whileSlotFree } from './booking-service.ts';

/** Who is changing the booking, as the event log names them. */
export interface Changer {
  organisationId: string;
  actor: string;
}

/**
 * Moves a live booking to another start (and optionally another staff member; without one it stays
 * with the same). The new time must be a slot availability offers for the same services, the
 * booking's own current time not counting as busy. A change less than cancellation_window_hours
 * before the current start is late: refused with 409 when the location's late_reschedule is forbid.
 */
export function rescheduleBooking(
  db: Db,
  changer: Changer,
  reference: string,
  change: { startsAt: number; staffId?: string | undefined },
  now: number,
): Promise<Booking> {
  return writeTransaction(db, (trx) => reschedule(trx, changer, reference, change, now));
}

async function reschedule(
  trx: Db,
  changer: Changer,
  reference: string,
  change: { startsAt: number; staffId?: string | undefined },
  now: number,
): Promise<Booking> {
  await takeTurn(trx, bookingTurn(changer.organisationId, normaliseReference(reference)));
  const booking = await getBooking(trx, changer.organisationId, reference);
  allowed(booking, 'reschedule', now);
  const location = await locationOf(trx, booking);
  if (isLate(booking, location, now) && location.policy.lateReschedule === 'forbid') {
    throw conflict(
      'late_change',
      `Changes less than ${location.policy.cancellationWindowHours} hours before the appointment are not allowed here.`,
      'starts_at',
    );
  }
  const check = await prepareSlotCheck(
    trx,
    changer.organisationId,
    {
      location,
      serviceIds: booking.serviceIds,
      staffId: change.staffId ?? booking.staffId,
      excludeBookingId: booking.id,
    },
    change.startsAt,
    now,
  );
  // The catalogue is read; the location's bookings are decided one at a time from here (see createBooking).
  await takeTurn(trx, bookingsAt(location.id));
  const { services } = check;
  const slot = await check.slot(trx);
  if (!slot) throw slotUnavailable();

  const last = services[services.length - 1]!;
  const blockedUntil = slot.endsAt + last.bufferAfterMinutes * 60_000;
  await expireLapsedHoldsInBlock(
    trx,
    { organisationId: changer.organisationId, staffId: slot.staffId, from: slot.startsAt, to: blockedUntil },
    now,
  );
  await whileSlotFree(
    updateBooking(trx, changer.organisationId, booking.id, {
      staff_id: slot.staffId,
      starts_at: slot.startsAt,
      ends_at: slot.endsAt,
      blocked_until: blockedUntil,
      updated_at: now,
    }),
  );
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
  await appendEvent(trx, {
    organisationId: changer.organisationId,
    bookingId: booking.id,
    from: booking.status,
    to: booking.status,
    actor: changer.actor,
    at: now,
    details: { rescheduled: { from: booking.startsAt, to: slot.startsAt, staff_id: slot.staffId } },
  });
  return getBooking(trx, changer.organisationId, booking.reference);
}

export interface CancellationResult {
  booking: Booking;
  depositRefunded: boolean;
}

/**
 * Cancels a live booking before it starts. On time: a paid deposit is refunded. Late (inside the
 * cancellation window): refused when late_cancellation is forbid; otherwise a paid deposit is retained
 * and, when the booking's protection snapshot applies, the late-cancellation fee is recorded (status
 * null until staff process it), credited with the retained deposit.
 */
export function cancelBooking(
  db: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  now: number,
): Promise<CancellationResult> {
  return writeTransaction(db, (trx) => cancel(trx, changer, reference, reason, now));
}

async function cancel(
  trx: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  now: number,
): Promise<CancellationResult> {
  await takeTurn(trx, bookingTurn(changer.organisationId, normaliseReference(reference)));
  const booking = await getBooking(trx, changer.organisationId, reference);
  allowed(booking, 'cancel', now);
  const location = await locationOf(trx, booking);
  const late = isLate(booking, location, now);
  if (late && location.policy.lateCancellation === 'forbid') {
    throw conflict(
      'late_change',
      `Cancellations less than ${location.policy.cancellationWindowHours} hours before the appointment are not allowed here.`,
    );
  }
  const paid = booking.depositStatus === 'paid';
  const depositRefunded = paid && !late;
  await updateBooking(trx, changer.organisationId, booking.id, {
    status: 'cancelled',
    cancelled_at: now,
    cancel_reason: reason ?? null,
    deposit_refunded: depositRefunded ? 1 : 0,
    deposit_status: paid ? (late ? 'retained' : 'refunded') : booking.depositStatus,
    updated_at: now,
  });
  if (late)
    await recordPendingFee(trx, booking, 'late_cancellation', paid ? (booking.depositMinor ?? 0) : 0, now);
  await appendEvent(trx, {
    organisationId: changer.organisationId,
    bookingId: booking.id,
    from: booking.status,
    to: 'cancelled',
    actor: changer.actor,
    at: now,
    details: { late, deposit_refunded: depositRefunded },
  });
  return { booking: await getBooking(trx, changer.organisationId, booking.reference), depositRefunded };
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
  const { protection } = booking;
  const percentage =
    kind === 'late_cancellation' ? protection.lateCancellationFeePercentage : protection.noShowFeePercentage;
  if (!protection.applies || percentage === null) return;
  const fee = computeFee(booking.totalPriceMinor, percentage, retainedDepositMinor);
  await upsertFee(trx, {
    organisation_id: booking.organisationId,
    booking_id: booking.id,
    kind,
    status: null,
    currency: booking.currency,
    fee_percentage: percentage,
    amount_minor: fee.amountMinor,
    deposit_credit_minor: fee.depositCreditMinor,
    charge_amount_minor: fee.chargeAmountMinor,
    failure_reason: null,
    processed_at: null,
    created_at: now,
  });
}

/** 409 conflict naming why, when the state machine refuses the event. */
function allowed(booking: Booking, event: BookingEvent, now: number): void {
  const result = transition(booking, event, now);
  if (!result.ok)
    throw conflict(
      'not_changeable',
      `This booking cannot be ${event === 'cancel' ? 'cancelled' : 'changed'}: ${result.reason}.`,
    );
}

/** Less than cancellation_window_hours before the (current) start. */
function isLate(booking: Booking, location: Location, now: number): boolean {
  return booking.startsAt - now < location.policy.cancellationWindowHours * 3_600_000;
}

async function locationOf(trx: Db, booking: Booking): Promise<Location> {
  const location = await findLocationById(trx, booking.organisationId, booking.locationId);
  if (!location) throw new Error(`Booking ${booking.reference} refers to a missing location`);
  return location;
}

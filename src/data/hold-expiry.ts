import { MAX_BOOKING_SPAN_MS } from '../domain/booking/booking.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import type { ReadHold } from './availability-repository.ts';
import type { BookingEvent } from './booking-repository.ts';
import type { Db } from './database.ts';
import { dropPendingMessages } from './outbox-repository.ts';

/**
 * Inside a booking's transaction, before it takes [from, to) of a staff member's diary: the lapsed
 * holds there are written expired first. Lazy expiry already lets the booking through, and SQLite's
 * guard agrees; PostgreSQL's exclusion constraint cannot read the clock and would refuse it while the
 * lapsed hold's row still says pending.
 */
export async function expireLapsedHoldsInBlock(
  trx: Db,
  block: { organisationId: string; staffId: string; from: number; to: number },
  now: number,
  log: LogBookingEvent,
): Promise<void> {
  const lapsed = await trx
    .selectFrom('bookings')
    .select(['id', 'organisation_id', 'status'])
    .where('organisation_id', '=', block.organisationId)
    .where('staff_id', '=', block.staffId)
    .where('starts_at', '>', block.from - MAX_BOOKING_SPAN_MS)
    .where('starts_at', '<', block.to)
    .where('blocked_until', '>', block.from)
    .where('status', 'in', PENDING)
    .where('hold_expires_at', '<=', now)
    .execute();
  await expireHolds(trx, lapsed, now, 'system:lazy-expiry', log);
}

/**
 * The holds among `read` (pending bookings read under the location's turn, SlotCheck.readHolds) that
 * expireLapsedHoldsInBlock would find in the block: the same conditions, without reading them again.
 * `read` must cover the block (a slot check's read does).
 */
export function lapsedHoldsIn(
  read: readonly ReadHold[],
  block: { staffId: string; from: number; to: number },
  now: number,
): ReadHold[] {
  return read.filter(
    (hold) =>
      hold.staff_id === block.staffId &&
      hold.starts_at < block.to &&
      hold.blocked_until > block.from &&
      (PENDING as readonly string[]).includes(hold.status) &&
      hold.hold_expires_at !== null &&
      hold.hold_expires_at <= now,
  );
}

/** The statuses that hold a slot only until hold_expires_at. */
export const PENDING = ['pending_payment', 'pending_confirmation'] as const;

/**
 * How the service layer logs a booking's change (booking-event-log.ts): its event, and what the change
 * tells integrators.
 */
export type LogBookingEvent = (trx: Db, event: BookingEvent) => Promise<void>;

/**
 * Why a hold was expired, as its event's `details.reason` says: it lapsed (its time ran out, whoever
 * noticed: the sweeper, a booking's lazy expiry, the waitlist worker, the payment provider), or the
 * customer (or staff, removing a waitlist entry) let an offered time go before then.
 */
export const HOLD_LAPSED = 'hold lapsed';
export const OFFER_LET_GO = 'offer let go';
export type ExpiryReason = typeof HOLD_LAPSED | typeof OFFER_LET_GO;

/**
 * Each booking is moved by a conditional update, and only the writer whose update changed the row
 * logs its event (`log`): another instance's sweeper may have got there first.
 */
export async function expireHolds(
  trx: Db,
  lapsed: { id: string; organisation_id: string; status: BookingStatus }[],
  now: number,
  actor: string,
  log: LogBookingEvent,
  reason: ExpiryReason = HOLD_LAPSED,
): Promise<number> {
  let expired = 0;
  // In one order whoever expires them (the sweeper, the waitlist worker, a booking's slot check, on
  // any instance): two writers taking the same holds in opposite orders would deadlock on PostgreSQL,
  // which then aborts one of them (a request's 500).
  const inLockOrder = [...lapsed].sort(
    (a, b) => compareText(a.organisation_id, b.organisation_id) || compareText(a.id, b.id),
  );
  for (const booking of inLockOrder) {
    const result = await trx
      .updateTable('bookings')
      .set({ status: 'expired', pending_requirements: null, updated_at: now })
      .where('organisation_id', '=', booking.organisation_id)
      .where('id', '=', booking.id)
      .where('status', '=', booking.status)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) continue;
    expired += 1;
    await trx
      .updateTable('checkout_sessions')
      .set({ status: 'expired', completed_at: now })
      .where('organisation_id', '=', booking.organisation_id)
      .where('booking_id', '=', booking.id)
      .where('status', 'in', ['open', 'abandoned'])
      .execute();
    // Nothing is sent for an expired hold: its link, not delivered yet, goes with it.
    await dropPendingMessages(trx, booking.organisation_id, booking.id, now);
    await log(trx, {
      organisationId: booking.organisation_id,
      bookingId: booking.id,
      from: booking.status,
      to: 'expired',
      actor,
      at: now,
      details: { reason },
    });
  }
  return expired;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

import { sql } from 'kysely';
import { MAX_BOOKING_SPAN_MS } from '../domain/booking/booking.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import type { ReadHold } from './availability-repository.ts';
import type { BookingEvent } from './booking-repository.ts';
import { type Db, dialectOf } from './database.ts';
import { dropPendingMessages } from './outbox-repository.ts';
import { bookingsAt, takeTurn } from './write-locks.ts';
import { writeTransaction } from './write-transaction.ts';

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
  await lockBookings(trx, inLockOrder);
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

/**
 * On PostgreSQL, the rows of several holds are locked, in lock order, before the first is written. The
 * first booking written bumps its organisation's bookings_version (a trigger), whose row stays locked
 * to the end of the transaction: written one by one, this transaction would hold that row while it
 * waits for the next hold, and a writer that locked that hold first (its cancellation, its payment, a
 * booking's lazy expiry) then waits for the organisation's row, a deadlock PostgreSQL ends by failing
 * one of them. Locked first, this transaction waits for the others holding nothing they need.
 */
async function lockBookings(trx: Db, inLockOrder: readonly { id: string; organisation_id: string }[]) {
  if (inLockOrder.length < 2 || dialectOf(trx) !== 'postgres') return;
  await trx
    .selectFrom('bookings')
    .select('id')
    .where((eb) =>
      eb.or(
        inLockOrder.map((booking) =>
          eb.and([eb('organisation_id', '=', booking.organisation_id), eb('id', '=', booking.id)]),
        ),
      ),
    )
    // compareText's order: byte order, whatever the database's collation.
    .orderBy(sql`organisation_id COLLATE "C"`)
    .orderBy(sql`id COLLATE "C"`)
    .forNoKeyUpdate()
    .execute();
}

/**
 * Expires lapsed holds read outside any booking's transaction (the hold sweeper, the waitlist worker):
 * a transaction for each location, under its turn (bookingsAt), as every write that frees or takes a
 * location's time. Without the turn, a transaction writing holds at several places would hold its
 * organisation's row (see lockBookings) while a booking there, under the turn, expires one of them
 * lazily and waits for that row: a deadlock, and one of them failed (the booking's 500).
 */
export async function expireHoldsByLocation(
  db: Db,
  lapsed: readonly { id: string; organisation_id: string; location_id: string; status: BookingStatus }[],
  now: number,
  actor: string,
  log: LogBookingEvent,
): Promise<number> {
  const byLocation = new Map<string, (typeof lapsed)[number][]>();
  for (const hold of lapsed) {
    const holds = byLocation.get(hold.location_id) ?? [];
    holds.push(hold);
    byLocation.set(hold.location_id, holds);
  }
  let expired = 0;
  for (const [locationId, holds] of [...byLocation].sort(([a], [b]) => compareText(a, b))) {
    expired += await writeTransaction(db, async (trx) => {
      await takeTurn(trx, bookingsAt(locationId));
      return expireHolds(trx, holds, now, actor, log);
    });
  }
  return expired;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

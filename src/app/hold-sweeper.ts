import type { Db } from '../data/database.ts';
import { expireHolds, PENDING } from '../data/hold-expiry.ts';
import { literalLimit } from '../data/literal-limit.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { startPeriodicWork } from './periodic-work.ts';

/** How many lapsed holds one sweep writes at most, so a sweep never holds the write lock for long. */
const BATCH = 200;

/**
 * Writes down what lazy expiry already implies: pending bookings whose hold has lapsed become
 * expired (each with its event) and their unpaid checkouts (open or abandoned) expire too. Readers never depend on this
 * having run; it keeps the stored status honest for reports, exports and the event log.
 *
 * Safe with several processes or instances: each booking is moved by a conditional update inside the
 * write transaction, and only the process whose update changed the row writes its event.
 */
export async function expireLapsedHolds(db: Db, now: number, actor = 'system:sweeper'): Promise<number> {
  return writeTransaction(db, async (trx) => {
    const lapsed = await trx
      .selectFrom('bookings')
      .select(['id', 'organisation_id', 'status'])
      .where('status', 'in', PENDING)
      .where('hold_expires_at', '<=', now)
      .orderBy('hold_expires_at')
      .limit(literalLimit(BATCH))
      .execute();
    return expireHolds(trx, lapsed, now, actor, logBookingEvent);
  });
}

/**
 * Runs expireLapsedHolds every `intervalMs` until stopped; failures are reported, never fatal. The
 * returned stop resolves once a sweep in progress has finished, so a shutdown can close the database
 * after it without cutting a transaction short.
 */
export function startHoldSweeper(
  db: Db,
  clock: { nowMs(): number },
  onError: (error: unknown) => void,
  intervalMs = 30_000,
): () => Promise<void> {
  return startPeriodicWork(() => expireLapsedHolds(db, clock.nowMs()), onError, intervalMs);
}

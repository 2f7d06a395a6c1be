import type { Db } from '../data/database.ts';
import { expireHoldsByLocation, PENDING } from '../data/hold-expiry.ts';
import { literalLimit } from '../data/literal-limit.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { takeCheckoutTurn } from './checkout-service.ts';
import {
  type PaymentCall,
  providerDeadline,
  refundUnwantedPayment,
  unwantedPaymentRefund,
} from './payment-calls.ts';
import type { PaymentProvider } from './payments.ts';
import { startPeriodicWork } from './periodic-work.ts';
import { settlePaymentCalls } from './settle-payment-calls.ts';

/** How many lapsed holds one sweep writes at most, so a sweep never holds the write lock for long. */
const BATCH = 200;
/** How long after a protected hold lapsed its paid deposit is still refunded by the sweeper. */
const REFUND_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Writes down what lazy expiry already implies: pending bookings whose hold has lapsed become
 * expired (each with its event) and their unpaid checkouts (open or abandoned) expire too. Readers never depend on this
 * having run; it keeps the stored status honest for reports, exports and the event log.
 *
 * Safe with several processes or instances: each booking is moved by a conditional update inside a
 * write transaction of its location, under the location's turn (expireHoldsByLocation), and only the
 * process whose update changed the row writes its event.
 */
export async function expireLapsedHolds(db: Db, now: number, actor = 'system:sweeper'): Promise<number> {
  const lapsed = await db
    .selectFrom('bookings')
    .select(['id', 'organisation_id', 'location_id', 'status'])
    .where('status', 'in', PENDING)
    .where('hold_expires_at', '<=', now)
    .orderBy('hold_expires_at')
    .limit(literalLimit(BATCH))
    .execute();
  return expireHoldsByLocation(db, lapsed, now, actor, logBookingEvent);
}

/**
 * Returns the deposits paid through the provider on holds that then lapsed unfinished (Booking
 * Protection's hold: the deposit paid, the card never saved): the booking never was, so its money goes
 * back, as a payment arriving after the hold lapsed does (stripe-webhook-service.ts), and the same way
 * (payment-calls.ts): each refund is written as a call first (an `unwanted_payment` refund, keyed by
 * its checkout), which claims it, then asked of the provider outside any transaction within the
 * minute a request waits for it (providerDeadline), then written (its booking's deposit `refunded`).
 * A refund another process wrote first, in doubt or being asked, is left to it and to the sweeper
 * (settle-payment-calls.ts), which completes one whose answer never came, so several processes never
 * ask the provider for one refund at once. A refund the provider refuses for good (a 4xx answer:
 * refunded by hand already, disputed) is settled at once, recorded refused on its checkout and never
 * asked again (the same key gets the same answer); one it could not answer (unreachable, a 5xx) stays
 * in doubt for the sweeper to ask again. Answers how many were refunded.
 */
export async function refundLapsedDeposits(
  db: Db,
  payments: PaymentProvider | null,
  now: number,
): Promise<number> {
  if (!payments?.takesMoney) return 0;
  const due = await lapsedDeposits(db, now)
    // Not one whose refund is written already (in doubt): the sweeper completes it.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('payment_calls as c')
            .select('c.key')
            .whereRef('c.organisation_id', '=', 's.organisation_id')
            .whereRef('c.key', '=', 's.id')
            .where('c.kind', '=', 'refund'),
        ),
      ),
    )
    .orderBy('b.hold_expires_at', 'desc')
    .limit(literalLimit(BATCH))
    .execute();
  let refunded = 0;
  let failure: unknown;
  for (const row of due) {
    try {
      const call = await claimRefund(db, row, payments.name, now);
      if (!call) continue;
      const outcome = await refundUnwantedPayment(db, payments, call, false, now, providerDeadline());
      if (outcome?.status === 'refunded') refunded += 1;
    } catch (error) {
      // One refund failing (asked again later) does not hold back the others.
      failure ??= error;
    }
  }
  if (failure) throw failure;
  return refunded;
}

/** The paid deposits of holds that lapsed this past week, not refunded. */
function lapsedDeposits(db: Db, now: number) {
  return (
    db
      .selectFrom('checkout_sessions as s')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 's.organisation_id').onRef('b.id', '=', 's.booking_id'),
      )
      .select(['s.id', 's.organisation_id', 's.booking_id', 's.amount_minor', 's.currency', 's.payment_ref'])
      .where('b.status', '=', 'expired')
      .where('b.deposit_status', '=', 'paid')
      .where('s.status', '=', 'paid')
      .where('s.payment_ref', 'is not', null)
      .where('s.refund_ref', 'is', null)
      // Not one the provider refused for good: settled, returned by hand.
      .where('s.refund_refused_at', 'is', null)
      // Holds that lapsed this past week only: a first start does not refund holds settled by hand
      // long before (nor one refused before its refusal was recorded, migration 0037).
      .where('b.hold_expires_at', '>=', now - REFUND_WINDOW_MS)
  );
}

/**
 * Writes the refund of a lapsed hold's deposit as a call, under its checkout's turn, if it is still
 * due and nobody wrote it meanwhile: that call, now this process's to ask; otherwise null (another
 * process refunded it, or wrote its call first and asks it).
 */
async function claimRefund(
  db: Db,
  row: { id: string; organisation_id: string },
  provider: PaymentProvider['name'],
  now: number,
): Promise<PaymentCall | null> {
  return writeTransaction(db, async (trx) => {
    await takeCheckoutTurn(trx, row.id);
    const due = await lapsedDeposits(trx, now)
      .where('s.organisation_id', '=', row.organisation_id)
      .where('s.id', '=', row.id)
      .executeTakeFirst();
    if (!due) return null;
    const call = unwantedPaymentRefund(
      due,
      due.payment_ref ?? null,
      { actor: 'system:sweeper', provider },
      now,
    );
    const written = await trx
      .insertInto('payment_calls')
      .values(call)
      .onConflict((oc) => oc.columns(['key', 'kind', 'organisation_id']).doNothing())
      .executeTakeFirst();
    return Number(written.numInsertedOrUpdatedRows ?? 0n) > 0 ? call : null;
  });
}

/**
 * Runs expireLapsedHolds every `intervalMs` until stopped, then the provider's part: the deposits of
 * lapsed holds refunded, and refunds and fee charges left in doubt completed (settle-payment-calls.ts);
 * failures are reported, never fatal, and a part that fails does not keep the next from running. The
 * returned stop resolves once a sweep in progress has finished, so a shutdown can close the database
 * after it without cutting a transaction short.
 */
export function startHoldSweeper(
  db: Db,
  clock: { nowMs(): number },
  onError: (error: unknown) => void,
  intervalMs = 30_000,
  payments: PaymentProvider | null = null,
): () => Promise<void> {
  // Each part runs whatever became of the one before: a refund Stripe keeps failing (a 500 it answers
  // again under the same key for a day) must not hold back the calls in doubt, nor the holds.
  const parts = [
    () => expireLapsedHolds(db, clock.nowMs()),
    () => refundLapsedDeposits(db, payments, clock.nowMs()),
    // The clock itself: each call is claimed as of when it is worked, not when the sweep began.
    () => settlePaymentCalls(db, payments, clock),
  ];
  return startPeriodicWork(
    async () => {
      for (const part of parts) {
        try {
          await part();
        } catch (error) {
          onError(error);
        }
      }
    },
    onError,
    intervalMs,
  );
}

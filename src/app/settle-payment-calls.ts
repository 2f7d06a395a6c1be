import { sql } from 'kysely';
import type { Db } from '../data/database.ts';
import { literalLimit } from '../data/literal-limit.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import {
  askRefund,
  DepositRefunds,
  isRefusal,
  madeBy,
  type PaymentCall,
  providerDeadline,
  refundUnwantedPayment,
} from './payment-calls.ts';
import type { PaymentProvider } from './payments.ts';
import { cancelWithScope } from './series-changes.ts';
import { completeCharge } from './staff-actions.ts';

/**
 * How long a written call is left to the request that wrote it before the sweeper completes it: twice
 * the longest a request waits for the provider (PROVIDER_WAIT_MS, a deadline across all it asks), so
 * the sweeper never races a request still waiting for its answer. Also the pause between two of its
 * own tries, each bounded by the same deadline.
 */
export const SETTLE_AFTER_MS = 2 * 60_000;
/** The longest pause between two of the sweeper's tries of a fee's charge. */
const LONGEST_CHARGE_PAUSE_MS = 60 * 60_000;

/**
 * When the sweeper next tries a call: SETTLE_AFTER_MS after it was asked (a lost answer is completed
 * then), and after each try of its own. A fee's charge waits, after a try, as long as it has been in
 * doubt (pauses doubling from SETTLE_AFTER_MS) up to an hour: a charge Stripe answered 500 is answered
 * that 500 again for a day (never asked under another key, see stripe-payments.ts), and every try is
 * a list and a POST; staff charging again still asks at once. A refund keeps its short pause: its
 * booking cannot be moved or checked out meanwhile, and a 500 moves it to another key.
 */
const nextTryAt = sql<number>`case
  when attempted_at is null then requested_at + ${SETTLE_AFTER_MS}
  when kind <> 'charge' or attempted_at - requested_at <= ${SETTLE_AFTER_MS}
    then attempted_at + ${SETTLE_AFTER_MS}
  when attempted_at - requested_at >= ${LONGEST_CHARGE_PAUSE_MS}
    then attempted_at + ${LONGEST_CHARGE_PAUSE_MS}
  else attempted_at + (attempted_at - requested_at)
end`;

/** Calls settled in one sweep at most. */
const BATCH = 50;

/**
 * Completes the refunds and fee charges asked of the provider whose outcome nobody wrote (payment-
 * calls.ts): the provider was unreachable, or the process died between its answer and our write. Each
 * is asked again under the same idempotency key (the provider answers what it did the first time, or
 * does it now) and completed as it was asked: a cancellation as of when it was asked (its refunds, then
 * the booking cancelled; refused meanwhile, the refund is written on its own), a fee's charge with its
 * outcome, an unwanted payment's refund on its checkout. A call the provider still cannot be reached
 * for is tried again after SETTLE_AFTER_MS (a fee's charge, after longer and longer: nextTryAt).
 * Answers how many calls were completed.
 *
 * Safe with several processes: a call is claimed by a conditional update of its attempted_at, just
 * before it is worked and at the time it is (`clock`, read again for each): the claim lasts
 * SETTLE_AFTER_MS, twice the most one call's work waits for the provider, so no other process's
 * sweeper takes it while this one works it, however long the batch has taken so far. (Claimed as of
 * the sweep's start, a call worked minutes into a batch was claimed in the past: another sweeper took
 * it at once.) Completing one that another process completed meanwhile changes nothing. A number for
 * `clock` is a sweep as of that one instant (tests).
 */
export async function settlePaymentCalls(
  db: Db,
  payments: PaymentProvider | null,
  clock: number | { nowMs(): number },
): Promise<number> {
  if (!payments) return 0;
  const nowMs = typeof clock === 'number' ? () => clock : () => clock.nowMs();
  const now = nowMs();
  const due = await db
    .selectFrom('payment_calls')
    .selectAll()
    // Only the provider a call was asked of completes it (madeBy); the others' wait for theirs.
    .where((eb) =>
      payments.takesMoney
        ? eb.or([eb('provider', '=', payments.name), eb('provider', 'is', null)])
        : eb('provider', '=', payments.name),
    )
    .where(nextTryAt, '<=', now)
    .orderBy('requested_at')
    .limit(literalLimit(BATCH))
    .execute();
  let settled = 0;
  let failure: unknown;
  for (const call of due) {
    const claimedAt = nowMs();
    if (!(await claim(db, call, claimedAt))) continue;
    try {
      if (await settle(db, payments, call, claimedAt)) settled += 1;
    } catch (error) {
      // Refused meanwhile (a 4xx): the call was written off by the work itself.
      if (isRefusal(error)) settled += 1;
      else if (!isUnavailable(error)) failure ??= error;
    }
  }
  if (failure) throw failure;
  return settled;
}

/**
 * The calls in doubt that the provider configured now (none, or another) did not make, by the provider
 * they were asked of: they wait, in doubt, for it to be configured again (their bookings cannot be moved
 * or checked out meanwhile), and `booking serve` says so as it starts.
 */
export async function callsWaitingForTheirProvider(
  db: Db,
  payments: PaymentProvider | null,
): Promise<{ provider: string; calls: number }[]> {
  const rows = await db
    .selectFrom('payment_calls')
    .select(['provider', (eb) => eb.fn.countAll<number | string | bigint>().as('calls')])
    .groupBy('provider')
    .execute();
  return rows
    .filter((row) => !madeBy(row, payments))
    .map((row) => ({ provider: row.provider ?? 'unrecorded', calls: Number(row.calls) }))
    .sort((a, b) => a.provider.localeCompare(b.provider));
}

/** Takes the call for this sweep: false when another process took it, or it was completed meanwhile. */
async function claim(db: Db, call: PaymentCall, now: number): Promise<boolean> {
  const result = await writeTransaction(db, (trx) =>
    trx
      .updateTable('payment_calls')
      .set({ attempted_at: now })
      .where('organisation_id', '=', call.organisation_id)
      .where('kind', '=', call.kind)
      .where('key', '=', call.key)
      .where(nextTryAt, '<=', now)
      .executeTakeFirst(),
  );
  return result.numUpdatedRows > 0n;
}

/** Completes one call, claimed at `now`; false when the provider still cannot be reached. */
async function settle(db: Db, payments: PaymentProvider, call: PaymentCall, now: number): Promise<boolean> {
  switch (call.purpose) {
    // Each was asked before: the provider looks for what it made then (askRefund).
    case 'fee':
      await completeCharge(db, payments, call, true, providerDeadline());
      return true;
    case 'unwanted_payment':
      return (await refundUnwantedPayment(db, payments, call, true, now, providerDeadline())) !== null;
    case 'cancellation': {
      // Its deadline bounds this refund and any other the cancellation still asks for (each marked
      // tried now, though the cancellation is completed as of when it was asked).
      const refunds = new DepositRefunds(now);
      // The refund first, so that its answer is written whatever becomes of the cancellation.
      const outcome = await askRefund(payments, call, true, refunds.deadline);
      if (!outcome) return false;
      refunds.know(
        {
          organisationId: call.organisation_id,
          bookingId: call.booking_id,
          checkoutId: call.key,
          paymentRef: call.payment_ref ?? '',
          amountMinor: call.amount_minor,
          currency: call.currency,
        },
        outcome,
      );
      await cancelWithScope(
        db,
        { organisationId: call.organisation_id, actor: call.actor, payments },
        call.reference ?? '',
        call.reason ?? undefined,
        call.scope ?? 'one',
        call.requested_at,
        false,
        refunds,
      );
      return true;
    }
  }
}

function isUnavailable(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === 'payments_unavailable';
}

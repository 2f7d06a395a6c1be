import { sql } from 'kysely';
import type { Db } from '../data/database.ts';
import type { FeeKind, PaymentCallsTable } from '../data/tables.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { AppError, isAppError } from '../domain/errors.ts';
import { takeCheckoutTurn } from './checkout-service.ts';
import type { ChargeOutcome, PaymentProvider, RefundOutcome } from './payment-provider.ts';

/**
 * Refunds and fee charges are asked of the payment provider (Stripe, across the network) between two
 * write transactions, never inside one, as a deposit's checkout is opened before its booking's
 * (checkouts-opened-first.ts): a transaction open while the provider answers (a second, or a minute
 * while it struggles) held SQLite's one writer, so every booking of every organisation waited, and on
 * PostgreSQL the booking's turns and a connection.
 *
 * The call is written first (a `payment_calls` row, committed), then made, then its outcome written in
 * the transaction that removes the row. The provider's idempotency key is made from the row's own key
 * (a refund's checkout, a fee's booking and kind), so asking again can never refund or charge twice. A
 * row left behind (the provider unreachable, the process gone between its answer and our write) is a
 * call in doubt: asking again (a repeated cancellation or charge) joins it, and the hold sweeper
 * completes it minutes later (settle-payment-calls.ts) as it was asked. While it is in doubt the booking
 * is not changed otherwise: a cancellation's booking is not moved or checked out, a fee being charged
 * is not waived.
 */
export type PaymentCall = PaymentCallsTable;

/**
 * How long one request (a cancellation, a fee's charge, the sweeper completing a call) waits for the
 * provider at most, across all it asks: half the time after which the sweeper completes a call left in
 * doubt (SETTLE_AFTER_MS), the rest left for its writes, so the sweeper never asks under the same keys
 * while the request still waits for an answer (extra calls, and Stripe answering the slower 409).
 */
export const PROVIDER_WAIT_MS = 60_000;

/** The deadline (ChargeRequest.deadline) of a request that starts asking the provider now. */
export function providerDeadline(): number {
  return performance.now() + PROVIDER_WAIT_MS;
}

/**
 * Writes the calls about to be made; a call already written (an earlier request's, in doubt) is kept,
 * and marked tried `now` (its attempted_at), as the sweeper marks the calls it takes: this request is
 * about to ask it again, for up to PROVIDER_WAIT_MS, and the sweeper takes a call only SETTLE_AFTER_MS
 * after its last try, so it does not ask under the same keys meanwhile. (Unmarked, a call asked first
 * 110 s before was the sweeper's 10 s into this request's wait.) Answers, for each, whether it was
 * written before: it is then asked again (`askedBefore`).
 */
export async function recordPaymentCalls(
  trx: Db,
  calls: readonly PaymentCall[],
  now: number,
): Promise<boolean[]> {
  const before: boolean[] = [];
  for (const call of calls) {
    const written = await trx
      .insertInto('payment_calls')
      .values(call)
      .onConflict((oc) => oc.columns(['key', 'kind', 'organisation_id']).doNothing())
      .executeTakeFirst();
    const joined = !(Number(written.numInsertedOrUpdatedRows ?? 0n) > 0);
    if (joined) {
      await trx
        .updateTable('payment_calls')
        .set({ attempted_at: now })
        .where('organisation_id', '=', call.organisation_id)
        .where('kind', '=', call.kind)
        .where('key', '=', call.key)
        // Never back in time (another process's clock, a try marked later than this one).
        .where((eb) => eb.or([eb('attempted_at', 'is', null), eb('attempted_at', '<', now)]))
        .execute();
    }
    before.push(joined);
  }
  return before;
}

/**
 * Whether `payments` may complete this call: only the provider it was asked of knows what became of it
 * (the local test mode would write a call asked of Stripe as refunded or charged, whatever Stripe did).
 * A call written before its provider was recorded is left to a provider that takes money.
 */
export function madeBy(
  call: Pick<PaymentCall, 'provider'>,
  payments: PaymentProvider | null | undefined,
): boolean {
  if (!payments) return false;
  return call.provider === null ? payments.takesMoney : call.provider === payments.name;
}

/** 503 payments_unavailable for a call in doubt that the provider configured now did not make. */
export function refuseUnlessMadeBy(call: PaymentCall, payments: PaymentProvider | null | undefined): void {
  if (madeBy(call, payments)) return;
  throw new AppError(
    'payments_unavailable',
    `A ${call.kind === 'refund' ? 'refund' : 'charge'} of this booking was asked of ${call.provider ?? 'the payment provider'} and its outcome is not known; it is completed once PAYMENT_PROVIDER is ${call.provider ?? 'that provider'} again.`,
  );
}

export function findPaymentCall(
  trx: Db,
  organisationId: string,
  kind: PaymentCall['kind'],
  key: string,
): Promise<PaymentCall | undefined> {
  return trx
    .selectFrom('payment_calls')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('kind', '=', kind)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Removes a call whose outcome is being written; false when it was not (or no longer) there. */
export async function dropPaymentCall(
  trx: Db,
  organisationId: string,
  kind: PaymentCall['kind'],
  key: string,
): Promise<boolean> {
  const result = await trx
    .deleteFrom('payment_calls')
    .where('organisation_id', '=', organisationId)
    .where('kind', '=', kind)
    .where('key', '=', key)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Refuses (409 conflict) a change of a booking whose cancellation waits for its refund's outcome: the
 * cancellation is completed as it was asked, on the booking as it was.
 */
export async function refuseWhileCancelling(
  trx: Db,
  organisationId: string,
  bookingId: string,
): Promise<void> {
  if (await cancellationInDoubt(trx, organisationId, bookingId)) {
    throw new AppError(
      'conflict',
      'This booking’s cancellation is being completed: its deposit’s refund waits for the payment provider’s answer.',
    );
  }
}

/**
 * The refund of this booking's deposit that a cancellation asked for and nobody wrote yet, if there is
 * one: a cancellation asked again joins it, completed as it was asked (as of its time).
 */
export function cancellationInDoubt(
  trx: Db,
  organisationId: string,
  bookingId: string,
): Promise<PaymentCall | undefined> {
  return trx
    .selectFrom('payment_calls')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('purpose', '=', 'cancellation')
    .orderBy('requested_at')
    .executeTakeFirst();
}

/** The charge of this fee asked of the provider and not written yet, if there is one. */
export function chargeOfFee(
  trx: Db,
  organisationId: string,
  bookingId: string,
  kind: FeeKind,
): Promise<PaymentCall | undefined> {
  return findPaymentCall(trx, organisationId, 'charge', chargeKey(bookingId, kind));
}

/** Our id of a fee's charge, from which its idempotency key is made (`charge:<booking>:<kind>`). */
export function chargeKey(bookingId: string, kind: FeeKind): string {
  return `${bookingId}:${kind}`;
}

/**
 * Asks the provider for a written refund: its answer, or null when it could not be reached.
 * `askedBefore`: the call was made before, its outcome never written (in doubt); the provider looks
 * for what it made then, as its idempotency key may be forgotten by now (Stripe's last 24 hours).
 */
export function askRefund(
  payments: PaymentProvider,
  call: PaymentCall,
  askedBefore: boolean,
  deadline: number,
): Promise<RefundOutcome | null> {
  return unlessUnreachable(() =>
    payments.refund({
      key: call.key,
      paymentRef: call.payment_ref ?? '',
      amountMinor: call.amount_minor,
      currency: call.currency,
      askedBefore,
      deadline,
    }),
  );
}

/**
 * The refund of a payment a booking did not need (an `unwanted_payment` call), keyed by its checkout:
 * what refundUnwantedPayment asks.
 */
export function unwantedPaymentRefund(
  checkout: {
    id: string;
    organisation_id: string;
    booking_id: string;
    amount_minor: number;
    currency: string;
  },
  paymentRef: string | null,
  by: { actor: string; provider: string },
  now: number,
): PaymentCall {
  return {
    organisation_id: checkout.organisation_id,
    kind: 'refund',
    key: checkout.id,
    booking_id: checkout.booking_id,
    purpose: 'unwanted_payment',
    amount_minor: checkout.amount_minor,
    currency: checkout.currency,
    payment_ref: paymentRef,
    fee_kind: null,
    customer_ref: null,
    payment_method_ref: null,
    description: null,
    reference: null,
    scope: null,
    reason: null,
    actor: by.actor,
    requested_at: now,
    attempted_at: null,
    provider: by.provider,
  };
}

/**
 * Whether the refund of a checkout's unwanted payment is settled: made (refund_ref), or refused for
 * good by the provider (refund_refused_at: returned by hand). Either way it is never asked again.
 */
export function refundSettled(checkout: {
  refund_ref?: string | null;
  refund_refused_at?: number | null;
}): boolean {
  return (checkout.refund_ref ?? null) !== null || (checkout.refund_refused_at ?? null) !== null;
}

/** The most of a provider's reason for refusing a refund that is kept (checkout_sessions.refund_refusal). */
const MAX_REFUSAL_LENGTH = 500;

/**
 * Returns a payment the booking did not need (an `unwanted_payment` call: a payment Stripe reports
 * after the hold lapsed, stripe-webhook-service.ts, or a lapsed hold's deposit, hold-sweeper.ts
 * refundLapsedDeposits), outside any transaction, and writes the refund's id on its checkout, or, when
 * the provider refused it for good (an answer, not an outage), when and why (refund_refused_at,
 * refund_refusal: returned by hand, never asked again); the call is done either way. The deposit of a hold that
 * lapsed unfinished, the checkout's own payment, is written refunded on its booking too. Answers the
 * provider's answer; out of reach, null: the call stays for the sweeper (settle-payment-calls.ts), or
 * the next webhook event about the session.
 */
export async function refundUnwantedPayment(
  db: Db,
  payments: PaymentProvider,
  call: PaymentCall,
  askedBefore: boolean,
  now: number,
  deadline: number = providerDeadline(),
): Promise<RefundOutcome | null> {
  const refund = await askRefund(payments, call, askedBefore, deadline);
  if (!refund) return null;
  await writeTransaction(db, async (trx) => {
    await takeCheckoutTurn(trx, call.key);
    if (!(await dropPaymentCall(trx, call.organisation_id, 'refund', call.key))) return;
    if (refund.status !== 'refunded') {
      // Refused for good (refunded by hand already, disputed): settled, and recorded, so that the
      // sweeper does not ask it again (the same key gets the same answer); returned by hand.
      await trx
        .updateTable('checkout_sessions')
        .set({ refund_refused_at: now, refund_refusal: refund.reason.slice(0, MAX_REFUSAL_LENGTH) })
        .where('organisation_id', '=', call.organisation_id)
        .where('id', '=', call.key)
        .where('refund_ref', 'is', null)
        .execute();
      return;
    }
    await trx
      .updateTable('checkout_sessions')
      .set({ refund_ref: refund.refundRef ?? '' })
      .where('organisation_id', '=', call.organisation_id)
      .where('id', '=', call.key)
      .where('refund_ref', 'is', null)
      .execute();
    const checkout = await trx
      .selectFrom('checkout_sessions')
      .select('payment_ref')
      .where('organisation_id', '=', call.organisation_id)
      .where('id', '=', call.key)
      .executeTakeFirst();
    // Not a second payment of a deposit paid another way (at the desk): that deposit stays paid.
    if (checkout?.payment_ref !== call.payment_ref) return;
    await trx
      .updateTable('bookings')
      .set({ deposit_status: 'refunded', updated_at: now })
      .where('organisation_id', '=', call.organisation_id)
      .where('id', '=', call.booking_id)
      .where('status', '=', 'expired')
      .where('deposit_status', '=', 'paid')
      .execute();
  });
  return refund;
}

/** Asks the provider for a written fee charge: its answer, or null when it could not be reached. */
export function askCharge(
  payments: PaymentProvider,
  call: PaymentCall,
  askedBefore: boolean,
  deadline: number,
): Promise<ChargeOutcome | null> {
  return unlessUnreachable(() =>
    payments.chargeSavedCard({
      key: call.key,
      customerRef: call.customer_ref ?? '',
      paymentMethodRef: call.payment_method_ref ?? '',
      amountMinor: call.amount_minor,
      currency: call.currency,
      description: call.description ?? '',
      askedBefore,
      deadline,
    }),
  );
}

async function unlessUnreachable<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (error) {
    if (isAppError(error) && error.code === 'payments_unavailable') return null;
    throw error;
  }
}

/** Whether an error refuses what was asked (a 4xx: conflict, not found...), rather than failing it. */
export function isRefusal(error: unknown): boolean {
  return isAppError(error) && error.status < 500;
}

/** One deposit refund a cancellation needs, as a run of its work asks for it. */
export interface RefundAsk {
  organisationId: string;
  bookingId: string;
  /** The checkout that took the deposit: the refund's key. */
  checkoutId: string;
  /** The provider's payment of the deposit. */
  paymentRef: string;
  amountMinor: number;
  currency: string;
}

/** The cancellation its refunds are asked for, written with each: it is completed as it was asked. */
export interface CancellationAsked {
  organisationId: string;
  reference: string;
  scope: 'one' | 'following';
  reason: string | null;
  actor: string;
  requestedAt: number;
}

/**
 * The deposit refunds of one cancellation (one booking, or a series' following visits), across the
 * runs of its work. A run asks for a refund it has no answer to (`ask`), and is rolled back, the
 * refunds written in its stead; they are made, and the next run finds each answer (`take`) and writes
 * it with the cancellation, removing the written call.
 */
export class DepositRefunds {
  /** Every run's refunds are asked under the one deadline of the request (providerDeadline). */
  readonly deadline = providerDeadline();
  /**
   * When these refunds are asked (the calls' attempted_at): the cancellation's own time, unless it is
   * completed as of an earlier one (the sweeper's, whose refunds are asked as it works them).
   */
  readonly askedAt: number | undefined;

  constructor(askedAt?: number) {
    this.askedAt = askedAt;
  }
  readonly #answers = new Map<string, RefundAnswer>();
  #asked: RefundAsk[] = [];
  #taken = new Set<string>();

  /** The provider's answer to this checkout's refund, if it was asked before this run; marked written. */
  take(checkoutId: string): RefundOutcome | undefined {
    const answer = this.#answers.get(checkoutId);
    if (answer) this.#taken.add(checkoutId);
    return answer?.outcome;
  }

  /** The run needs this refund made first: it writes nothing (withRefundsFirst rolls it back). */
  ask(ask: RefundAsk): void {
    this.#asked.push(ask);
  }

  /** The provider answered (here or, for the sweeper, before the work runs). */
  know(ask: RefundAsk, outcome: RefundOutcome): void {
    this.#answers.set(ask.checkoutId, { ask, outcome });
  }

  startRun(): void {
    this.#asked = [];
    this.#taken = new Set();
  }

  asked(): readonly RefundAsk[] {
    return this.#asked;
  }

  /** Answers the last run did not write (it refused, or no longer needed them). */
  unwritten(): RefundAnswer[] {
    return [...this.#answers].filter(([id]) => !this.#taken.has(id)).map(([, answer]) => answer);
  }
}

/** A refund the provider answered: what was asked, and its outcome. */
export interface RefundAnswer {
  ask: RefundAsk;
  outcome: RefundOutcome;
}

/**
 * Cancels, in `trx`, the booking of a refund the provider made that no run of its cancellation wrote
 * (the booking asked about was refused meanwhile: cancelled on its own, say, while a series' following
 * visits waited for their refunds), as the cancellation was asked (its reason, actor and time), writing
 * the refund with it. False when the booking is not to be cancelled (it is no longer live): the refund
 * is then written on its own.
 */
export type CancelRefunded = (trx: Db, answer: RefundAnswer, asked: CancellationAsked) => Promise<boolean>;

/** Runs after which the work gives up: each makes only the refunds that became due since the last. */
const MAX_RUNS = 4;

/**
 * Runs `work` (a cancellation, in a write transaction of its own) until it needs no refund it has no
 * answer to: a run that asks for refunds is undone and the refunds written as calls in its stead, in its
 * transaction and under its bookings' turns, so no change of those bookings comes between; the calls
 * are made outside any transaction, and their answers handed to the next run. A refund the provider cannot be reached for leaves its call
 * in doubt, and the cancellation answers 503 payments_unavailable: asking again completes it, and so
 * does the sweeper once the provider answers. A refund made that the work did not write (it was
 * refused meanwhile) cancels its booking all the same (`cancelRefunded`), or, the booking no longer
 * live, is written on its own: the money moved, and a live booking never has its deposit refunded.
 */
export async function withRefundsFirst<T>(
  db: Db,
  payments: PaymentProvider | null | undefined,
  asked: CancellationAsked,
  cancellation: {
    /** Takes the turns of every booking the work decides on (takeTurn), before it runs. */
    turns: (trx: Db) => Promise<unknown>;
    work: (trx: Db, refunds: DepositRefunds) => Promise<T>;
    cancelRefunded: CancelRefunded;
  },
  refunds = new DepositRefunds(),
): Promise<T> {
  const { turns, work, cancelRefunded } = cancellation;
  for (let run = 1; ; run += 1) {
    refunds.startRun();
    let step: { done: T } | { calls: PaymentCall[]; before: boolean[] };
    try {
      step = await writeTransaction(db, async (trx) => {
        // Taken outside the savepoint, whose rollback would let them go (PostgreSQL's advisory locks):
        // held until the calls are written, no change of these bookings comes between the decision and
        // its calls. Written later, a move in between left a refund made for a booking kept live.
        await turns(trx);
        await sql`savepoint refunds_first`.execute(trx);
        const done = await work(trx, refunds);
        if (refunds.asked().length === 0) {
          await sql`release refunds_first`.execute(trx);
          return { done };
        }
        // The work is undone and the refunds it needs written as calls instead, in its transaction.
        await sql`rollback to refunds_first`.execute(trx);
        await sql`release refunds_first`.execute(trx);
        if (run >= MAX_RUNS) {
          throw new AppError(
            'payments_unavailable',
            'The refunds due changed each time they were made; try again.',
          );
        }
        if (!payments) throw new Error('A cancellation asked for a refund without a payment provider');
        const calls = refunds.asked().map((ask) => refundCall(ask, asked, payments.name));
        const before = await recordPaymentCalls(trx, calls, refunds.askedAt ?? asked.requestedAt);
        for (const [i, call] of calls.entries()) {
          const written = before[i] && (await findPaymentCall(trx, call.organisation_id, 'refund', call.key));
          if (written) refuseUnlessMadeBy(written, payments);
        }
        return { calls, before };
      });
    } catch (error) {
      if (isRefusal(error)) await writeRefundsAlone(db, refunds, asked, cancelRefunded);
      throw error;
    }
    if ('done' in step) {
      await writeRefundsAlone(db, refunds, asked, cancelRefunded);
      return step.done;
    }
    const { calls, before } = step;
    const answers = await Promise.all(
      calls.map((call, i) => askRefund(payments!, call, before[i]!, refunds.deadline)),
    );
    refunds.asked().forEach((ask, i) => {
      const outcome = answers[i];
      if (outcome) refunds.know(ask, outcome);
    });
    if (answers.includes(null)) {
      throw new AppError(
        'payments_unavailable',
        'The payment provider could not be reached to refund the deposit. The booking is not cancelled yet: its cancellation is completed as soon as the provider answers, or when it is asked again.',
      );
    }
  }
}

/** The written call of a cancellation's refund. */
function refundCall(ask: RefundAsk, asked: CancellationAsked, provider: string): PaymentCall {
  return {
    organisation_id: ask.organisationId,
    kind: 'refund',
    key: ask.checkoutId,
    booking_id: ask.bookingId,
    purpose: 'cancellation',
    amount_minor: ask.amountMinor,
    currency: ask.currency,
    payment_ref: ask.paymentRef,
    fee_kind: null,
    customer_ref: null,
    payment_method_ref: null,
    description: null,
    reference: asked.reference,
    scope: asked.scope,
    reason: asked.reason,
    actor: asked.actor,
    requested_at: asked.requestedAt,
    attempted_at: null,
    provider,
  };
}

/**
 * Writes refunds the provider answered that no cancellation wrote (it was refused, or no longer needed
 * them): an accepted refund cancels its booking while it is live (`cancelRefunded`); otherwise it is
 * recorded on its checkout and the booking's paid deposit is `refunded` (its updated_at the time the
 * refunds were asked: the cancellation's, or the sweeper's completing it); either way its call is done.
 * Only a call still written is: another run may have written it.
 */
async function writeRefundsAlone(
  db: Db,
  refunds: DepositRefunds,
  asked: CancellationAsked,
  cancelRefunded: CancelRefunded,
): Promise<void> {
  const answers = refunds.unwritten();
  if (answers.length === 0) return;
  const now = refunds.askedAt ?? asked.requestedAt;
  await writeTransaction(db, async (trx) => {
    for (const answer of answers) {
      const { ask, outcome } = answer;
      if (!(await findPaymentCall(trx, ask.organisationId, 'refund', ask.checkoutId))) continue;
      if (outcome.status === 'refunded' && (await cancelRefunded(trx, answer, asked))) continue;
      if (!(await dropPaymentCall(trx, ask.organisationId, 'refund', ask.checkoutId))) continue;
      if (outcome.status !== 'refunded') continue;
      await trx
        .updateTable('checkout_sessions')
        .set({ refund_ref: outcome.refundRef ?? '' })
        .where('organisation_id', '=', ask.organisationId)
        .where('id', '=', ask.checkoutId)
        .where('refund_ref', 'is', null)
        .execute();
      await trx
        .updateTable('bookings')
        .set({ deposit_status: 'refunded', updated_at: now })
        .where('organisation_id', '=', ask.organisationId)
        .where('id', '=', ask.bookingId)
        .where('deposit_status', '=', 'paid')
        .execute();
    }
  });
}

import type Stripe from 'stripe';
import type { Db } from '../data/database.ts';
import { expireHolds } from '../data/hold-expiry.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { AppError } from '../domain/errors.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { completeCardSetup, expireCardSetup, findCardSetup } from './card-setup-service.ts';
import { checkoutState, confirmDeposit, getCheckout, takeCheckoutTurn } from './checkout-service.ts';
import {
  type PaymentCall,
  recordPaymentCalls,
  refundSettled,
  refundUnwantedPayment,
  unwantedPaymentRefund,
} from './payment-calls.ts';
import { isStripeAmountOf } from './stripe-amounts.ts';
import type { StripeProvider } from './stripe-provider.ts';

/**
 * What Stripe reports at POST /webhooks/stripe, applied to our bookings. Stripe delivers at least
 * once, in no particular order, and retries until it gets a 2xx; so:
 *
 * - each event is applied once: its id is stored (payment_events) in the transaction that applies it,
 *   and a delivery whose id is already stored changes nothing;
 * - an event is never trusted for state: the session it names is read back from Stripe, so a stale or
 *   reordered event (an `expired` arriving after the payment) applies what is true now, and applying
 *   the truth twice is a no-op;
 * - only sessions we opened are touched (found by client_reference_id, our own id);
 * - only for the money we asked: a session (as the event shows it, or as Stripe says it is now) whose
 *   amount or currency is not the deposit's (a card setup: any amount at all, or another currency) is
 *   not applied; the booking stays as it was, the event is stored, and the outcome `mismatched` is
 *   answered with a 2xx (a retry would say the same) and logged by the route, for a person to look into;
 * - a payment the booking no longer awaits is refunded after the transaction that applies the event,
 *   never inside it (payment-calls.ts): the refund is written as a call with the event, made, and its
 *   outcome written. If Stripe cannot be reached for it, the event is still applied (answered 200); the
 *   hold sweeper makes the refund once Stripe answers (settle-payment-calls.ts);
 * - Stripe waits for the answer seconds only (it asks for a 2xx quickly, and counts a delivery
 *   unanswered after about 20 s as timed out, and delivers it again): everything a delivery asks of
 *   Stripe (the session and setup read back, a refund) is under one deadline, WEBHOOK_WAIT_MS. A read
 *   not answered by then is answered 503 with nothing written (Stripe delivers the event again); a
 *   refund not answered by then is left in doubt to the sweeper, the event applied.
 */

/**
 * How long one webhook delivery waits for Stripe at most, across all it asks: half the 20 s or so
 * after which Stripe gives up on the delivery, the rest left for our writes and the network.
 */
export const WEBHOOK_WAIT_MS = 10_000;

const ACTOR = 'payment:stripe';

const CHECKOUT_EVENTS = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
]);

export type WebhookOutcome = 'applied' | 'replayed' | 'ignored' | 'mismatched';

export async function applyStripeEvent(
  db: Db,
  stripe: StripeProvider,
  event: Stripe.Event,
  now: number,
): Promise<WebhookOutcome> {
  if (!CHECKOUT_EVENTS.has(event.type)) return 'ignored';
  const deadline = performance.now() + WEBHOOK_WAIT_MS;
  const named = event.data.object as Stripe.Checkout.Session;
  const session = await stripe.retrieveCheckoutSession(named.id, deadline);
  const ours = session.client_reference_id;
  if (!ours) return 'ignored';
  const delivery = { event, session, now, deadline };
  if (session.mode === 'setup') return applySetupSession(db, stripe, delivery, ours);
  if (session.mode === 'payment') return applyPaymentSession(db, stripe, delivery, ours);
  return 'ignored';
}

/** A delivery being applied: its event, the session as Stripe has it now, and the delivery's deadline. */
interface Delivery {
  event: Stripe.Event;
  session: Stripe.Checkout.Session;
  now: number;
  /** When it stops waiting for Stripe (performance.now(), WEBHOOK_WAIT_MS on). */
  deadline: number;
}

async function applyPaymentSession(
  db: Db,
  stripe: StripeProvider,
  { event, session, now, deadline }: Delivery,
  checkoutId: string,
): Promise<WebhookOutcome> {
  const successor =
    session.status === 'expired' && !(await isRecorded(db, event))
      ? await openedForRestOfHold(db, stripe, [namedSession(event), session], checkoutId, now, deadline)
      : null;
  const applied = await writeTransaction(db, async (trx): Promise<[WebhookOutcome, RefundToMake?]> => {
    await takeCheckoutTurn(trx, checkoutId);
    const row = await trx
      .selectFrom('checkout_sessions')
      .select([
        'id',
        'organisation_id',
        'booking_id',
        'status',
        'amount_minor',
        'currency',
        'payment_ref',
        'refund_ref',
        'refund_refused_at',
      ])
      .where('id', '=', checkoutId)
      .executeTakeFirst();
    if (!row) return ['ignored'];
    if (!(await recordEvent(trx, row.organisation_id, event, now))) return ['replayed'];
    const deposit = { amountMinor: row.amount_minor, currency: row.currency };
    if (![namedSession(event), session].every((s) => chargesExactly(s, deposit))) return ['mismatched'];
    const paymentRef = refOf(session.payment_intent);
    const paid = session.status === 'complete' && session.payment_status !== 'unpaid';
    // Its refund made, or refused for good (returned by hand): never asked again, whatever comes next.
    const refundDue = !refundSettled(row);
    if (paid && row.status !== 'paid') {
      const state = await checkoutState(trx, row.id, now);
      if (state === 'open' || state === 'abandoned') {
        await confirmDeposit(trx, row.id, now, ACTOR, { providerRef: session.id, paymentRef });
      } else if (paymentRef && refundDue) {
        // Paid after the hold lapsed or the booking left pending_payment: the money goes back.
        await setCheckoutRefs(trx, row, { provider_ref: session.id, payment_ref: paymentRef });
        return ['applied', await refundToMake(trx, row, paymentRef, now)];
      }
    } else if (paid && row.payment_ref === null && paymentRef && refundDue) {
      // The deposit was paid another way first (at the desk, say, which closed this checkout as paid
      // while Stripe's page stayed open): this second payment goes back. payment_ref stays unset, so
      // a later cancellation does not take the desk's deposit for this one.
      await setCheckoutRefs(trx, row, { provider_ref: session.id });
      return ['applied', await refundToMake(trx, row, paymentRef, now)];
    } else if (session.status === 'expired' && (row.status === 'open' || row.status === 'abandoned')) {
      const state = await checkoutState(trx, row.id, now);
      if (successor && (state === 'open' || state === 'abandoned')) {
        // Only Stripe's session ended, not the hold: the payment link leads to the one that follows.
        await trx
          .updateTable('checkout_sessions')
          .set({ provider_url: successor })
          .where('organisation_id', '=', row.organisation_id)
          .where('id', '=', row.id)
          .execute();
      } else {
        await lapseHold(trx, row, now);
      }
    } else {
      await setCheckoutRefs(trx, row, { provider_ref: session.id });
    }
    return ['applied'];
  });
  const [outcome, refund] = applied;
  if (refund) await refundUnwantedPayment(db, stripe, refund.call, refund.askedBefore, now, deadline);
  return outcome;
}

/**
 * Stripe keeps a Checkout Session open 24 hours at most, while a deposit may be held for up to a week
 * (pending_payment_hold_minutes): a session that expired with the hold still running ends only
 * itself. Another is opened for the rest of the hold, as the first was: its amount, its return URLs,
 * under a key made from the session it follows and its own expiry (a delivery repeated at once opens
 * no third; one repeated later asks another expiry, which Stripe would refuse under the same key).
 * Opened before the transaction, as every Stripe call: its URL, or null when the hold ends with the
 * session (the hold lapses).
 */
async function openedForRestOfHold(
  db: Db,
  stripe: StripeProvider,
  [named, expired]: [Pick<Stripe.Checkout.Session, 'amount_total' | 'currency'>, Stripe.Checkout.Session],
  checkoutId: string,
  now: number,
  deadline: number,
): Promise<string | null> {
  const view = await getCheckout(db, checkoutId, now).catch((error: unknown) => {
    // Not ours (a session another system opened with an id of its own): the event is ignored.
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  });
  if (!view || (view.state !== 'open' && view.state !== 'abandoned')) return null;
  if (view.expiresAt - now < REOPEN_MARGIN_MS || !expired.success_url || !expired.cancel_url) return null;
  // A session for other money is not applied (below), so nothing follows it either.
  const deposit = { amountMinor: view.amountMinor, currency: view.currency };
  if (![named, expired].every((s) => chargesExactly(s, deposit))) return null;
  return stripe.openCheckout(
    {
      id: view.sessionId,
      bookingReference: view.booking.reference,
      amountMinor: view.amountMinor,
      currency: view.currency,
      expiresAt: view.expiresAt,
      createdAt: now,
      successUrl: expired.success_url,
      cancelUrl: expired.cancel_url,
      replaces: expired.id,
    },
    '',
    deadline,
  );
}

/** A hold that ends within this of Stripe's expiry of its session ends with it: nothing is reopened. */
const REOPEN_MARGIN_MS = 120_000;

/** Writes the refund of a payment the booking did not need, as a call to make once this commits. */
async function refundToMake(
  trx: Db,
  row: { id: string; organisation_id: string; booking_id: string; amount_minor: number; currency: string },
  paymentRef: string,
  now: number,
): Promise<RefundToMake> {
  const call = unwantedPaymentRefund(row, paymentRef, { actor: ACTOR, provider: 'stripe' }, now);
  const [askedBefore] = await recordPaymentCalls(trx, [call], now);
  return { call, askedBefore: askedBefore! };
}

/** A refund written as a call, and whether an earlier event's had written (and asked) it already. */
interface RefundToMake {
  call: PaymentCall;
  askedBefore: boolean;
}

/**
 * Stripe expired the checkout: it can no longer be paid, so the booking's hold lapses now (it has
 * usually lapsed already; a session expired early, from the dashboard say, ends it early).
 */
async function lapseHold(
  trx: Db,
  row: { id: string; organisation_id: string; booking_id: string },
  now: number,
): Promise<void> {
  const booking = await trx
    .selectFrom('bookings')
    .select(['id', 'organisation_id', 'status', 'hold_expires_at'])
    .where('organisation_id', '=', row.organisation_id)
    .where('id', '=', row.booking_id)
    .executeTakeFirstOrThrow();
  if (booking.status === 'pending_payment') {
    await expireHolds(trx, [booking], now, ACTOR, logBookingEvent);
  } else {
    await trx
      .updateTable('checkout_sessions')
      .set({ status: 'expired', completed_at: now })
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.id)
      .where('status', 'in', ['open', 'abandoned'])
      .execute();
  }
}

async function applySetupSession(
  db: Db,
  stripe: StripeProvider,
  { event, session, now, deadline }: Delivery,
  setupId: string,
): Promise<WebhookOutcome> {
  // Read from Stripe before the transaction: the card saved, and to whom.
  const intentId = session.status === 'complete' ? refOf(session.setup_intent) : null;
  const intent = intentId ? await stripe.retrieveSetupIntent(intentId, deadline) : null;
  return writeTransaction(db, async (trx) => {
    const setup = await findCardSetup(trx, setupId);
    if (!setup) return 'ignored';
    if (!(await recordEvent(trx, setup.organisation_id, event, now))) return 'replayed';
    const { currency } = await trx
      .selectFrom('bookings')
      .select('currency')
      .where('organisation_id', '=', setup.organisation_id)
      .where('id', '=', setup.booking_id)
      .executeTakeFirstOrThrow();
    if (![namedSession(event), session].every((s) => savesCardOnly(s, currency))) return 'mismatched';
    if (intent?.status === 'succeeded') {
      const paymentMethodRef = refOf(intent.payment_method);
      const customerRef = refOf(intent.customer) ?? refOf(session.customer);
      if (!paymentMethodRef || !customerRef) {
        throw new AppError('server_error', `Stripe's setup ${intent.id} succeeded without a saved card`);
      }
      await completeCardSetup(
        trx,
        setup,
        { customerRef, paymentMethodRef, providerRef: session.id },
        now,
        ACTOR,
      );
    } else if (session.status === 'expired') {
      await expireCardSetup(trx, setup, now);
    }
    return 'applied';
  });
}

/** The session as the event shows it (its amount and currency, which the event's id vouches for). */
function namedSession(event: Stripe.Event): Pick<Stripe.Checkout.Session, 'amount_total' | 'currency'> {
  return event.data.object as Stripe.Checkout.Session;
}

/** A payment-mode session for exactly the deposit: its amount in minor units and its currency. */
function chargesExactly(
  session: Pick<Stripe.Checkout.Session, 'amount_total' | 'currency'>,
  deposit: { amountMinor: number; currency: string },
): boolean {
  return (
    isStripeAmountOf(session.amount_total, deposit.amountMinor, deposit.currency) &&
    session.currency?.toLowerCase() === deposit.currency.toLowerCase()
  );
}

/**
 * A setup-mode session takes no money: no amount (or 0), and the booking's currency where it names
 * one (setup sessions are opened in it).
 */
function savesCardOnly(
  session: Pick<Stripe.Checkout.Session, 'amount_total' | 'currency'>,
  currency: string,
): boolean {
  const amount = session.amount_total ?? 0;
  return (
    amount === 0 && (session.currency == null || session.currency.toLowerCase() === currency.toLowerCase())
  );
}

/** Stores the event's id; false when it was stored before (a redelivery: nothing is applied). */
async function recordEvent(
  trx: Db,
  organisationId: string,
  event: Stripe.Event,
  now: number,
): Promise<boolean> {
  const result = await trx
    .insertInto('payment_events')
    .values({
      organisation_id: organisationId,
      provider: 'stripe',
      event_id: event.id,
      type: event.type,
      received_at: now,
    })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

/** Whether the event was applied before (a delivery repeated): it opens nothing at Stripe again. */
async function isRecorded(db: Db, event: Stripe.Event): Promise<boolean> {
  const row = await db
    .selectFrom('payment_events')
    .select('event_id')
    .where('provider', '=', 'stripe')
    .where('event_id', '=', event.id)
    .executeTakeFirst();
  return row !== undefined;
}

async function setCheckoutRefs(
  trx: Db,
  row: { id: string; organisation_id: string },
  refs: { provider_ref?: string; payment_ref?: string; refund_ref?: string | null },
): Promise<void> {
  await trx
    .updateTable('checkout_sessions')
    .set(refs)
    .where('organisation_id', '=', row.organisation_id)
    .where('id', '=', row.id)
    .execute();
}

/** The id of an expandable Stripe field (an id, an object, or nothing). */
function refOf(field: string | { id: string } | null | undefined): string | null {
  if (!field) return null;
  return typeof field === 'string' ? field : field.id;
}

import Stripe from 'stripe';
import { AppError } from '../domain/errors.ts';
import type {
  CardSetupSession,
  ChargeOutcome,
  ChargeRequest,
  CheckoutSession,
  RefundOutcome,
  RefundRequest,
  StripeSettings,
} from './payment-provider.ts';
import { toStripeAmount } from './stripe-amounts.ts';
import type { StripeProvider } from './stripe-provider.ts';

/**
 * PAYMENT_PROVIDER=stripe, through the official `stripe` package: deposits are Checkout Sessions in
 * payment mode, Booking Protection cards are saved by Checkout Sessions in setup mode, refunds are
 * Refunds of the deposit's PaymentIntent, and fees are PaymentIntents confirmed off-session on the
 * saved card. What Stripe reports back arrives at POST /webhooks/stripe (stripe-webhook-service.ts).
 *
 * Every create call carries an idempotency key made from our own ids (the checkout session, the card
 * setup, the booking and fee kind), never a random one: a call repeated after a crash gets Stripe's
 * first answer back, so a deposit is never refunded twice and a fee never charged twice. Stripe keeps
 * keys for 24 hours: a refund or charge asked again (its outcome never written) first looks for what
 * the first ask made, by the metadata it carries, and is made anew only if there is none.
 */
/**
 * Stripe's shortest and longest Checkout Session lifetimes: a hold shorter than 30 minutes gets a
 * session that outlives it (a payment arriving after the hold lapsed is refunded, see the webhook
 * service), a longer one is cut at 24 hours.
 */
const MIN_SESSION_SECONDS = 30 * 60 + 60;
const MAX_SESSION_SECONDS = 24 * 60 * 60 - 60;

/** Stripe's API, and the origin of Stripe Checkout's hosted pages (every session's `url`). */
const STRIPE_API_ORIGIN = 'https://api.stripe.com';
const STRIPE_CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

/**
 * Where the customer is handed over to: Stripe Checkout; and when STRIPE_API_BASE points elsewhere,
 * that origin too, where a stand-in serves its hosted pages beside its API (through an egress proxy,
 * Stripe's own page is still the one the customer sees).
 */
function stripeHandOverOrigins(apiBase: URL): string[] {
  return apiBase.origin === STRIPE_API_ORIGIN
    ? [STRIPE_CHECKOUT_ORIGIN]
    : [STRIPE_CHECKOUT_ORIGIN, apiBase.origin];
}

export function makeStripeProvider(settings: StripeSettings): StripeProvider {
  const { apiBase } = settings;
  const defaultPort = apiBase.protocol === 'https:' ? 443 : 80;
  const stripe = new Stripe(settings.secretKey, {
    host: apiBase.hostname,
    port: apiBase.port === '' ? defaultPort : Number(apiBase.port),
    protocol: apiBase.protocol === 'https:' ? 'https' : 'http',
    // Repeats are safe (idempotency keys); a short pause is better than a failed cancellation.
    maxNetworkRetries: TRIES - 1,
    timeout: TRY_TIMEOUT_MS,
    telemetry: false,
  });
  const checkoutUrl = (sessionId: string, publicBaseUrl: string) =>
    `${publicBaseUrl}/checkout/${encodeURIComponent(sessionId)}`;

  /**
   * The refund made under this key before, if any, found by the metadata it was made with: a call in
   * doubt is asked again, and after 24 hours Stripe no longer knows its idempotency key (a second
   * refund would be refused as "already refunded", read as Stripe refusing it).
   */
  const refundMadeFor = (request: RefundRequest): Promise<Stripe.Refund | undefined> =>
    findInPages(
      request.deadline,
      (page, options) =>
        stripe.refunds.list({ payment_intent: request.paymentRef, limit: 100, ...page }, options),
      (refund) => refund.metadata?.checkout_session === request.key,
    );
  /** The charge made under this key before, if any (after 24 hours, asking again would charge anew). */
  const chargeMadeFor = (request: ChargeRequest): Promise<Stripe.PaymentIntent | undefined> =>
    findInPages(
      request.deadline,
      (page, options) =>
        stripe.paymentIntents.list({ customer: request.customerRef, limit: 100, ...page }, options),
      (intent) => intent.metadata?.charge === request.key,
    );

  /**
   * The outcome of a fee's PaymentIntent, taken as far as it can go off-session. One found half way
   * (what a request Stripe answered 500 made, or a charge asked before) is neither charged nor failed:
   *
   * - `requires_confirmation`: made, never confirmed (the 500 came between the two), so the card was
   *   never tried. It is confirmed now, as the charge was asked: a PaymentIntent takes the money at
   *   most once, so this cannot charge twice, even if Stripe rolls the 500'd request forward as well.
   * - `requires_action`: the card's bank asks the cardholder to authenticate, which an off-session
   *   charge cannot ask of them (nobody is given the intent's secret): the customer must act, as for
   *   the `authentication_required` decline. It is cancelled at Stripe first, so nothing can be
   *   charged behind the failure written; its reason says the customer has to authenticate.
   *
   * Still half way after that (or moved on at Stripe meanwhile and unreadable), it stays in doubt.
   */
  const chargeCompleted = async (
    intent: Stripe.PaymentIntent,
    request: ChargeRequest,
    moves = 2,
  ): Promise<ChargeOutcome> => {
    const finished = chargeOutcome(intent);
    if (finished) return finished;
    const awaitsCustomer = intent.status === 'requires_action';
    if (moves === 0 || (!awaitsCustomer && intent.status !== 'requires_confirmation')) {
      throw new Error(`Stripe's charge ${intent.id} is ${intent.status}`);
    }
    let moved: Stripe.PaymentIntent;
    try {
      moved = await beforeDeadline(request.deadline, (options) =>
        awaitsCustomer
          ? stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'abandoned' }, options)
          : stripe.paymentIntents.confirm(intent.id, { off_session: true }, options),
      );
    } catch (error) {
      if (
        !(error instanceof Stripe.errors.StripeInvalidRequestError) ||
        error.code !== 'payment_intent_unexpected_state'
      ) {
        throw error;
      }
      // Moved on at Stripe meanwhile (the 500'd request rolled forward, say): what it is now.
      moved = await beforeDeadline(request.deadline, (options) =>
        stripe.paymentIntents.retrieve(intent.id, {}, options),
      );
    }
    if (awaitsCustomer && moved.status === 'canceled') {
      return {
        status: 'failed',
        paymentRef: moved.id,
        reason:
          'the card needs the customer to authenticate the payment, which cannot be asked of them off-session (requires_action); nothing was charged',
      };
    }
    return chargeCompleted(moved, request, moves - 1);
  };

  return {
    name: 'stripe',
    takesMoney: true,
    remote: true,
    handOverOrigins: stripeHandOverOrigins(apiBase),
    checkoutUrl,

    async openCheckout(session: CheckoutSession, publicBaseUrl: string, deadline?: number): Promise<string> {
      const metadata = { checkout_session: session.id, booking_reference: session.bookingReference };
      const created = await call(() =>
        beforeDeadline(deadline, (options) =>
          stripe.checkout.sessions.create(
            {
              mode: 'payment',
              client_reference_id: session.id,
              line_items: [
                {
                  quantity: 1,
                  price_data: {
                    currency: session.currency.toLowerCase(),
                    unit_amount: toStripeAmount(session.amountMinor, session.currency),
                    product_data: { name: `Deposit for booking ${session.bookingReference}` },
                  },
                },
              ],
              payment_intent_data: { metadata },
              metadata,
              expires_at: sessionExpiry(session.expiresAt, session.createdAt),
              success_url: session.successUrl ?? `${checkoutUrl(session.id, publicBaseUrl)}/done`,
              cancel_url: session.cancelUrl ?? checkoutUrl(session.id, publicBaseUrl),
            },
            {
              // One following an expired session ends 24 hours after it is opened at most: a delivery
              // told again later (the first's answer lost) asks another expires_at, which Stripe
              // refuses under the first's key for a day (idempotency_error), so the key carries it.
              idempotencyKey: session.replaces
                ? `checkout:${session.id}:after:${session.replaces}:${sessionExpiry(session.expiresAt, session.createdAt)}`
                : `checkout:${session.id}`,
              ...options,
            },
          ),
        ),
      );
      return hostedUrl(created);
    },

    async openCardSetup(setup: CardSetupSession, publicBaseUrl: string, deadline?: number): Promise<string> {
      const metadata = { card_setup: setup.id, booking_reference: setup.bookingReference };
      // The customer the card is saved to: no personal data, only which booking it is for.
      const customer = await call(() =>
        beforeDeadline(deadline, (options) =>
          stripe.customers.create({ metadata }, { idempotencyKey: `customer:${setup.id}`, ...options }),
        ),
      );
      const created = await call(() =>
        beforeDeadline(deadline, (options) =>
          stripe.checkout.sessions.create(
            {
              mode: 'setup',
              currency: setup.currency.toLowerCase(),
              customer: customer.id,
              client_reference_id: setup.id,
              setup_intent_data: { metadata },
              metadata,
              expires_at: sessionExpiry(setup.expiresAt, setup.createdAt),
              success_url: setup.successUrl ?? `${publicBaseUrl}/`,
              cancel_url: setup.cancelUrl ?? `${publicBaseUrl}/`,
            },
            { idempotencyKey: `card-setup:${setup.id}`, ...options },
          ),
        ),
      );
      return hostedUrl(created);
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      try {
        const made = request.askedBefore ? await refundMadeFor(request) : undefined;
        if (made) return refundOutcome(made);
        const refund = await pastServerErrors(
          `refund:${request.key}`,
          (idempotencyKey) =>
            beforeDeadline(request.deadline, (options) =>
              stripe.refunds.create(
                {
                  payment_intent: request.paymentRef,
                  amount: toStripeAmount(request.amountMinor, request.currency),
                  metadata: { checkout_session: request.key },
                },
                { idempotencyKey, ...options },
              ),
            ),
          () => refundMadeFor(request),
        );
        return refundOutcome(refund);
      } catch (error) {
        // Already refunded, by this very refund: one Stripe answered 500 and carried out after it was
        // looked for, the next key then refused. Written as refused, the customer who got the money
        // back would be told not, and the deposit shown as still paid.
        if (
          error instanceof Stripe.errors.StripeInvalidRequestError &&
          error.code === 'charge_already_refunded'
        ) {
          // Not found for want of an answer: in doubt, not refused.
          const made = await refundMadeFor(request).catch((listError: unknown) => {
            throw unavailable(listError);
          });
          if (made) return refundOutcome(made);
        }
        // Stripe answered no (already refunded elsewhere, a disputed charge): an answer, not an outage.
        if (error instanceof Stripe.errors.StripeInvalidRequestError) {
          return { status: 'refused', reason: error.message };
        }
        throw unavailable(error);
      }
    },

    async chargeSavedCard(request: ChargeRequest): Promise<ChargeOutcome> {
      try {
        const made = request.askedBefore ? await chargeMadeFor(request) : undefined;
        if (made) return await chargeCompleted(made, request);
        // Only ever under its one key, past a 500 too (unlike a refund, see pastServerErrors): Stripe
        // may still carry out a charge it answered 500 (rolled forward once the payment network had
        // it), after a list showed nothing, and one under a new key would take the money twice. What
        // the 500'd request made is taken if it is there; otherwise the charge stays in doubt, its
        // stored 500 answered to every repeat, until Stripe forgets the key a day on, and is then
        // found by its metadata, or made.
        const intent = await beforeDeadline(request.deadline, (options) =>
          stripe.paymentIntents.create(
            {
              amount: toStripeAmount(request.amountMinor, request.currency),
              currency: request.currency.toLowerCase(),
              customer: request.customerRef,
              payment_method: request.paymentMethodRef,
              off_session: true,
              confirm: true,
              description: request.description,
              metadata: { charge: request.key },
            },
            { idempotencyKey: `charge:${request.key}`, ...options },
          ),
        ).catch(async (error: unknown) => {
          const madeBefore500 = isServerError(error) ? await chargeMadeFor(request) : undefined;
          if (madeBefore500) return madeBefore500;
          throw error;
        });
        return await chargeCompleted(intent, request);
      } catch (error) {
        // A decline (or a card that needs the customer present) is Stripe's answer, with its reason.
        if (error instanceof Stripe.errors.StripeCardError) {
          const code = error.decline_code ?? error.code;
          return {
            status: 'failed',
            paymentRef: error.payment_intent?.id ?? null,
            reason: code ? `${error.message} (${code})` : error.message,
          };
        }
        throw unavailable(error);
      }
    },

    verifyEvent(rawBody: Buffer, signature: string, nowMs: number): Stripe.Event {
      return stripe.webhooks.constructEvent(
        rawBody,
        signature,
        settings.webhookSecret,
        undefined,
        undefined,
        nowMs,
      );
    },

    retrieveCheckoutSession: (id, deadline) =>
      call(() => beforeDeadline(deadline, (options) => stripe.checkout.sessions.retrieve(id, {}, options))),
    retrieveSetupIntent: (id, deadline) =>
      call(() => beforeDeadline(deadline, (options) => stripe.setupIntents.retrieve(id, {}, options))),
  };
}

/** The client's tries of one request (maxNetworkRetries 2), and its pauses between them at most. */
const TRIES = 3;
const PAUSES_MS = 500 + 1_000;
/** The client's timeout of one try (the `timeout` option, for a socket silent that long). */
const TRY_TIMEOUT_MS = 20_000;
/** A try shorter than this is not worth starting: the request gives up instead. */
const SHORTEST_TRY_MS = 500;

/**
 * One request to Stripe that is over by `deadline` (performance.now()), tries and pauses included:
 * each try's timeout is cut to fit, the wait ends at the deadline whatever the socket does (a timeout
 * bounds silence, not a slow trickle), and with too little time left it is not made at all. So the
 * client asks nothing more of Stripe once the request answered, and the sweeper never races it.
 */
async function beforeDeadline<T>(
  deadline: number | undefined,
  request: (options: Stripe.RequestOptions) => Promise<T>,
): Promise<T> {
  if (deadline === undefined) return request({});
  const left = deadline - performance.now();
  const timeout = Math.min(TRY_TIMEOUT_MS, Math.floor((left - PAUSES_MS) / TRIES));
  if (timeout < SHORTEST_TRY_MS) throw new Error('Stripe did not answer in time');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('Stripe did not answer in time')), left);
  });
  try {
    return await Promise.race([request({ timeout }), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The first object of a paginated list that `wanted`, each page asked before `deadline`. */
async function findInPages<T extends { id: string }>(
  deadline: number | undefined,
  page: (after: { starting_after?: string }, options: Stripe.RequestOptions) => Promise<Stripe.ApiList<T>>,
  wanted: (object: T) => boolean,
): Promise<T | undefined> {
  let after: { starting_after?: string } = {};
  for (;;) {
    const list = await beforeDeadline(deadline, (options) => page(after, options));
    const found = list.data.find(wanted);
    const last = list.data.at(-1);
    if (found || !list.has_more || !last) return found;
    after = { starting_after: last.id };
  }
}

/** Keys a refund is tried under, one after another, while Stripe answers each 500. */
const KEYS_PAST_SERVER_ERRORS = 3;

/**
 * Creates a refund under `key`, and past Stripe's 500s: Stripe stores a 500 under its idempotency key
 * and answers every repeat of it with that 500 for 24 hours, so a cancellation asked again under the
 * same key stayed in doubt (its booking not movable) for a day. What the 500'd request made, if
 * anything, is looked for (`madeBefore`, by its metadata, a list: consistent, unlike Stripe's search)
 * and taken; if nothing was made, the refund is asked under the next key of a fixed sequence
 * (`<key>:after-500:<n>`), the same for every ask, so two asks at once (a retried request and the
 * sweeper) share each key. Every ask walks the sequence from the first key: a stored 500 answers at
 * once, and what a later key made is found before that key is tried again.
 *
 * Stripe's 500 is indeterminate: it may still carry the request out later (its engineers roll some
 * forward), after the list showed nothing. For a deposit's refund that cannot move money twice: it is
 * the whole payment, and Stripe refunds no more than was paid, so of the two the later is refused. Not
 * for a fee's charge, which is never asked under a second key (chargeSavedCard).
 */
async function pastServerErrors<T>(
  key: string,
  create: (idempotencyKey: string) => Promise<T>,
  madeBefore: () => Promise<T | undefined>,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const idempotencyKey = attempt === 0 ? key : `${key}:after-500:${attempt}`;
    try {
      return await create(idempotencyKey);
    } catch (error) {
      if (!isServerError(error) || attempt + 1 >= KEYS_PAST_SERVER_ERRORS) throw error;
    }
    const made = await madeBefore();
    if (made) return made;
  }
}

/**
 * Stripe's own 500 (an api_error), stored under the key; not a network failure, nor a gateway's 502-504,
 * nor a 500 with the same JSON from a proxy in front of Stripe (the request may still be running
 * there): only Stripe sends its Request-Id header (`req_...`), which stripe-node sets as the error's
 * `requestId` (RequestSender's `_jsonResponseHandler`: `headers['request-id']`).
 */
function isServerError(error: unknown): boolean {
  return (
    error instanceof Stripe.errors.StripeAPIError &&
    error.statusCode === 500 &&
    typeof error.requestId === 'string' &&
    error.requestId.startsWith('req_')
  );
}

function refundOutcome(refund: Stripe.Refund): RefundOutcome {
  if (refund.status === 'failed' || refund.status === 'canceled') {
    return { status: 'refused', reason: refund.failure_reason ?? refund.status };
  }
  return { status: 'refunded', refundRef: refund.id };
}

/**
 * The outcome of a PaymentIntent that is done: taken (or being taken), or tried and declined or
 * cancelled; undefined half way (to confirm, or awaiting the customer: chargeCompleted).
 */
function chargeOutcome(intent: Stripe.PaymentIntent): ChargeOutcome | undefined {
  if (intent.status === 'succeeded' || intent.status === 'processing') {
    return { status: 'succeeded', paymentRef: intent.id };
  }
  if (intent.status !== 'requires_payment_method' && intent.status !== 'canceled') return undefined;
  return {
    status: 'failed',
    paymentRef: intent.id,
    reason: intent.last_payment_error?.message ?? `the payment is ${intent.status.replaceAll('_', ' ')}`,
  };
}

/** Stripe's expires_at (seconds) for a hold ending at `holdEndsAt`, inside Stripe's allowed range. */
function sessionExpiry(holdEndsAt: number, createdAt: number): number {
  const created = Math.floor(createdAt / 1000);
  const wanted = Math.ceil(holdEndsAt / 1000);
  return Math.min(Math.max(wanted, created + MIN_SESSION_SECONDS), created + MAX_SESSION_SECONDS);
}

function hostedUrl(session: Stripe.Checkout.Session): string {
  if (!session.url) throw new Error(`Stripe answered checkout session ${session.id} without a URL`);
  return session.url;
}

/** A Stripe call whose failure means "try again later" to our callers. */
async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw unavailable(error);
  }
}

function unavailable(error: unknown): AppError {
  // Stripe's message names no card or person; the key never appears in it.
  const detail = error instanceof Stripe.errors.StripeError ? `: ${error.message}` : '';
  return new AppError('payments_unavailable', `Stripe could not be reached or refused the request${detail}.`);
}

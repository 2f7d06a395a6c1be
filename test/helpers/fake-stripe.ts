import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local stand-in for the parts of Stripe's API the provider uses, answering Stripe-shaped JSON so
 * the real `stripe` package can be pointed at it (host, port, protocol): Checkout Sessions (create,
 * retrieve, expire), Customers, SetupIntents, PaymentIntents (off-session confirm, with a card that
 * declines; left unconfirmed or awaiting the customer's authentication; confirmed, cancelled and
 * retrieved; listed by customer), Refunds (listed by PaymentIntent). Like Stripe, it remembers every
 * Idempotency-Key: a request repeated with the same key gets the first answer back and creates nothing
 * (a different body under the same key is an idempotency_error), until it forgets them as Stripe does
 * after 24 hours (`forgetIdempotencyKeys`). Tests play the customer (pay, save a card, let a session expire) through its
 * controls, which answer the event Stripe would send; `signed` signs a delivery with the package's own
 * test-header helper.
 *
 * Like Stripe Checkout, it also serves the hosted page of each session (its `url`, at /c/pay/{id} on the
 * stand-in's own origin, so another origin than the booking server's) for a real browser: a button that
 * pays (or saves a card), whose answer delivers the signed event to `webhookUrl` and then sends the
 * customer on to the session's success_url, as Stripe does.
 */

type Json = Record<string, unknown>;

export interface FakeStripe {
  url: string;
  secretKey: string;
  webhookSecret: string;
  sessions: Map<string, Json>;
  paymentIntents: Map<string, Json>;
  refunds: Map<string, Json>;
  /** Every request: method, path, its Idempotency-Key, and when it arrived (performance.now()). */
  requests: { method: string; path: string; idempotencyKey: string | undefined; at: number }[];
  /** Called after an object is created, before Stripe answers (a test may crash the caller there). */
  afterCreate: ((kind: string, object: Json, response: ServerResponse) => boolean | undefined) | null;
  /**
   * A slow Stripe: while set, every POST is carried out at once but answered only once this settles
   * (a test holds a call open while it looks at what else the server still does).
   */
  holdAnswers: Promise<void> | null;
  /** A struggling Stripe: every answer (replays and lists too) is sent this many milliseconds late. */
  delayAnswers: number;
  /** Refunds are refused (a test of a cancellation Stripe does not accept). */
  refuseRefunds: boolean;
  /**
   * PaymentIntents created while this is set are left in this status instead of being charged:
   * `requires_confirmation`, made but never confirmed (a 500 came between the two, say);
   * `requires_action`, the card's bank asks the customer to authenticate. Confirming one in
   * `requires_confirmation` (POST /v1/payment_intents/{id}/confirm) charges it; one not yet paid can be
   * cancelled (POST …/cancel).
   */
  leaveIntentsIn: 'requires_confirmation' | 'requires_action' | null;
  /** Requests to this path are carried out, replays included, but their answers are lost. */
  loseAnswersTo: string | null;
  /**
   * The next `count` new requests to `path` (a key not seen before) fail with a 500 api_error, which,
   * as Stripe does, is stored under their Idempotency-Key and answered again to every repeat of it for
   * a day. `made`: the object was created before the error (a refund or charge made all the same);
   * `'later'`: it is created only when `reconcile` is called, as Stripe's engineers roll a request that
   * answered 500 forward once the incident is over (a list right after the 500 does not show it).
   * `byProxy`: the same JSON answered by a proxy in front of Stripe instead (no Request-Id header;
   * nothing stored under the key, `made` as above).
   */
  serverErrors: { path: string; count: number; made: boolean | 'later'; byProxy?: boolean } | null;
  /** Carries out the requests answered 500 with `made: 'later'`, as Stripe's reconciliation does. */
  reconcile(): void;
  /** Called as each API request arrives, before it is answered (a test acts at Stripe just then). */
  onRequest: ((request: { method: string; path: string; idempotencyKey: string | undefined }) => void) | null;
  /**
   * Where the hosted pages deliver what the customer did there (the signed event, before sending the
   * customer on), as Stripe does to the endpoint set up in its dashboard; null: nothing is delivered.
   */
  webhookUrl: string | null;
  /** What the hosted pages delivered to webhookUrl: the event's type and the endpoint's answer. */
  deliveries: { type: string; status: number }[];
  /** The customer pays a payment-mode session: it completes with a PaymentIntent. */
  pay(sessionId: string): Json;
  /** The customer saves a card in a setup-mode session (`declining`: a card later charges decline). */
  saveCard(sessionId: string, options?: { declining?: boolean }): Json;
  /** Stripe expires the session. */
  expire(sessionId: string): Json;
  /** The event Stripe would deliver about `object`. */
  event(type: string, object: Json): Json;
  /** A webhook delivery: the raw body and its Stripe-Signature, signed at `timestampSeconds`. */
  signed(event: Json, timestampSeconds: number, secret?: string): { payload: string; signature: string };
  /** PaymentIntents that took money (succeeded). */
  charged(): Json[];
  /**
   * Stripe prunes idempotency keys once they are 24 hours old: a request repeated later under the same
   * key is carried out again. The stand-in forgets every key it knows.
   */
  forgetIdempotencyKeys(): void;
  close(): Promise<void>;
}

const DECLINING = 'pm_card_chargeDeclinedInsufficientFunds';
/** The statuses a PaymentIntent can be cancelled in: not yet paid. */
const CANCELLABLE = new Set([
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'requires_capture',
]);

export async function startFakeStripe(): Promise<FakeStripe> {
  const stripeLib = new Stripe('sk_test_helper');
  const idempotent = new Map<string, { body: string; status: number; answer: string }>();
  const customers = new Map<string, Json>();
  const setupIntents = new Map<string, Json>();
  const declining = new Set<string>();
  /** Requests answered 500 that Stripe carries out later (serverErrors made 'later'). */
  const rolledForwardLater: (() => void)[] = [];
  let counter = 0;
  const id = (prefix: string) =>
    `${prefix}_test${(++counter).toString().padStart(6, '0')}${randomBytes(4).toString('hex')}`;
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  const fake: FakeStripe = {
    url: '',
    secretKey: 'sk_test_fake',
    webhookSecret: 'whsec_fake_secret',
    sessions: new Map(),
    paymentIntents: new Map(),
    refunds: new Map(),
    requests: [],
    afterCreate: null,
    holdAnswers: null,
    delayAnswers: 0,
    refuseRefunds: false,
    leaveIntentsIn: null,
    loseAnswersTo: null,
    serverErrors: null,
    onRequest: null,
    webhookUrl: null,
    deliveries: [],
    pay(sessionId) {
      const session = must(fake.sessions, sessionId);
      const intent = {
        id: id('pi'),
        object: 'payment_intent',
        amount: session.amount_total,
        amount_received: session.amount_total,
        currency: session.currency,
        status: 'succeeded',
        metadata: (session.payment_intent_data as Json | undefined)?.metadata ?? {},
      };
      fake.paymentIntents.set(intent.id, intent);
      Object.assign(session, {
        status: 'complete',
        payment_status: 'paid',
        payment_intent: intent.id,
        url: null,
      });
      return fake.event('checkout.session.completed', session);
    },
    saveCard(sessionId, options = {}) {
      const session = must(fake.sessions, sessionId);
      const paymentMethod = options.declining ? DECLINING : id('pm');
      if (options.declining) declining.add(paymentMethod);
      const intent = {
        id: id('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        customer: session.customer,
        payment_method: paymentMethod,
        usage: 'off_session',
      };
      setupIntents.set(intent.id, intent);
      Object.assign(session, { status: 'complete', setup_intent: intent.id, url: null });
      return fake.event('checkout.session.completed', session);
    },
    expire(sessionId) {
      const session = must(fake.sessions, sessionId);
      Object.assign(session, { status: 'expired', url: null });
      return fake.event('checkout.session.expired', session);
    },
    event(type, object) {
      return {
        id: id('evt'),
        object: 'event',
        api_version: '2026-10-28.endive',
        created: nowSeconds(),
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
        data: { object: structuredClone(object) },
      };
    },
    signed(event, timestampSeconds, secret = fake.webhookSecret) {
      const payload = JSON.stringify(event, null, 2);
      const signature = stripeLib.webhooks.generateTestHeaderString({
        payload,
        secret,
        timestamp: timestampSeconds,
      });
      return { payload, signature };
    },
    charged: () =>
      [...fake.paymentIntents.values()].filter((pi) => pi.status === 'succeeded' && pi.off_session),
    forgetIdempotencyKeys: () => idempotent.clear(),
    reconcile: () => {
      for (const carryOut of rolledForwardLater.splice(0)) carryOut();
    },
    // Connections still open end with it: a browser's keep-alive (or a request the test left waiting)
    // held the close past the hook's minute.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  /** One endpoint: what it creates or answers, or an error `[status, error]`. */
  const routes: [string, RegExp, (match: RegExpExecArray, params: Json) => Json | [number, Json]][] = [
    ['POST', /^\/v1\/checkout\/sessions$/, (_m, p) => createSession(p)],
    ['GET', /^\/v1\/checkout\/sessions\/([^/]+)$/, (m) => found(fake.sessions, m[1]!)],
    [
      'POST',
      /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/,
      (m) => {
        const session = fake.sessions.get(m[1]!);
        if (!session) return missing(m[1]!);
        if (session.status !== 'open')
          return invalid('Only Checkout Sessions with a status of open can be expired.');
        return Object.assign(session, { status: 'expired', url: null });
      },
    ],
    [
      'POST',
      /^\/v1\/customers$/,
      (_m, p) => {
        const customer = { id: id('cus'), object: 'customer', metadata: p.metadata ?? {} };
        customers.set(customer.id, customer);
        return customer;
      },
    ],
    ['GET', /^\/v1\/setup_intents\/([^/]+)$/, (m) => found(setupIntents, m[1]!)],
    ['POST', /^\/v1\/payment_intents$/, (_m, p) => createPaymentIntent(p)],
    ['GET', /^\/v1\/payment_intents\/([^/]+)$/, (m) => found(fake.paymentIntents, m[1]!)],
    [
      'POST',
      /^\/v1\/payment_intents\/([^/]+)\/confirm$/,
      (m) => {
        const intent = fake.paymentIntents.get(m[1]!);
        if (!intent) return missing(m[1]!);
        if (intent.status !== 'requires_confirmation') return unexpectedState(intent);
        return chargeIntent(intent);
      },
    ],
    [
      'POST',
      /^\/v1\/payment_intents\/([^/]+)\/cancel$/,
      (m, p) => {
        const intent = fake.paymentIntents.get(m[1]!);
        if (!intent) return missing(m[1]!);
        if (!CANCELLABLE.has(String(intent.status))) return unexpectedState(intent);
        return Object.assign(intent, {
          status: 'canceled',
          cancellation_reason: p.cancellation_reason ?? null,
        });
      },
    ],
    [
      'GET',
      /^\/v1\/payment_intents$/,
      (_m, p) => list([...fake.paymentIntents.values()].filter((pi) => pi.customer === p.customer)),
    ],
    [
      'GET',
      /^\/v1\/refunds$/,
      (_m, p) => list([...fake.refunds.values()].filter((r) => r.payment_intent === p.payment_intent)),
    ],
    [
      'POST',
      /^\/v1\/refunds$/,
      (_m, p) => {
        if (fake.refuseRefunds) return invalid('This charge cannot be refunded right now.');
        const intent = fake.paymentIntents.get(String(p.payment_intent));
        if (!intent) return missing(String(p.payment_intent));
        const already = [...fake.refunds.values()].filter((r) => r.payment_intent === intent.id);
        const amount = Number(p.amount ?? intent.amount);
        if (already.reduce((sum, r) => sum + Number(r.amount), 0) + amount > Number(intent.amount)) {
          return [
            400,
            {
              type: 'invalid_request_error',
              code: 'charge_already_refunded',
              message: 'Charge has already been refunded.',
            },
          ];
        }
        const refund = {
          id: id('re'),
          object: 'refund',
          amount,
          currency: intent.currency,
          payment_intent: intent.id,
          status: 'succeeded',
          metadata: p.metadata ?? {},
        };
        fake.refunds.set(refund.id, refund);
        return refund;
      },
    ],
  ];

  function createSession(p: Json): Json | [number, Json] {
    const mode = String(p.mode);
    const expiresAt = Number(p.expires_at);
    const item = (p.line_items as Json[] | undefined)?.[0];
    const price = item?.price_data as Json | undefined;
    if (mode === 'payment' && !price) return invalid('line_items is required in payment mode.');
    if (mode === 'setup' && !p.currency) return invalid('currency is required in setup mode.');
    const session: Json = {
      id: id('cs'),
      object: 'checkout.session',
      mode,
      status: 'open',
      payment_status: mode === 'setup' ? 'no_payment_required' : 'unpaid',
      client_reference_id: p.client_reference_id ?? null,
      customer: p.customer ?? null,
      currency: String(p.currency ?? price?.currency),
      amount_total: price ? Number(price.unit_amount) * Number(item?.quantity ?? 1) : null,
      line_item_name: (price?.product_data as Json | undefined)?.name ?? null,
      expires_at: expiresAt,
      metadata: p.metadata ?? {},
      payment_intent_data: p.payment_intent_data ?? null,
      payment_intent: null,
      setup_intent: null,
      success_url: p.success_url,
      cancel_url: p.cancel_url ?? null,
      url: '',
    };
    // The hosted page, on the stand-in's own origin (Stripe's is https://checkout.stripe.com).
    session.url = `${fake.url}/c/pay/${session.id}`;
    fake.sessions.set(String(session.id), session);
    return session;
  }

  function createPaymentIntent(p: Json): Json | [number, Json] {
    const intent: Json = {
      id: id('pi'),
      object: 'payment_intent',
      amount: Number(p.amount),
      currency: p.currency,
      customer: p.customer ?? null,
      payment_method: p.payment_method ?? null,
      off_session: p.off_session === 'true',
      description: p.description ?? null,
      metadata: p.metadata ?? {},
      status: 'requires_confirmation',
      last_payment_error: null,
      cancellation_reason: null,
    };
    fake.paymentIntents.set(String(intent.id), intent);
    if (fake.leaveIntentsIn === 'requires_action') {
      return Object.assign(intent, {
        status: 'requires_action',
        next_action: { type: 'use_stripe_sdk', use_stripe_sdk: {} },
      });
    }
    if (fake.leaveIntentsIn === 'requires_confirmation' || p.confirm !== 'true') return intent;
    return chargeIntent(intent);
  }

  /** Confirms a PaymentIntent: the card is charged, or declines. */
  function chargeIntent(intent: Json): Json | [number, Json] {
    if (declining.has(String(intent.payment_method))) {
      const error = {
        type: 'card_error',
        code: 'card_declined',
        decline_code: 'insufficient_funds',
        message: 'Your card has insufficient funds.',
      };
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
      return [402, { ...error, payment_intent: intent }];
    }
    return Object.assign(intent, { status: 'succeeded' });
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of request) body += chunk;
    const url = new URL(request.url ?? '/', 'http://stripe.test');
    const method = request.method ?? 'GET';
    const key = request.headers['idempotency-key'] as string | undefined;
    fake.requests.push({ method, path: url.pathname, idempotencyKey: key, at: performance.now() });
    fake.onRequest?.({ method, path: url.pathname, idempotencyKey: key });
    // A customer's browser at the hosted page: no API key, as at Stripe.
    const hosted = /^\/c\/pay\/([^/]+)$/.exec(url.pathname);
    if (hosted) {
      await hostedPage(method, decodeURIComponent(hosted[1]!), response);
      return;
    }
    if (fake.delayAnswers > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayAnswers));
    const send = (status: number, answer: string, byStripe = true) => {
      // The client gave up waiting (its timeout) and closed the connection.
      if (response.destroyed) return;
      if (fake.loseAnswersTo === url.pathname) {
        response.socket?.destroy();
        return;
      }
      response.writeHead(status, {
        'content-type': 'application/json',
        ...(byStripe ? { 'request-id': id('req') } : {}),
        // A stored 500 is answered again to every retry under its key: retrying is a no-op.
        ...(status >= 500 && byStripe ? { 'stripe-should-retry': 'false' } : {}),
      });
      response.end(answer);
    };
    if (request.headers.authorization !== `Bearer ${fake.secretKey}`) {
      send(
        401,
        JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }),
      );
      return;
    }
    const earlier = key ? idempotent.get(`${method} ${url.pathname} ${key}`) : undefined;
    if (earlier) {
      if (earlier.body !== body) {
        send(
          400,
          JSON.stringify({
            error: {
              type: 'idempotency_error',
              message:
                'Keys for idempotent requests can only be used with the same parameters they were first used with.',
            },
          }),
        );
        return;
      }
      response.setHeader('idempotent-replayed', 'true');
      send(earlier.status, earlier.answer);
      return;
    }
    const route = routes.find(([m, pattern]) => m === method && pattern.test(url.pathname));
    if (!route) {
      send(
        404,
        JSON.stringify({
          error: {
            type: 'invalid_request_error',
            message: `Unrecognized request URL (${method}: ${url.pathname}).`,
          },
        }),
      );
      return;
    }
    const params = method === 'GET' ? parseForm(url.searchParams.toString()) : parseForm(body);
    const failing = fake.serverErrors;
    const serverError = method === 'POST' && failing?.path === url.pathname && failing.count > 0;
    if (serverError) failing.count -= 1;
    // A 500 whose object was made first, made later, or a 500 alone.
    if (serverError && failing.made === 'later') {
      rolledForwardLater.push(() => route[2](route[1].exec(url.pathname)!, params));
    }
    const result: Json | [number, Json] =
      serverError && failing.made !== true ? {} : route[2](route[1].exec(url.pathname)!, params);
    const [status, object] = serverError
      ? [500, { error: { type: 'api_error', message: 'An unknown error occurred' } }]
      : Array.isArray(result)
        ? [result[0], { error: result[1] }]
        : [200, result];
    const answer = JSON.stringify(object);
    if (serverError && failing.byProxy) {
      send(status, answer, false);
      return;
    }
    if (key && method === 'POST')
      idempotent.set(`${method} ${url.pathname} ${key}`, { body, status, answer });
    if (status === 200 && method === 'POST' && fake.afterCreate?.(String(object.object), object, response))
      return;
    if (method === 'POST' && fake.holdAnswers) await fake.holdAnswers;
    send(status, answer);
  }

  /**
   * The hosted page of a session: GET shows it with one button, POST is the customer paying (payment
   * mode) or saving a card (setup mode). The event is delivered to webhookUrl before the customer is
   * sent on to success_url, so the page they land on already knows.
   */
  async function hostedPage(method: string, sessionId: string, response: ServerResponse): Promise<void> {
    const page = (status: number, title: string, body: string) => {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`,
      );
    };
    const session = fake.sessions.get(sessionId);
    if (!session) return page(404, 'No such checkout', '');
    if (session.status !== 'open') return page(410, 'This checkout is no longer open', '');
    const setup = session.mode === 'setup';
    if (method === 'GET') {
      const what = setup
        ? `<p>Save a card for booking ${htmlText((session.metadata as Json).booking_reference)}. Nothing is charged now.</p>`
        : `<p>${htmlText(session.line_item_name)}: ${Number(session.amount_total)} ${String(session.currency).toUpperCase()} (minor units)</p>`;
      return page(
        200,
        'Stand-in Stripe Checkout',
        `${what}<form method="post"><button type="submit">${setup ? 'Save card' : 'Pay'}</button></form>`,
      );
    }
    if (method !== 'POST') return page(405, 'Method not allowed', '');
    const event = setup ? fake.saveCard(sessionId) : fake.pay(sessionId);
    if (fake.webhookUrl) {
      const { payload, signature } = fake.signed(event, nowSeconds());
      const delivered = await fetch(fake.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
        body: payload,
      });
      await delivered.arrayBuffer();
      fake.deliveries.push({ type: String(event.type), status: delivered.status });
      if (!delivered.ok)
        return page(502, 'The webhook endpoint refused the event', `<p>${delivered.status}</p>`);
    }
    const next = String(session.success_url).replaceAll('{CHECKOUT_SESSION_ID}', sessionId);
    response.writeHead(303, { location: next, 'cache-control': 'no-store' });
    response.end();
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { type: 'api_error', message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** Stripe's form encoding (`a[b][0][c]=v`) as nested objects and arrays. */
function parseForm(body: string): Json {
  const root: Json = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = name.split(/\[|\]\[|\]/).filter((part) => part !== '');
    let node: Json = root;
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        node[part] = value;
        return;
      }
      const next = path[index + 1]!;
      node[part] ??= /^\d+$/.test(next) ? [] : {};
      node = node[part] as Json;
    });
  }
  return root;
}

/** A value as HTML text (the stand-in's page shows what the session was created with). */
function htmlText(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function must(map: Map<string, Json>, key: string): Json {
  const value = map.get(key);
  if (!value) throw new Error(`The fake Stripe has no ${key}`);
  return value;
}

/** A list as Stripe answers one, newest first, all on one page. */
function list(objects: Json[]): Json {
  return { object: 'list', data: [...objects].reverse(), has_more: false, url: '' };
}

function found(map: Map<string, Json>, key: string): Json | [number, Json] {
  return map.get(key) ?? missing(key);
}

function missing(key: string): [number, Json] {
  return [
    404,
    { type: 'invalid_request_error', code: 'resource_missing', message: `No such object: '${key}'` },
  ];
}

/** Stripe's refusal of an action the PaymentIntent's status does not allow. */
function unexpectedState(intent: Json): [number, Json] {
  return [
    400,
    {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: `This PaymentIntent's status is ${String(intent.status)}.`,
      payment_intent: structuredClone(intent),
    },
  ];
}

function invalid(message: string): [number, Json] {
  return [400, { type: 'invalid_request_error', message }];
}

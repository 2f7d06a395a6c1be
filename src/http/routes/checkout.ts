import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { requireOpenSetup, saveCardInTestMode } from '../../app/card-setup-service.ts';
import {
  abandonCheckout,
  type CheckoutView,
  checkoutPath,
  defaultSuccessPath,
  getCheckout,
  payDeposit,
} from '../../app/checkout-service.ts';
import type { AppDeps } from '../../app/deps.ts';
import type { PaymentProvider } from '../../app/payments.ts';
import { AppError } from '../../domain/errors.ts';
import { formatUtc } from '../../domain/time-format.ts';
import { toAppError } from '../error-envelope.ts';
import { ownOrigins } from '../public-base-url.ts';

/**
 * The local payment provider's hosted checkout, for people in browsers: GET /checkout/{session} (the
 * payment_url), POST .../pay and .../abandon (plain HTML forms, answered with 303 redirects), and
 * GET .../done (the default confirmation page). Outside /v1: no API key (the unguessable session id
 * is the capability), hidden from the OpenAPI document, and every answer, failures included, is a
 * self-contained HTML page. The app's HTTPS rule applies as everywhere.
 *
 * Mounted for the configured provider. The local test mode (PAYMENT_PROVIDER=local, or `serve
 * --demo`) takes no money, and every page says so. Stripe: the link redirects to Stripe Checkout while
 * the deposit is payable, GET .../done is where Stripe sends the customer back, and there is no pay or
 * abandon form (Stripe's page does both). The forms are accepted only from this server's own pages
 * (Origin, or Referer when a browser sends no Origin), so another site cannot make a visitor's browser
 * pay or leave a checkout whose link it has seen.
 */
export function checkoutRoutes(deps: AppDeps, provider: PaymentProvider): FastifyPluginAsyncZod {
  const document = pageDocument(provider.takesMoney ? '' : TEST_MODE_NOTICE);
  const sendPage = (reply: FastifyReply, title: string, body: string) =>
    securePage(reply).send(document(title, body));
  return async (app) => {
    // HTML forms post application/x-www-form-urlencoded; ours carry no fields, so the body is ignored.
    // Registered inside this plugin only: the API keeps its JSON-only rule.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 },
      (_request, _body, done) => done(null, undefined),
    );

    // Failures are pages too (a browser shows them): 404 for an unknown checkout, 409 when it cannot
    // be paid or left any more, the app's status and message for anything else.
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = toAppError(error);
      if (appError.code === 'server_error') request.log.error({ err: error }, 'request failed');
      const title = TITLES[appError.code] ?? TITLES[appError.status] ?? 'Something went wrong';
      return sendPage(reply.code(appError.status), title, errorBody(title, appError.message, request));
    });

    const hidden = { schema: { hide: true } };
    const form = { ...hidden, onRequest: refuseCrossSiteForm };

    app.get<{ Params: SessionParams }>('/checkout/:session', hidden, async (request, reply) => {
      const view = await getCheckout(deps.db, request.params.session, deps.clock.nowMs());
      if (view.state === 'open' || view.state === 'abandoned') {
        // A provider with hosted pages of its own (Stripe Checkout): the link leads there while payable.
        if (provider.takesMoney && view.providerUrl) return redirect(reply, view.providerUrl);
        return sendPage(reply, `Pay your deposit – ${view.location.name}`, checkoutBody(view));
      }
      return sendPage(reply.code(409), notPayableTitle(view), notPayableBody(view));
    });

    app.get<{ Params: SessionParams }>('/checkout/:session/done', hidden, async (request, reply) => {
      const view = await getCheckout(deps.db, request.params.session, deps.clock.nowMs());
      if (view.state === 'paid') return sendPage(reply, 'Booking confirmed', doneBody(view));
      return sendPage(reply.code(409), 'Not paid', notPaidBody(view));
    });

    // Only the test mode is paid or left here; a real provider's page does both itself.
    if (provider.takesMoney) return;

    app.post<{ Params: SessionParams }>('/checkout/:session/pay', form, async (request, reply) => {
      const paid = await payDeposit(deps.db, request.params.session, deps.clock.nowMs());
      return redirect(reply, paid.redirectUrl);
    });

    // The test mode's card setup (Booking Protection): no card is asked for; saving marks it saved.
    app.get<{ Params: SetupParams }>('/card-setup/:setup', hidden, async (request, reply) => {
      await requireOpenSetup(deps.db, request.params.setup, deps.clock.nowMs());
      return sendPage(reply, 'Save a card', cardSetupBody());
    });
    app.post<{ Params: SetupParams }>('/card-setup/:setup', form, async (request, reply) => {
      const saved = await saveCardInTestMode(deps.db, request.params.setup, deps.clock.nowMs());
      return sendPage(
        reply,
        'Card saved',
        `<h1>Card saved</h1>\n<p role="status">Booking ${esc(saved.reference)} is protected by the saved card.</p>`,
      );
    });

    app.post<{ Params: SessionParams }>('/checkout/:session/abandon', form, async (request, reply) => {
      const left = await abandonCheckout(deps.db, request.params.session, deps.clock.nowMs());
      return redirect(reply, left.redirectUrl);
    });
  };
}

interface SessionParams {
  session: string;
}

interface SetupParams {
  setup: string;
}

function cardSetupBody(): string {
  return `<h1>Save a card</h1>
<p>Booking Protection: a card is kept on file for late-cancellation and no-show fees. Nothing is charged now.</p>
<form method="post"><button type="submit" class="primary">Save card</button></form>`;
}

const TITLES: Record<string | number, string> = {
  https_required: 'HTTPS required',
  invalid_host: 'Not accepted from here',
  404: 'Checkout not found',
  409: 'This checkout cannot be paid',
  413: 'Request too large',
};

/**
 * A form post must come from one of this server's own pages. Browsers send Origin with every form
 * post (our pages' Referrer-Policy: same-origin keeps it from being "null"); a browser that sends
 * none still sends a Referer. A post with neither is not from our page: refused too.
 */
async function refuseCrossSiteForm(request: FastifyRequest): Promise<void> {
  const claimed = originOf(request.headers.origin ?? request.headers.referer);
  if (claimed === undefined || !ownOrigins(request).has(claimed)) {
    throw new AppError(
      'invalid_host',
      'This form is accepted only from the checkout page itself. Open the payment link again and use its buttons.',
      'Origin',
    );
  }
}

/** The serialised origin of a URL or an Origin header (default ports dropped); undefined for none or "null". */
function originOf(url: string | undefined): string | undefined {
  if (!url || url === 'null') return undefined;
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

function redirect(reply: FastifyReply, url: string): FastifyReply {
  // no-referrer: the checkout URL (the capability) must not leak to the shop's pages.
  return reply
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .redirect(url, 303);
}

/**
 * Headers of every page. Referrer-Policy same-origin: the page's URL (the capability) never leaves for
 * another site, yet its own forms post with a real Origin (no-referrer would make it "null"). The CSP
 * allows no scripts, no framing, and form posts to this origin only.
 */
function securePage(reply: FastifyReply): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'same-origin')
    .header('x-content-type-options', 'nosniff')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
}

// ---------------------------------------------------------------------------------------------------
// Pages. Every interpolated value goes through esc(); nothing is loaded from elsewhere.

/** Said on every page of a provider that takes no money. */
const TEST_MODE_NOTICE = `<p class="test-mode" role="note"><strong>Test mode:</strong> this checkout takes no money. Paying here only marks the deposit as paid (saving a card, the card as saved); no card is asked for or charged.</p>
`;

/** The pages' words are English; only money and times follow the organisation's locale. */
function pageDocument(notice: string) {
  return (title: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${notice}${body}
</main>
</body>
</html>
`;
}

const STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f6;color:#1a1a1a}',
  'main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px}',
  'h1{font-size:1.5rem;margin-top:0}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}',
  'table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.25rem 0}',
  'td.amount,th.amount{text-align:right}tfoot th,tfoot td{border-top:1px solid #ccc}',
  '.notice{padding:.75rem;border-left:4px solid #b35900;background:#fff4e5}',
  '.test-mode{padding:.75rem;border:2px dashed #8a1c1c;background:#fdecea;color:#5c0f0f}',
  '.actions{display:flex;gap:1rem;flex-wrap:wrap;margin-top:1.5rem}',
  'button{font:inherit;padding:.6rem 1.2rem;border-radius:6px;border:2px solid #0b5394;cursor:pointer}',
  'button.primary{background:#0b5394;color:#fff}button.secondary{background:#fff;color:#0b5394}',
  'button:focus-visible,a:focus-visible{outline:3px solid #f4b400;outline-offset:2px}',
  'a{color:#0b5394}',
  '.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
].join('');

function checkoutBody(view: CheckoutView): string {
  const f = formatter(view);
  const path = checkoutPath(view.sessionId);
  const services = view.services
    .map((s) => `<tr><td>${esc(s.name)}</td><td class="amount">${esc(f.money(s.priceMinor))}</td></tr>`)
    .join('\n');
  const leftBefore =
    view.state === 'abandoned'
      ? `<p class="notice" role="status">Not paid yet. Your booking is held until ${f.time(view.expiresAt)}; pay below to confirm it.</p>\n`
      : '';
  return `<p>${esc(view.organisation.name)}</p>
<h1>Pay your deposit</h1>
${leftBefore}${summary(view, f)}
<table>
<caption class="visually-hidden">Services</caption>
<thead><tr><th scope="col">Service</th><th scope="col" class="amount">Price</th></tr></thead>
<tbody>
${services}
</tbody>
<tfoot>
<tr><th scope="row">Total</th><td class="amount">${esc(f.money(view.booking.totalPriceMinor))}</td></tr>
<tr><th scope="row">Deposit due now</th><td class="amount"><strong>${esc(f.money(view.amountMinor))}</strong></td></tr>
</tfoot>
</table>
<p>Pay by ${f.time(view.expiresAt)}, or the booking is released.</p>
<div class="actions">
<form method="post" action="${esc(`${path}/pay`)}"><button type="submit" class="primary">Pay ${esc(f.money(view.amountMinor))}</button></form>
<form method="post" action="${esc(`${path}/abandon`)}"><button type="submit" class="secondary">Cancel and go back</button></form>
</div>`;
}

function doneBody(view: CheckoutView): string {
  const f = formatter(view);
  return `<p>${esc(view.organisation.name)}</p>
<h1>Booking confirmed</h1>
<p role="status">Your deposit of ${esc(f.money(view.amountMinor))} has been paid.</p>
${summary(view, f)}`;
}

function notPayableTitle(view: CheckoutView): string {
  switch (view.state) {
    case 'paid':
      return 'Already paid';
    case 'expired':
      return 'Checkout expired';
    default:
      return 'No longer awaiting payment';
  }
}

function notPayableBody(view: CheckoutView): string {
  const f = formatter(view);
  const title = notPayableTitle(view);
  const explanation =
    view.state === 'paid'
      ? `This deposit has already been paid. <a href="${esc(defaultSuccessPath(view.sessionId))}">See the confirmation</a>.`
      : view.state === 'expired'
        ? 'This checkout has expired: the deposit was not paid in time and the booking was released. Please book again.'
        : `This booking is no longer awaiting payment (it is ${esc(view.booking.status.replace('_', ' '))}).`;
  return `<h1>${esc(title)}</h1>
<p role="alert">${explanation}</p>
${summary(view, f)}`;
}

function notPaidBody(view: CheckoutView): string {
  const payable = view.state === 'open' || view.state === 'abandoned';
  const next = payable
    ? `<a href="${esc(checkoutPath(view.sessionId))}">Go back to the checkout</a> to pay it.`
    : 'It can no longer be paid.';
  return `<h1>Not paid</h1>
<p role="alert">The deposit for booking ${esc(view.booking.reference)} has not been paid. ${next}</p>`;
}

function errorBody(title: string, message: string, request: FastifyRequest): string {
  return `<h1>${esc(title)}</h1>
<p role="alert">${esc(message)}</p>
<p>Reference for support: <code>${esc(request.id)}</code></p>`;
}

function summary(view: CheckoutView, f: Formatter): string {
  return `<dl>
<dt>Booking reference</dt><dd>${esc(view.booking.reference)}</dd>
<dt>Location</dt><dd>${esc(view.location.name)}</dd>
<dt>Appointment</dt><dd>${f.time(view.booking.startsAt)}</dd>
</dl>`;
}

interface Formatter {
  money(minor: number): string;
  /** A `<time>` element, already escaped. */
  time(epochMs: number): string;
}

/** Money and times in the organisation's locale, times in the location's zone. */
function formatter(view: CheckoutView): Formatter {
  const locale = view.organisation.locale;
  const currency = new Intl.NumberFormat(locale, { style: 'currency', currency: view.currency });
  const digits = currency.resolvedOptions().maximumFractionDigits ?? 2;
  const dates = new Intl.DateTimeFormat(locale, {
    dateStyle: 'full',
    timeStyle: 'short',
    timeZone: view.location.timezone,
  });
  return {
    money: (minor) => currency.format(minor / 10 ** digits),
    time: (epochMs) => `<time datetime="${esc(formatUtc(epochMs))}">${esc(dates.format(epochMs))}</time>`,
  };
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function esc(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

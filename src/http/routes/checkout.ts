import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bookingPagePath } from '../../app/booking-page-token.ts';
import { openSetupInTestMode, saveCardInTestMode } from '../../app/card-setup-service.ts';
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
import { whatBecameOf } from '../../domain/booking/state-machine.ts';
import { AppError } from '../../domain/errors.ts';
import { isFault, toAppError } from '../error-envelope.ts';
import { acceptPageFields } from '../page-fields.ts';
import {
  esc,
  type Formatter,
  formatter,
  noticeFor,
  pageSender,
  redirect,
  refuseCrossSiteForm,
  type SendPage,
} from '../pages/page-shell.ts';

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
  const sendPage = pageSender(noticeFor(provider));
  return async (app) => {
    // HTML forms post application/x-www-form-urlencoded; ours carry no fields.
    acceptPageFields(app, 1024);

    // Failures are pages too (a browser shows them): 404 for an unknown checkout, 409 when it cannot
    // be paid or left any more, the app's status and message for anything else.
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = toAppError(error, request);
      if (isFault(error, appError)) request.log.error({ err: error }, 'request failed');
      return problemPage(sendPage, reply, request, appError);
    });

    const hidden = { schema: { hide: true } };
    const form = { ...hidden, onRequest: refuseCrossSiteForm };

    app.get<{ Params: SessionParams }>('/checkout/:session', hidden, async (request, reply) => {
      const view = await getCheckout(deps.db, request.params.session, deps.clock.nowMs());
      if ((view.state === 'open' || view.state === 'abandoned') && view.notPayableYet) {
        // Not Stripe's page either: its webhook records whatever is paid there, whatever the booking's
        // state (an offer let go would keep a deposit nothing refunds).
        return sendPage(reply.code(409), 'Not yet', notYetBody(view, view.notPayableYet));
      }
      if (view.state === 'open' || view.state === 'abandoned') {
        // A provider with hosted pages of its own (Stripe Checkout): the link leads there while payable.
        if (provider.takesMoney && view.providerUrl) return redirect(reply, view.providerUrl);
        // Its forms' answers send the customer on to the booking's own success or cancel URL.
        return sendPage(reply, `Pay your deposit – ${view.location.name}`, checkoutBody(view), {
          formTargets: view.returnUrls,
        });
      }
      return sendPage(reply.code(409), notPayableTitle(view), notPayableBody(view));
    });

    app.get<{ Params: SessionParams }>('/checkout/:session/done', hidden, async (request, reply) => {
      const view = await getCheckout(deps.db, request.params.session, deps.clock.nowMs());
      if (view.state === 'paid') return sendPage(reply, 'Booking confirmed', doneBody(view));
      // Stripe sends the customer here as soon as they pay, often before its webhook says so: a
      // payable checkout may well be paid already, so it is not called unpaid.
      const payable = view.state === 'open' || view.state === 'abandoned';
      if (provider.takesMoney && payable) return sendPage(reply, 'Not paid yet', awaitingBody(view));
      return sendPage(reply.code(409), 'Not paid', notPaidBody(view, provider.takesMoney));
    });

    // Only the test mode is paid or left here; a real provider's page does both itself.
    if (provider.takesMoney) return;

    // A refused form (a second tap on Pay, a page left open past the hold) answers the checkout's own
    // page as it is now, which leads on: to the confirmation and the booking's page, or to book again.
    // (What it resolves to is no reply to look into: a FastifyReply is a thenable, so an async function
    // returning one resolves once it is sent, to nothing.)
    const asItIsNow = async (session: string, reply: FastifyReply, error: unknown) => {
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      const view = await getCheckout(deps.db, session, deps.clock.nowMs());
      if (view.state === 'open' || view.state === 'abandoned') {
        if (!view.notPayableYet) throw error;
        return sendPage(reply.code(409), 'Not yet', notYetBody(view, view.notPayableYet));
      }
      return sendPage(reply.code(409), notPayableTitle(view), notPayableBody(view));
    };

    app.post<{ Params: SessionParams }>('/checkout/:session/pay', form, async (request, reply) => {
      try {
        const paid = await payDeposit(deps.db, request.params.session, deps.clock.nowMs());
        return redirect(reply, paid.redirectUrl);
      } catch (error) {
        return asItIsNow(request.params.session, reply, error);
      }
    });

    // The test mode's card setup (Booking Protection): no card is asked for; saving marks it saved.
    app.get<{ Params: SetupParams }>('/card-setup/:setup', hidden, async (request, reply) => {
      const setup = await openSetupInTestMode(deps.db, request.params.setup, deps.clock.nowMs());
      return sendPage(reply, 'Save a card', cardSetupBody(setup.pageToken));
    });
    app.post<{ Params: SetupParams }>('/card-setup/:setup', form, async (request, reply) => {
      const saved = await saveCardInTestMode(deps.db, request.params.setup, deps.clock.nowMs());
      if (saved.pageToken) return redirect(reply, bookingPagePath(saved.pageToken));
      return sendPage(
        reply,
        'Card saved',
        `<h1>Card saved</h1>\n<p role="status">Booking ${esc(saved.reference)} is protected by the saved card.</p>`,
      );
    });

    app.post<{ Params: SessionParams }>('/checkout/:session/abandon', form, async (request, reply) => {
      try {
        const left = await abandonCheckout(deps.db, request.params.session, deps.clock.nowMs());
        return redirect(reply, left.redirectUrl);
      } catch (error) {
        return asItIsNow(request.params.session, reply, error);
      }
    });
  };
}

interface SessionParams {
  session: string;
}

interface SetupParams {
  setup: string;
}

/** The test mode's card page, with the way back to the booking's page (when it has one) unsaved. */
function cardSetupBody(pageToken: string | null): string {
  const back = pageToken
    ? `\n<p><a href="${esc(bookingPagePath(pageToken))}">Back to your booking without saving a card</a></p>`
    : '';
  return `<h1>Save a card</h1>
<p>Booking Protection: a card is kept on file for late-cancellation and no-show fees. Nothing is charged now.</p>
<form method="post"><button type="submit" class="primary">Save card</button></form>${back}`;
}

const TITLES: Record<string | number, string> = {
  https_required: 'HTTPS required',
  invalid_host: 'Not accepted from here',
  400: 'Please check',
  404: 'Checkout not found',
  409: 'This checkout cannot be paid',
  413: 'Request too large',
};

function checkoutBody(view: CheckoutView): string {
  const f = formatter({ ...view.organisation, currency: view.currency, timezone: view.location.timezone });
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
${leaveWords(view)}
<div class="actions">
<form method="post" action="${esc(`${path}/pay`)}"><button type="submit" class="primary">Pay ${esc(f.money(view.amountMinor))}</button></form>
<form method="post" action="${esc(`${path}/abandon`)}"><button type="submit" class="secondary">Go back without paying</button></form>
</div>`;
}

/**
 * What going back and cancelling mean, said before either button: going back keeps the time held
 * until the hold ends; cancelling is its own step on the booking's page, which says what it costs.
 */
function leaveWords(view: CheckoutView): string {
  const f = formatter({ ...view.organisation, currency: view.currency, timezone: view.location.timezone });
  const kept = `Going back keeps the time held for you until ${f.time(view.expiresAt)}; nothing is charged.`;
  if (!view.bookingPath) return `<p>${kept}</p>`;
  return `<p>${kept} <a href="${esc(`${view.bookingPath}/cancel`)}">Cancel the booking instead</a>.</p>`;
}

/** The link back to the booking's own page, from any page about its deposit. */
function manageLink(view: CheckoutView): string {
  return view.bookingPath
    ? `<p><a href="${esc(view.bookingPath)}">See, move or cancel your booking</a> (keep this link: it is also in your confirmation).</p>`
    : '';
}

function doneBody(view: CheckoutView): string {
  const f = formatter({ ...view.organisation, currency: view.currency, timezone: view.location.timezone });
  return `<p>${esc(view.organisation.name)}</p>
<h1>Booking confirmed</h1>
<p role="status">Your deposit of ${esc(f.money(view.amountMinor))} has been paid.</p>
${summary(view, f)}
${manageLink(view)}`;
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
  const f = formatter({ ...view.organisation, currency: view.currency, timezone: view.location.timezone });
  const title = notPayableTitle(view);
  const explanation =
    view.state === 'paid'
      ? `This deposit has already been paid. <a href="${esc(defaultSuccessPath(view.sessionId))}">See the confirmation</a>.`
      : view.state === 'expired'
        ? `This checkout has expired: the deposit was not paid in time and the booking was released. <a href="${esc(bookAgainPath(view))}">Book again</a>.`
        : `This booking is no longer awaiting payment: it ${esc(whatBecameOf(view.booking.status))}.`;
  return `<h1>${esc(title)}</h1>
<p role="alert">${explanation}</p>
${summary(view, f)}
${view.state === 'expired' ? '' : manageLink(view)}`;
}

/**
 * Where to book again after a lapsed checkout: the location's page, or the salon's when the location
 * no longer takes bookings (its page would be Not found).
 */
function bookAgainPath(view: CheckoutView): string {
  const salon = `/p/${view.organisation.slug}`;
  return view.location.active ? `${salon}?location=${encodeURIComponent(view.location.slug)}` : salon;
}

/** The deposit waits for a step on the booking's page first (a code, an offer's claim). */
function notYetBody(view: CheckoutView, reason: string): string {
  const f = formatter({ ...view.organisation, currency: view.currency, timezone: view.location.timezone });
  return `<h1>Not yet</h1>
<p role="alert">${esc(reason)}</p>
${summary(view, f)}
${manageLink(view)}`;
}

/**
 * The deposit not paid (as far as we know). With a provider that takes money, a checkout no longer
 * payable may still have been paid on the provider's page, which stays open a while after the hold
 * lapses: that payment is refunded (stripe-webhook-service.ts), and the page says so rather than that
 * nothing was paid.
 */
function notPaidBody(view: CheckoutView, takesMoney: boolean): string {
  const payable = view.state === 'open' || view.state === 'abandoned';
  const reference = esc(view.booking.reference);
  if (!payable && takesMoney) {
    const why =
      view.state === 'expired'
        ? 'it was not paid in time and the time was released'
        : `the booking no longer awaits it, as it ${esc(whatBecameOf(view.booking.status))}`;
    return `<h1>Not paid</h1>
<p role="alert">The deposit for booking ${reference} can no longer be paid: ${why}. If you paid on the payment page, the payment is refunded to you.</p>
${manageLink(view)}`;
  }
  const next = payable
    ? `<a href="${esc(checkoutPath(view.sessionId))}">Go back to the checkout</a> to pay it.`
    : 'It can no longer be paid.';
  return `<h1>Not paid</h1>
<p role="alert">The deposit for booking ${reference} has not been paid. ${next}</p>
${manageLink(view)}`;
}

/**
 * Back from the provider's page before its word on the payment arrived: paid there or not, said
 * without guessing, with the way to pay if they did not and the booking's page, which says when it
 * is confirmed.
 */
function awaitingBody(view: CheckoutView): string {
  return `<h1>Not paid yet</h1>
<p role="status">We have not yet heard from the payment provider that the deposit for booking ${esc(view.booking.reference)} is paid. If you have just paid, it is on its way: this can take a minute, and we send you the confirmation as soon as it arrives.</p>
<p>If you did not pay, <a href="${esc(checkoutPath(view.sessionId))}">go back to the checkout</a> to pay it.</p>
${manageLink(view)}`;
}

/** The page of a refusal or a fault at a checkout or card address: what went wrong, the request id. */
function problemPage(sendPage: SendPage, reply: FastifyReply, request: FastifyRequest, appError: AppError) {
  const title = TITLES[appError.code] ?? TITLES[appError.status] ?? 'Something went wrong';
  return sendPage(
    reply.code(appError.status),
    title,
    `<h1>${esc(title)}</h1>
<p role="alert">${esc(appError.message)}</p>
<p>Reference for support: <code>${esc(request.id)}</code></p>`,
  );
}

/** Whether a request's address is the checkout's or the card page's (where a person's browser shows the answer). */
export function isCheckoutAddress(url: string): boolean {
  return url.startsWith('/checkout/') || url.startsWith('/card-setup/');
}

/**
 * The router's refusal of a checkout or card address (a % that escapes nothing, in a link cut short):
 * the checkout's own error page, since a browser shows the API's JSON envelope as raw text.
 */
export function answerCheckoutFrameworkError(provider: PaymentProvider) {
  const sendPage = pageSender(noticeFor(provider));
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    problemPage(sendPage, reply, request, toAppError(error));
  };
}

function summary(view: CheckoutView, f: Formatter): string {
  return `<dl>
<dt>Booking reference</dt><dd>${esc(view.booking.reference)}</dd>
<dt>Location</dt><dd>${esc(view.location.name)}</dd>
<dt>Appointment</dt><dd>${f.time(view.booking.startsAt)}</dd>
</dl>`;
}

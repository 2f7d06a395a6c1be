import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app/deps.ts';
import { FixedWindowRateLimiter, pageRequests } from '../../app/rate-limiter.ts';
import { AppError } from '../../domain/errors.ts';
import { isFault, toAppError, withRetryAfter } from '../error-envelope.ts';
import { acceptPageFields } from '../page-fields.ts';
import { manageRoutes } from './manage-page.ts';
import { esc, noticeFor, pageSender, redirect, type SendPage } from './page-shell.ts';
import { plainWords } from './people-words.ts';
import { publicBookingRoutes } from './public-page.ts';
import { verifyRoutes } from './verify-page.ts';
import { publicWaitlistRoutes } from './waitlist-page.ts';

/**
 * The customer's pages, outside /v1 and without an API key: GET /p/{organisation_slug} (book) and
 * GET /p/manage/{token} (one booking). Every answer, failures included, is a page; forms are accepted
 * only from this server's own pages (page-shell.ts refuseCrossSiteForm); each client address may make
 * requestsPerMinute requests a minute to them (the API's counter store, a counter of its own), since
 * nothing else stands in front of them.
 */
export function pageRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  const sendPage = pageSender(noticeFor(deps.payments));
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);
  return async (app) => {
    acceptPageFields(app, 4096);
    app.addHook('onRequest', async (request: FastifyRequest, reply) => {
      const limit = deps.limits.requestsPerMinute;
      const now = deps.clock.nowMs();
      const decision = await limiter.hit(pageRequests(request.ip), limit, now);
      if (!decision.allowed) {
        reply.header('retry-after', String(Math.max(1, Math.ceil((decision.resetAt - now) / 1000))));
        throw new AppError(
          'rate_limited',
          'Too many requests from this address; wait a minute and try again.',
        );
      }
    });
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = toAppError(error, request);
      withRetryAfter(reply, appError);
      if (isFault(error, appError)) request.log.error({ err: error }, 'request failed');
      return problemPage(sendPage, reply, request, appError);
    });
    await app.register(manageRoutes(deps, sendPage));
    await app.register(publicBookingRoutes(deps, sendPage));
    await app.register(verifyRoutes(deps, sendPage));
    await app.register(publicWaitlistRoutes(deps, sendPage));
    // Any other address under /p/ (a refused form's address opened again, which is a GET; a link cut
    // short) is a page too, with the way back, never the API's JSON envelope.
    app.all('/p/*', { schema: { hide: true } }, async (request, reply) => {
      // A link copied with a slash at its end (/p/acme/): the page it names.
      const [path = '', query] = request.url.split(/\?(.*)/s);
      if ((request.method === 'GET' || request.method === 'HEAD') && /^\/p\/.*[^/]\/+$/.test(path)) {
        return redirect(reply, `${path.replace(/\/+$/, '')}${query === undefined ? '' : `?${query}`}`);
      }
      throw new AppError('not_found', 'There is no page at this address; check the link you were given.');
    });
  };
}

/** The page of a refusal or a fault at a customer's address: what went wrong, the way back, the request id. */
function problemPage(
  sendPage: SendPage,
  reply: FastifyReply,
  request: FastifyRequest,
  appError: AppError,
): FastifyReply {
  const title = TITLES[appError.code] ?? TITLES[appError.status] ?? 'Something went wrong';
  return sendPage(
    reply.code(appError.status),
    title,
    `<h1>${esc(title)}</h1>
<p role="alert">${esc(plainWords(appError))}</p>
${wayBack(request.url)}<p>Reference for support: <code>${esc(request.id)}</code></p>`,
  );
}

/** Whether a request's address is one of the customer's pages (where a person's browser shows the answer). */
export function isCustomerPageAddress(url: string): boolean {
  return url.startsWith('/p/');
}

/**
 * The router's refusal of a customer page's address (a % that escapes nothing, in a link cut short or
 * typed): the pages' own error page, since a browser shows the API's JSON envelope as raw text.
 */
export function answerPageFrameworkError(deps: Pick<AppDeps, 'payments'>) {
  const sendPage = pageSender(noticeFor(deps.payments));
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    problemPage(sendPage, reply, request, toAppError(error));
  };
}

/**
 * Where a customer goes on from a refusal: the booking's page for its own forms, the salon's booking
 * page for the booking form (a link; what they typed is kept by the browser's Back).
 */
function wayBack(url: string): string {
  const path = url.split('?')[0] ?? '';
  const booking = /^\/p\/manage\/([A-Za-z0-9_-]{43})\//.exec(path);
  if (booking) return `<p><a href="/p/manage/${booking[1]}">Back to your booking</a></p>\n`;
  const salon = /^\/p\/([a-z0-9-]+)\/(?:book|waitlist)$/.exec(path);
  if (salon) return `<p><a href="/p/${salon[1]}">Back to the booking page</a></p>\n`;
  return '';
}

const TITLES: Record<string | number, string> = {
  https_required: 'HTTPS required',
  invalid_host: 'Not accepted from here',
  rate_limited: 'Too many requests',
  400: 'Please check your details',
  404: 'Not found',
  409: 'That did not work',
  413: 'Request too large',
  503: 'Not available online',
};

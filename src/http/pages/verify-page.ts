import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bookingPagePath } from '../../app/booking-page-token.ts';
import { getBookingPage, pageTokenOf } from '../../app/booking-pages.ts';
import { LINK_EXPIRED, LINK_UNKNOWN, linkState, proveByLink } from '../../app/contact-proof.ts';
import type { AppDeps } from '../../app/deps.ts';
import { AppError } from '../../domain/errors.ts';
import { bookAgainHref } from './manage-page.ts';
import { esc, redirect, refuseCrossSiteForm, type SendPage } from './page-shell.ts';

/**
 * The link in a verification code message, /p/verify/{token}: opening it shows a button, and only the
 * button confirms. Mail and messaging apps open links to preview or scan them; a link that confirmed on
 * sight would let such a scan confirm a booking a stranger made with someone else's address. Confirmed,
 * the customer goes on at the booking's own page. Opening a link that can no longer confirm (replaced
 * by a newer code, expired, its booking lapsed) says so at once, with the way on, and spends nothing;
 * one used already leads to the booking.
 */
export function verifyRoutes(deps: AppDeps, sendPage: SendPage): FastifyPluginAsyncZod {
  return async (app) => {
    const hidden = { schema: { hide: true } };
    app.get<{ Params: { token: string } }>('/p/verify/:token', hidden, async (request, reply) => {
      const now = deps.clock.nowMs();
      const link = await linkState(deps.db, request.params.token, now);
      if (link.state === 'unknown') throw new AppError('not_found', LINK_UNKNOWN);
      if (link.state === 'usable') {
        return sendPage(
          reply,
          'Confirm your booking',
          `<h1>Confirm your booking</h1>
<p>A booking was made on our booking page with this phone number or e-mail address. If it was you, confirm it; if not, close this page and nothing is booked in your name.</p>
<form method="post" action="${esc(`/p/verify/${encodeURIComponent(request.params.token)}`)}">
<div class="actions"><button type="submit" class="primary">Yes, confirm my booking</button></div>
</form>`,
        );
      }
      const pageToken = await pageTokenOf(deps.db, link.key);
      const page = bookingPagePath(pageToken);
      if (link.state === 'proven') return redirect(reply, page);
      if (link.state !== 'lapsed') {
        return linkRefused(sendPage, reply, LINK_EXPIRED, page, 'Open your booking page');
      }
      // Lapsed: booking again is the way on; cancelled (or anything else), the booking's page says it.
      const lapsed = link.status === 'expired';
      const wayOn = lapsed ? bookAgainHref(await getBookingPage(deps.db, pageToken, now)) : page;
      return linkRefused(
        sendPage,
        reply,
        link.words,
        wayOn,
        lapsed ? 'Book again' : 'Open your booking page',
      );
    });
    app.post<{ Params: { token: string } }>(
      '/p/verify/:token',
      { ...hidden, onRequest: refuseCrossSiteForm },
      async (request, reply) => {
        const booking = await proveByLink(deps.db, request.params.token, deps.clock.nowMs());
        return redirect(reply, bookingPagePath(await pageTokenOf(deps.db, booking)));
      },
    );
  };
}

/** A link that can no longer confirm, opened: why (409, as its button would say), and the way on. */
function linkRefused(sendPage: SendPage, reply: FastifyReply, words: string, href: string, label: string) {
  return sendPage(
    reply.code(409),
    'This link cannot confirm',
    `<h1>This link cannot confirm</h1>
<p role="alert">${esc(words)}</p>
<p><a href="${esc(href)}">${esc(label)}</a></p>`,
  );
}

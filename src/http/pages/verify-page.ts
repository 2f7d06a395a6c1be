import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bookingPagePath } from '../../app/booking-page-token.ts';
import { pageTokenOf } from '../../app/booking-pages.ts';
import { proveByLink } from '../../app/contact-proof.ts';
import type { AppDeps } from '../../app/deps.ts';
import { esc, redirect, refuseCrossSiteForm, type SendPage } from './page-shell.ts';

/**
 * The link in a verification code message, /p/verify/{token}: opening it shows a button, and only the
 * button confirms. Mail and messaging apps open links to preview or scan them; a link that confirmed on
 * sight would let such a scan confirm a booking a stranger made with someone else's address. Confirmed,
 * the customer goes on at the booking's own page.
 */
export function verifyRoutes(deps: AppDeps, sendPage: SendPage): FastifyPluginAsyncZod {
  return async (app) => {
    const hidden = { schema: { hide: true } };
    app.get<{ Params: { token: string } }>('/p/verify/:token', hidden, async (request, reply) =>
      sendPage(
        reply,
        'Confirm your booking',
        `<h1>Confirm your booking</h1>
<p>A booking was made on our booking page with this phone number or e-mail address. If it was you, confirm it; if not, close this page and nothing is booked in your name.</p>
<form method="post" action="${esc(`/p/verify/${encodeURIComponent(request.params.token)}`)}">
<div class="actions"><button type="submit" class="primary">Yes, confirm my booking</button></div>
</form>`,
      ),
    );
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

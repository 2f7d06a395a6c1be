import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app/deps.ts';
import { sendLink } from '../../app/send-link.ts';
import { ReferenceParams } from '../../contract/booking.ts';
import { AUTHENTICATED_ERRORS, dataOf, ErrorEnvelope, NoQuery } from '../../contract/common.ts';
import { LinkSentResource, presentLinkSent } from '../../contract/outbox.ts';
import { principalOf } from '../authenticate.ts';

/** POST /bookings/{reference}/send-link: the customer's link (or confirmation) sent again (an addition to v1). */
export function sendLinkRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/bookings/:reference/send-link',
      {
        schema: {
          tags: ['Bookings'],
          operationId: 'sendBookingLink',
          summary: "Send the booking's payment link, booking-page link or confirmation to the client again",
          description:
            'By SMS to the phone and by e-mail to the address the client has, through the outbox (what MCP ' +
            'send_link uses). An addition to the v1 contract.',
          params: ReferenceParams,
          querystring: NoQuery,
          response: {
            200: dataOf(LinkSentResource),
            400: ErrorEnvelope.describe(
              'invalid_request: a query parameter or body this operation does not take.',
            ),
            404: ErrorEnvelope.describe('not_found: no booking has this reference.'),
            409: ErrorEnvelope.describe(
              'conflict: nothing to send (the booking is over) or no phone or e-mail.',
            ),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const sent = await sendLink(
          deps.db,
          { store: deps.rateLimitStore },
          principalOf(request).organisation.id,
          request.params.reference,
          deps.clock.nowMs(),
          deps.messageProviders,
        );
        return { data: presentLinkSent(sent) };
      },
    );
  };
}

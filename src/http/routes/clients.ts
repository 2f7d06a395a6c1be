import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getClientUsual, listUpcomingBookings } from '../../app/booking-service.ts';
import { findClient, getClient, registerClient } from '../../app/client-service.ts';
import type { AppDeps } from '../../app/deps.ts';
import { BookingResource, presentBooking } from '../../contract/booking.ts';
import {
  ClientIdParams,
  ClientQuery,
  ClientResource,
  NewClientBody,
  newClientOf,
  presentClient,
  presentUsual,
  UsualResource,
} from '../../contract/client.ts';
import { AUTHENTICATED_ERRORS, dataOf, ErrorEnvelope, listOf, NoQuery } from '../../contract/common.ts';
import { principalOf } from '../authenticate.ts';
import { bookingViewer } from '../public-base-url.ts';

/**
 * GET /clients (lookup by phone or e-mail), POST /clients (register or return the existing one), and
 * two additions to v1: GET /clients/{client_id} and GET /clients/{client_id}/bookings (upcoming live
 * bookings).
 */
export function clientRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/clients',
      {
        schema: {
          tags: ['Clients'],
          operationId: 'findClient',
          summary: 'Find the client with a phone number or e-mail address (phone first)',
          querystring: ClientQuery,
          response: {
            200: dataOf(ClientResource).describe('The matching client.'),
            400: ErrorEnvelope.describe('invalid_request: neither phone nor email, or one is not valid.'),
            404: ErrorEnvelope.describe('not_found: no client matches.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const client = await findClient(
          deps.db,
          principalOf(request).organisation.id,
          withUnencodedPlus(request.query),
        );
        return { data: presentClient(client) };
      },
    );

    app.get(
      '/clients/:client_id',
      {
        schema: {
          tags: ['Clients'],
          operationId: 'getClient',
          summary: 'A client by id',
          description:
            'How an agent names the client of a booking (a booking carries only client_id). An addition to the v1 contract.',
          params: ClientIdParams,
          querystring: NoQuery,
          response: {
            200: dataOf(ClientResource),
            400: ErrorEnvelope.describe('invalid_request: client_id is not a UUID.'),
            404: ErrorEnvelope.describe('not_found: no client has this id.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const organisationId = principalOf(request).organisation.id;
        return {
          data: presentClient(
            await getClient(deps.db, organisationId, request.params.client_id.toLowerCase()),
          ),
        };
      },
    );

    app.get(
      '/clients/:client_id/bookings',
      {
        schema: {
          tags: ['Clients'],
          operationId: 'listClientBookings',
          summary: "The client's upcoming live bookings, soonest first (at most 20)",
          description:
            'Live means pending_payment, pending_confirmation or confirmed; upcoming means not yet started. ' +
            "How an agent finds a caller's appointment without its reference. An addition to the v1 contract.",
          params: ClientIdParams,
          querystring: NoQuery,
          response: {
            200: listOf(BookingResource, 'Upcoming live bookings, soonest first.'),
            400: ErrorEnvelope.describe('invalid_request: client_id is not a UUID.'),
            404: ErrorEnvelope.describe('not_found: no client has this id.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const now = deps.clock.nowMs();
        const bookings = await listUpcomingBookings(
          deps.db,
          principalOf(request).organisation.id,
          request.params.client_id.toLowerCase(),
          now,
        );
        const viewer = bookingViewer(deps, request);
        return { data: bookings.map((booking) => presentBooking(booking, now, viewer)) };
      },
    );

    app.get(
      '/clients/:client_id/usual',
      {
        schema: {
          tags: ['Clients'],
          operationId: 'getClientUsual',
          summary: "The client's usual: last service, stylist, location and how often they come",
          description:
            'Read from their latest visit that has started (else the one booked) and its series or the gaps ' +
            'between their visits; data is null for a client who never came nor booked. An addition to v1.',
          params: ClientIdParams,
          querystring: NoQuery,
          response: {
            200: z.object({ data: UsualResource.nullable() }),
            400: ErrorEnvelope.describe('invalid_request: client_id is not a UUID.'),
            404: ErrorEnvelope.describe('not_found: no client has this id.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const usual = await getClientUsual(
          deps.db,
          principalOf(request).organisation.id,
          request.params.client_id.toLowerCase(),
          deps.clock.nowMs(),
        );
        return { data: usual && presentUsual(usual) };
      },
    );

    app.post(
      '/clients',
      {
        schema: {
          tags: ['Clients'],
          operationId: 'registerClient',
          summary: 'Register a client, or get the existing one with the same phone or e-mail',
          body: NewClientBody,
          querystring: NoQuery,
          response: {
            200: dataOf(ClientResource).describe(
              'A client with this phone or e-mail already exists: returned unchanged.',
            ),
            201: dataOf(ClientResource).describe('Created.'),
            400: ErrorEnvelope.describe('invalid_request, naming the field.'),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const { client, created } = await registerClient(
          deps.db,
          principalOf(request).organisation.id,
          newClientOf(body),
          deps.clock.nowMs(),
        );
        return reply.code(created ? 201 : 200).send({ data: presentClient(client) });
      },
    );
  };
}

/**
 * A `+` written unencoded in a query string is form encoding's space, so `?phone=+447911123456`
 * arrives as " 447911123456" and `?email=jo+salon@example.com` as "jo salon@example.com". A number
 * never begins with a space nor an address holds one between two of its characters, so such a space
 * is read back as the + the caller wrote.
 */
function withUnencodedPlus<Query extends { phone?: string | undefined; email?: string | undefined }>(
  query: Query,
): Query {
  const phone =
    query.phone !== undefined && /^ \d/.test(query.phone) ? `+${query.phone.slice(1)}` : query.phone;
  const email = query.email?.replace(/(?<=[^\s@]) (?=[^\s@])/g, '+');
  return { ...query, phone, email };
}

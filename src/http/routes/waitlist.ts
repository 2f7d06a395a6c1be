import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CursorSecrets } from '../../app/cursor-secrets.ts';
import type { AppDeps } from '../../app/deps.ts';
import { getWaitlistEntry, joinWaitlist, leaveWaitlist, listWaitlist } from '../../app/waitlist/entries.ts';
import { newClientOf } from '../../contract/client.ts';
import {
  AUTHENTICATED_ERRORS,
  DEFAULT_PAGE_SIZE,
  dataOf,
  ErrorEnvelope,
  listOf,
  NoQuery,
} from '../../contract/common.ts';
import {
  NewWaitlistEntryBody,
  presentWaitlistEntry,
  refusalNamingClient,
  WaitlistEntryParams,
  WaitlistEntryResource,
  WaitlistQuery,
} from '../../contract/waitlist.ts';
import { principalOf } from '../authenticate.ts';
import { CursorCodec, isCreatedPosition } from '../cursor.ts';

const TAGS = ['Waitlist'];

const NOT_FOUND = ErrorEnvelope.describe('not_found: no waitlist entry of the organisation has this id.');
const BAD_ID = ErrorEnvelope.describe('invalid_request: id is not a UUID, or a query parameter was sent.');

/**
 * /waitlist (design.md 9.4, docs/waitlist.md): clients waiting for a time to free up. A read key
 * lists and reads; joining and leaving need read_write (the authenticator checks by method).
 */
export function waitlistRoutes(deps: AppDeps, secrets: CursorSecrets): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/waitlist',
      {
        schema: {
          tags: TAGS,
          operationId: 'joinWaitlist',
          summary: 'Put a client on the waitlist: the first free time that suits them is offered to them',
          querystring: NoQuery,
          body: NewWaitlistEntryBody,
          response: {
            201: dataOf(WaitlistEntryResource),
            400: ErrorEnvelope.describe(
              'invalid_request naming location_slug, service_ids, staff_id, client, from_date or to_date.',
            ),
            404: ErrorEnvelope.describe(
              'not_found: no location has location_slug, or no client has client_id.',
            ),
            409: ErrorEnvelope.describe('conflict: the client already waits there for these services.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { body } = request;
        const entry = await joinWaitlist(
          deps.db,
          principalOf(request).organisation.id,
          {
            locationSlug: body.location_slug,
            serviceIds: body.service_ids,
            staffId: body.staff_id,
            clientId: body.client_id,
            client: body.client && newClientOf(body.client),
            fromDate: body.from_date,
            toDate: body.to_date,
            times: body.times,
          },
          deps.clock.nowMs(),
        ).catch(refusalNamingClient);
        return reply.code(201).send({ data: presentWaitlistEntry(entry) });
      },
    );

    app.get(
      '/waitlist',
      {
        schema: {
          tags: TAGS,
          operationId: 'listWaitlist',
          summary: 'Waitlist entries in joining order, with the offer each holds now',
          querystring: WaitlistQuery,
          response: {
            200: listOf(WaitlistEntryResource, 'A page of entries.'),
            400: ErrorEnvelope.describe('invalid_request: a bad query parameter or cursor.'),
            404: ErrorEnvelope.describe('not_found: no location has location_slug.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const organisationId = principalOf(request).organisation.id;
        const { query } = request;
        const cursors = new CursorCodec(await secrets.of(organisationId));
        const listing = `${organisationId}:waitlist:${query.location_slug ?? ''}:${query.status ?? ''}`;
        const now = deps.clock.nowMs();
        const after = query.cursor ? cursors.decode(listing, query.cursor, now, isCreatedPosition) : null;
        const page = await listWaitlist(
          deps.db,
          organisationId,
          { locationSlug: query.location_slug, status: query.status },
          after && { createdAt: after[0], id: after[1] },
          query.limit ?? DEFAULT_PAGE_SIZE,
          now,
        );
        const data = page.items.map(presentWaitlistEntry);
        return page.next === null
          ? { data }
          : { data, next_cursor: cursors.encode(listing, [page.next.createdAt, page.next.id], now) };
      },
    );

    app.get(
      '/waitlist/:id',
      {
        schema: {
          tags: TAGS,
          operationId: 'getWaitlistEntry',
          summary: 'One waitlist entry, with the offer it holds now',
          params: WaitlistEntryParams,
          querystring: NoQuery,
          response: {
            200: dataOf(WaitlistEntryResource),
            400: BAD_ID,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const entry = await getWaitlistEntry(
          deps.db,
          principalOf(request).organisation.id,
          request.params.id,
          deps.clock.nowMs(),
        );
        return { data: presentWaitlistEntry(entry) };
      },
    );

    app.delete(
      '/waitlist/:id',
      {
        schema: {
          tags: TAGS,
          operationId: 'leaveWaitlist',
          summary: 'Take an entry off the waitlist; a time held for it goes to the next entry',
          params: WaitlistEntryParams,
          querystring: NoQuery,
          response: {
            204: z.null().describe('Left.'),
            400: BAD_ID,
            404: NOT_FOUND,
            409: ErrorEnvelope.describe('conflict: the entry has ended already (booked, left or past).'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        await leaveWaitlist(
          deps.db,
          principal.organisation.id,
          request.params.id,
          deps.clock.nowMs(),
          `api_key:${principal.apiKeyId}`,
        );
        return reply.code(204).send(null);
      },
    );
  };
}

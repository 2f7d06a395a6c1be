import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireScope } from '../../app/api-key-service.ts';
import type { CursorSecrets } from '../../app/cursor-secrets.ts';
import type { AppDeps } from '../../app/deps.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listDeliveries,
  listWebhookEndpoints,
  sendTestEvent,
} from '../../app/webhooks/endpoints.ts';
import {
  AUTHENTICATED_ERRORS,
  DEFAULT_PAGE_SIZE,
  dataOf,
  ErrorEnvelope,
  listOf,
  NoQuery,
  PageQuery,
} from '../../contract/common.ts';
import {
  CreatedWebhookEndpointResource,
  NewWebhookEndpointBody,
  presentWebhookDelivery,
  presentWebhookEndpoint,
  WebhookDeliveryResource,
  WebhookEndpointParams,
  WebhookEndpointResource,
} from '../../contract/webhook.ts';
import { principalOf } from '../authenticate.ts';
import { CursorCodec, isCreatedPosition } from '../cursor.ts';
import { deliveriesCursor } from '../delivery-cursor.ts';

const NOT_FOUND = ErrorEnvelope.describe('not_found: no webhook endpoint of the organisation has this id.');
const BAD_ID = ErrorEnvelope.describe(
  'invalid_request: id is not a UUID, or a bad query parameter or cursor.',
);
const TAGS = ['Webhooks'];

/**
 * /webhook-endpoints: an integrator's endpoints and their deliveries (design.md 9.2, docs/webhooks.md).
 * Every route needs a read_write key, reads included: an endpoint's list says where the
 * organisation's data goes.
 */
export function webhookEndpointRoutes(deps: AppDeps, secrets: CursorSecrets): FastifyPluginAsyncZod {
  const organisationOf = (request: FastifyRequest) => {
    const principal = principalOf(request);
    requireScope(principal, 'read_write');
    return principal.organisation.id;
  };

  return async (app) => {
    app.post(
      '/webhook-endpoints',
      {
        schema: {
          tags: TAGS,
          operationId: 'createWebhookEndpoint',
          summary: 'Subscribe an endpoint to events; the answer shows its signing secret, once',
          querystring: NoQuery,
          body: NewWebhookEndpointBody,
          response: {
            201: dataOf(CreatedWebhookEndpointResource),
            400: ErrorEnvelope.describe('invalid_request naming url, events or description.'),
            409: ErrorEnvelope.describe('conflict: the organisation has 20 endpoints already.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { endpoint, secret } = await createWebhookEndpoint(
          deps.db,
          organisationOf(request),
          request.body,
          deps.webhookDestinations,
          deps.clock.nowMs(),
        );
        return reply.code(201).send({ data: { ...presentWebhookEndpoint(endpoint), secret } });
      },
    );

    app.get(
      '/webhook-endpoints',
      {
        schema: {
          tags: TAGS,
          operationId: 'listWebhookEndpoints',
          summary:
            "The organisation's webhook endpoints, enabled or disabled, the newest first (at most 20: one page at the default limit)",
          querystring: PageQuery,
          response: {
            200: listOf(WebhookEndpointResource, 'A page of endpoints, enabled or disabled.'),
            400: ErrorEnvelope.describe('invalid_request: a bad query parameter or cursor.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        // Paged as every list of the API (limit, cursor), so that a client that pages every list
        // reads this one too; at the default limit the 20 an organisation may have are one page.
        const organisationId = organisationOf(request);
        const cursors = new CursorCodec(await secrets.of(organisationId));
        const listing = `${organisationId}:webhook-endpoints`;
        const now = deps.clock.nowMs();
        const after = request.query.cursor
          ? cursors.decode(listing, request.query.cursor, now, isCreatedPosition)
          : null;
        // Ordered here as the cursor compares (the database's collation need not order ids as JS does).
        const endpoints = (await listWebhookEndpoints(deps.db, organisationId)).sort(
          (a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
        );
        // Newest first (created_at, then id, descending): what follows the last item of the page before.
        const rest =
          after === null
            ? endpoints
            : endpoints.filter(
                (e) => e.createdAt < after[0] || (e.createdAt === after[0] && e.id < after[1]),
              );
        const limit = request.query.limit ?? DEFAULT_PAGE_SIZE;
        const page = rest.slice(0, limit);
        const data = page.map(presentWebhookEndpoint);
        const last = page[page.length - 1];
        return rest.length > limit && last
          ? { data, next_cursor: cursors.encode(listing, [last.createdAt, last.id], now) }
          : { data };
      },
    );

    app.get(
      '/webhook-endpoints/:id',
      {
        schema: {
          tags: TAGS,
          operationId: 'getWebhookEndpoint',
          summary: 'One webhook endpoint (its secret is never shown again)',
          params: WebhookEndpointParams,
          querystring: NoQuery,
          response: {
            200: dataOf(WebhookEndpointResource),
            400: BAD_ID,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const endpoint = await getWebhookEndpoint(deps.db, organisationOf(request), request.params.id);
        return { data: presentWebhookEndpoint(endpoint) };
      },
    );

    app.delete(
      '/webhook-endpoints/:id',
      {
        schema: {
          tags: TAGS,
          operationId: 'deleteWebhookEndpoint',
          summary: 'Delete an endpoint: nothing more is sent to it, and its deliveries go with it',
          params: WebhookEndpointParams,
          querystring: NoQuery,
          response: {
            204: z.null().describe('Deleted.'),
            400: BAD_ID,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        await deleteWebhookEndpoint(deps.db, organisationOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/webhook-endpoints/:id/test',
      {
        schema: {
          tags: TAGS,
          operationId: 'sendWebhookTestEvent',
          summary: 'Send a webhook.test event to this endpoint, signed and delivered like any other',
          params: WebhookEndpointParams,
          querystring: NoQuery,
          response: {
            202: dataOf(
              z.object({ event_id: z.string().describe('The test event: find it in the deliveries.') }),
            ).describe('Queued: the delivery worker sends it within a second.'),
            400: BAD_ID,
            404: NOT_FOUND,
            409: ErrorEnvelope.describe('conflict: the endpoint is disabled.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { eventId } = await sendTestEvent(
          deps.db,
          organisationOf(request),
          request.params.id,
          deps.clock.nowMs(),
        );
        return reply.code(202).send({ data: { event_id: eventId } });
      },
    );

    app.get(
      '/webhook-endpoints/:id/deliveries',
      {
        schema: {
          tags: TAGS,
          operationId: 'listWebhookDeliveries',
          summary: "The endpoint's deliveries, the latest first: status, attempts, response code and time",
          params: WebhookEndpointParams,
          querystring: PageQuery,
          response: {
            200: listOf(WebhookDeliveryResource, 'A page of deliveries.'),
            400: BAD_ID,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const organisationId = organisationOf(request);
        const cursors = await deliveriesCursor(secrets, organisationId, request.params.id);
        const now = deps.clock.nowMs();
        const beforeSeq = request.query.cursor ? cursors.decode(request.query.cursor, now) : null;
        const page = await listDeliveries(deps.db, organisationId, request.params.id, {
          beforeSeq,
          limit: request.query.limit ?? DEFAULT_PAGE_SIZE,
        });
        const data = page.items.map(presentWebhookDelivery);
        return page.next === null ? { data } : { data, next_cursor: cursors.encode(page.next, now) };
      },
    );
  };
}

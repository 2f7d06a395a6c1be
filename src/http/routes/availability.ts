import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { availabilityAt } from '../../app/availability-cache.ts';
import type { AppDeps } from '../../app/deps.ts';
import { AvailabilityQuery, AvailabilityResource, presentAvailability } from '../../contract/availability.ts';
import { AUTHENTICATED_ERRORS, dataOf, ErrorEnvelope, SlugParams } from '../../contract/common.ts';
import type { Availability } from '../../domain/availability/types.ts';
import { principalOf } from '../authenticate.ts';

/**
 * Response bodies of the answers still held by the availability cache, dropped with them. An answer
 * belongs to one location, so its body is the same whoever asks.
 */
const serialised = new WeakMap<Availability, string>();

/** GET /locations/{slug}/availability. */
export function availabilityRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/locations/:slug/availability',
      {
        schema: {
          tags: ['Availability'],
          operationId: 'getAvailability',
          summary: 'Free slots for one or more services, any staff or one, over 1 to 14 local days',
          description:
            'Starts lie on the local wall-clock grid of the location; every time carries the offset in force at ' +
            'that instant. Lead times (min notice, max advance), closures, time off and existing bookings with ' +
            'their buffers are honoured. Without staff_id each start is offered once, with the staff member a ' +
            'booking would be assigned.',
          params: SlugParams,
          querystring: AvailabilityQuery,
          response: {
            200: dataOf(AvailabilityResource).describe('The free slots, sorted by start.'),
            400: ErrorEnvelope.describe(
              'invalid_request naming the parameter (service_ids, date, days, staff_id).',
            ),
            404: ErrorEnvelope.describe('not_found: no active location has this slug.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { organisation } = principalOf(request);
        const { service_ids, date, days, staff_id } = request.query;
        const { location, availability } = await availabilityAt(
          deps.db,
          organisation.id,
          {
            locationSlug: request.params.slug,
            serviceIds: service_ids,
            staffId: staff_id?.toLowerCase(),
            fromDate: date,
            days: days ?? 1,
          },
          deps.clock.nowMs(),
          // Read with the key, by this request's first query; nothing of the request has run since.
          { catalogueVersion: organisation.catalogueVersion, bookingsVersion: organisation.bookingsVersion },
        );
        // A reused answer (availability-cache.ts) is the same object each time: serialised once.
        let body = serialised.get(availability);
        if (body === undefined) {
          body = JSON.stringify({ data: presentAvailability(location, availability) });
          serialised.set(availability, body);
        }
        // Sent as it is (the route's typed reply would serialise it again), as the listings' pages are.
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
      },
    );
  };
}

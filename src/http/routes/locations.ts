import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { CursorSecrets } from '../../app/cursor-secrets.ts';
import type { AppDeps } from '../../app/deps.ts';
import {
  listLocations,
  listServicesAt,
  listStaffWorkingAt,
  type PageRequest,
  requireLocation,
} from '../../app/directory-service.ts';
import { getLocationInfo } from '../../app/location-info-service.ts';
import {
  AUTHENTICATED_ERRORS,
  dataOf,
  ErrorEnvelope,
  listOf,
  NoQuery,
  PageQuery,
  SlugParams,
} from '../../contract/common.ts';
import { LocationResource, presentLocation } from '../../contract/location.ts';
import { LocationInfoResource, presentLocationInfo } from '../../contract/location-info.ts';
import { presentService, ServiceResource } from '../../contract/service.ts';
import { presentStaff, StaffResource } from '../../contract/staff.ts';
import type { Page } from '../../domain/catalogue.ts';
import { principalOf } from '../authenticate.ts';
import { CursorCodec } from '../cursor.ts';
import type { ListPageCache } from '../list-page-cache.ts';
import { type Listing, readPageRequest, sendPage } from '../pagination.ts';

const BAD_REQUEST = ErrorEnvelope.describe('invalid_request: a bad query parameter or cursor.');
const NOT_FOUND = ErrorEnvelope.describe('not_found: no active location has this slug.');

/** GET /locations, /locations/{slug}/services, /locations/{slug}/staff and /locations/{slug}/info. */
export function locationRoutes(
  deps: AppDeps,
  secrets: CursorSecrets,
  pages: ListPageCache,
): FastifyPluginAsyncZod {
  /**
   * A page of the listing `name`, from the listing cache or, on a miss, `load`. Loaders are written
   * inline at the call: as a named const made on every request, the bundle (esbuild's keepNames) would
   * name each with a defineProperty.
   */
  const sendListPage = async <T, R>(
    request: FastifyRequest & { query: Parameters<typeof readPageRequest>[2] },
    reply: FastifyReply,
    name: string,
    load: (organisationId: string, page: PageRequest) => Promise<Page<T>>,
    present: (item: T) => R,
  ) => {
    const { organisation } = principalOf(request);
    const cursors = new CursorCodec(await secrets.of(organisation.id));
    const listing: Listing = {
      organisationId: organisation.id,
      catalogueVersion: organisation.catalogueVersion,
      name,
    };
    const nowMs = deps.clock.nowMs();
    const page = readPageRequest(cursors, listing, request.query, nowMs);
    return sendPage(
      reply,
      { cursors, pages, nowMs },
      listing,
      page,
      () => load(organisation.id, page),
      present,
    );
  };

  /** The location of `slug` (404 when the organisation has no such active location). */
  const locationOf = (organisationId: string, slug: string) => requireLocation(deps.db, organisationId, slug);

  return async (app) => {
    app.get(
      '/locations',
      {
        schema: {
          tags: ['Locations'],
          operationId: 'listLocations',
          summary: 'List the active locations of the organisation',
          querystring: PageQuery,
          response: {
            200: listOf(LocationResource, 'A page of active locations, sorted by name.'),
            400: BAD_REQUEST,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) =>
        sendListPage(
          request,
          reply,
          'locations',
          (org, page) => listLocations(deps.db, org, page),
          presentLocation,
        ),
    );

    app.get(
      '/locations/:slug/services',
      {
        schema: {
          tags: ['Locations'],
          operationId: 'listServices',
          summary: 'List the services offered at a location, with the staff who deliver each',
          params: SlugParams,
          querystring: PageQuery,
          response: {
            200: listOf(ServiceResource, 'A page of the services offered here, sorted by name.'),
            400: BAD_REQUEST,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { currency } = principalOf(request).organisation;
        const { slug } = request.params;
        return sendListPage(
          request,
          reply,
          `services:${slug}`,
          async (org, page) => listServicesAt(deps.db, org, await locationOf(org, slug), page),
          (s) => presentService(s, currency),
        );
      },
    );

    app.get(
      '/locations/:slug/staff',
      {
        schema: {
          tags: ['Locations'],
          operationId: 'listStaff',
          summary: 'List the active staff working at a location',
          params: SlugParams,
          querystring: PageQuery,
          response: {
            200: listOf(StaffResource, 'A page of the active staff working here, sorted by name.'),
            400: BAD_REQUEST,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { slug } = request.params;
        return sendListPage(
          request,
          reply,
          `staff:${slug}`,
          async (org, page) => listStaffWorkingAt(deps.db, org, await locationOf(org, slug), page),
          presentStaff,
        );
      },
    );

    app.get(
      '/locations/:slug/info',
      {
        schema: {
          tags: ['Locations'],
          operationId: 'getLocationInfo',
          summary: 'What a caller may ask about a location: hours, closures, deposits and the policy',
          description:
            'Opening hours per weekday (the union of its active staff working hours), closures in the next ' +
            '60 days with their reasons, the services that ask for a deposit, Booking Protection and the ' +
            'cancellation policy. An addition to the v1 contract.',
          params: SlugParams,
          querystring: NoQuery,
          response: {
            200: dataOf(LocationInfoResource),
            400: BAD_REQUEST,
            404: NOT_FOUND,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const { organisation } = principalOf(request);
        const info = await getLocationInfo(
          deps.db,
          organisation.id,
          request.params.slug,
          deps.clock.nowMs(),
          'slug',
        );
        return { data: presentLocationInfo(info) };
      },
    );
  };
}

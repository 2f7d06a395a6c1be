import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app/deps.ts';
import {
  listLocations,
  listServicesAt,
  listStaffWorkingAt,
  requireLocation,
} from '../../app/directory-service.ts';
import { principalOf } from '../authenticate.ts';
import type { CursorCodec } from '../cursor.ts';
import { pageBody, readPageRequest } from '../pagination.ts';
import { AUTHENTICATED_ERRORS, ErrorEnvelope, listOf, PageQuery, SlugParams } from '../resources/common.ts';
import { LocationResource, presentLocation } from '../resources/location.ts';
import { presentService, ServiceResource } from '../resources/service.ts';
import { presentStaff, StaffResource } from '../resources/staff.ts';

const BAD_REQUEST = ErrorEnvelope.describe('invalid_request: a bad query parameter or cursor.');
const NOT_FOUND = ErrorEnvelope.describe('not_found: no active location has this slug.');

/** GET /locations, /locations/{slug}/services and /locations/{slug}/staff. */
export function locationRoutes(deps: AppDeps, cursors: CursorCodec): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/locations',
      {
        schema: {
          tags: ['Locations'],
          summary: 'List the active locations of the organisation',
          querystring: PageQuery,
          response: {
            200: listOf(LocationResource, 'A page of active locations, sorted by name.'),
            400: BAD_REQUEST,
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const organisationId = principalOf(request).organisation.id;
        const now = deps.clock.now().toMillis();
        const listing = `${organisationId}:locations`;
        const page = await listLocations(
          deps.db,
          organisationId,
          readPageRequest(cursors, listing, request.query, now),
        );
        return pageBody(cursors, listing, page, presentLocation, now);
      },
    );

    app.get(
      '/locations/:slug/services',
      {
        schema: {
          tags: ['Locations'],
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
      async (request) => {
        const { organisation } = principalOf(request);
        const now = deps.clock.now().toMillis();
        const location = await requireLocation(deps.db, organisation.id, request.params.slug);
        const listing = `${organisation.id}:services:${location.id}`;
        const pageRequest = readPageRequest(cursors, listing, request.query, now);
        const page = await listServicesAt(deps.db, organisation.id, location, pageRequest);
        return pageBody(cursors, listing, page, (s) => presentService(s, organisation.currency), now);
      },
    );

    app.get(
      '/locations/:slug/staff',
      {
        schema: {
          tags: ['Locations'],
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
      async (request) => {
        const organisationId = principalOf(request).organisation.id;
        const now = deps.clock.now().toMillis();
        const location = await requireLocation(deps.db, organisationId, request.params.slug);
        const listing = `${organisationId}:staff:${location.id}`;
        const pageRequest = readPageRequest(cursors, listing, request.query, now);
        const page = await listStaffWorkingAt(deps.db, organisationId, location, pageRequest);
        return pageBody(cursors, listing, page, presentStaff, now);
      },
    );
  };
}

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app/deps.ts';
import { CreatedBookingResource, NewBookingBody } from '../../contract/booking.ts';
import {
  AUTHENTICATED_ERRORS,
  DATABASE_UNAVAILABLE,
  dataOf,
  ErrorEnvelope,
  NoQuery,
} from '../../contract/common.ts';
import { createBookingHandler, IdempotencyHeaders } from './bookings.ts';

/**
 * POST /bookings/protected-holds: Booking Protection's pending_confirmation hold, which the customer
 * finishes on the booking page (an addition to v1). POST /bookings keeps answering 409
 * booking_protection_required at such a location, as the contract says; this is how a client that
 * hands the customer the booking page (MCP `book` over `booking mcp --base-url`) makes the hold that
 * MCP `book` and the public page make in process.
 */
export function protectedHoldRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/bookings/protected-holds',
      {
        // A refused body is stored under its Idempotency-Key (createBookingHandler).
        attachValidation: true,
        schema: {
          tags: ['Bookings'],
          operationId: 'createProtectedHold',
          summary: "Hold a slot at a Booking Protection location, finished on the booking's page",
          description:
            'The body of POST /v1/bookings. At a location whose booking_protection_policy applies, the booking ' +
            'is pending_confirmation with pending_confirmation.requirements protection_setup (and deposit when ' +
            'the services carry one), held until hold_expires_at; the customer saves a card (and pays any ' +
            'deposit) on booking_page_url, whose link is sent to them by SMS and e-mail through the outbox, ' +
            'and finishing the steps confirms it. At a location without Booking Protection it is refused ' +
            '(409 conflict, param location_slug): book there with POST /v1/bookings. Idempotency-Key as for ' +
            'POST /v1/bookings (a key is bound to the endpoint it was first sent to). What MCP book uses over ' +
            'booking mcp --base-url. An addition to the v1 contract.',
          headers: IdempotencyHeaders,
          body: NewBookingBody,
          querystring: NoQuery,
          response: {
            201: dataOf(CreatedBookingResource).describe('Held: pending_confirmation.'),
            400: ErrorEnvelope.describe(
              'invalid_request naming the field (service not bookable online, staff not eligible, ...).',
            ),
            404: ErrorEnvelope.describe('not_found: unknown location, service or client.'),
            409: ErrorEnvelope.describe(
              'conflict: Booking Protection does not apply at the location (param location_slug, no reason; ' +
                'use POST /v1/bookings), or the slot with its reason: too_soon, too_far_ahead, closed, ' +
                'not_on_grid, slot_unavailable or staff_not_working (param starts_at); ' +
                'idempotency_key_reused.',
            ),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
            503: ErrorEnvelope.describe(
              `payments_unavailable: no payment provider is configured to take the card (or the deposit); or ${DATABASE_UNAVAILABLE}`,
            ),
          },
        },
      },
      createBookingHandler(deps, { protectedHoldOnly: true }),
    );
  };
}

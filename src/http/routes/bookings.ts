import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listSeries } from '../../app/booking-series.ts';
import { getBooking } from '../../app/booking-service.ts';
import type { AppDeps } from '../../app/deps.ts';
import { refuseOnce, type StoredResponse } from '../../app/idempotency.ts';
import { bookingFingerprint, createBookingIdempotently } from '../../app/idempotent-booking.ts';
import { cancelWithScope, rescheduleWithScope } from '../../app/series-changes.ts';
import {
  BookingResource,
  CancelBody,
  CancellationResource,
  CreatedBookingResource,
  NewBookingBody,
  presentBooking,
  presentCancellation,
  presentReschedule,
  ReferenceParams,
  RescheduleBody,
  RescheduledBookingResource,
} from '../../contract/booking.ts';
import {
  AUTHENTICATED_ERRORS,
  DATABASE_UNAVAILABLE,
  dataOf,
  ErrorEnvelope,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  isIdempotencyKey,
  NoQuery,
  withoutOmittedNulls,
} from '../../contract/common.ts';
import { AppError } from '../../domain/errors.ts';
import { instantOfDateTime } from '../../domain/time-format.ts';
import { principalOf } from '../authenticate.ts';
import { toAppError } from '../error-envelope.ts';
import { bookingViewer, publicBaseUrl } from '../public-base-url.ts';

/** POST /bookings and GET /bookings/{reference}. */
export function bookingRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/bookings',
      {
        // A refused body is stored under its Idempotency-Key (createBookingHandler).
        attachValidation: true,
        schema: {
          tags: ['Bookings'],
          operationId: 'createBooking',
          summary: 'Book a slot offered by availability',
          description:
            'Without a deposit the booking is confirmed. With one it is pending_payment, with deposit and ' +
            'payment_url, until the hosted checkout is paid (or the hold lapses); when the installation has no ' +
            'payment provider, a booking that needs a deposit is refused (503 payments_unavailable). Send ' +
            'Idempotency-Key to make retries safe: the same key and body within 24 hours replay the stored ' +
            'response (5xx answers are not stored).',
          headers: IdempotencyHeaders,
          body: NewBookingBody,
          querystring: NoQuery,
          response: {
            201: dataOf(CreatedBookingResource).describe('Booked.'),
            400: ErrorEnvelope.describe(
              'invalid_request naming the field (service not bookable online, staff not eligible, ...).',
            ),
            404: ErrorEnvelope.describe('not_found: unknown location, service or client.'),
            409: ErrorEnvelope.describe(
              'conflict with its reason: too_soon, too_far_ahead, closed, not_on_grid, slot_unavailable or ' +
                'staff_not_working (param starts_at); series_clash (with `repeat`: nothing ' +
                'was booked, details.clashes lists each occurrence not free with alternatives that day); ' +
                'booking_protection_required; idempotency_key_reused.',
            ),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
            503: ErrorEnvelope.describe(
              `payments_unavailable: the booking needs a deposit and no payment provider is configured; or ${DATABASE_UNAVAILABLE}`,
            ),
          },
        },
      },
      createBookingHandler(deps, { protectedHoldOnly: false }),
    );

    app.get(
      '/bookings',
      {
        schema: {
          tags: ['Bookings'],
          operationId: 'listSeriesBookings',
          summary: 'The occurrences of a recurring series',
          description:
            'Every booking of the series (booked with `repeat`), in time order, whatever its status. An addition to v1.',
          querystring: z.strictObject({
            series_id: z.uuid().describe('The series_id of any of its bookings.'),
          }),
          response: {
            200: z.object({ data: z.array(BookingResource) }),
            400: ErrorEnvelope.describe('invalid_request: series_id is missing or not a UUID.'),
            404: ErrorEnvelope.describe('not_found: no series has this id.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const bookings = await listSeries(
          deps.db,
          principalOf(request).organisation.id,
          request.query.series_id.toLowerCase(),
        );
        const now = deps.clock.nowMs();
        const viewer = bookingViewer(deps, request);
        return { data: bookings.map((booking) => presentBooking(booking, now, viewer)) };
      },
    );

    app.get(
      '/bookings/:reference',
      {
        schema: {
          tags: ['Bookings'],
          operationId: 'getBooking',
          summary: 'A booking with its current status, pending confirmation and fee state',
          params: ReferenceParams,
          querystring: NoQuery,
          response: {
            200: dataOf(BookingResource),
            400: ErrorEnvelope.describe('invalid_request: the reference is not one.'),
            404: ErrorEnvelope.describe('not_found: no booking has this reference.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const booking = await getBooking(
          deps.db,
          principalOf(request).organisation.id,
          request.params.reference,
        );
        return { data: presentBooking(booking, deps.clock.nowMs(), bookingViewer(deps, request)) };
      },
    );

    app.patch(
      '/bookings/:reference',
      {
        schema: {
          tags: ['Bookings'],
          operationId: 'rescheduleBooking',
          summary: 'Move a booking to another slot (and optionally another staff member)',
          description:
            'The answer carries `change` (an addition to v1): whether the change is late and what becomes of a ' +
            'paid deposit. With `dry_run: true` nothing changes: the answer is the booking as it would be.',
          params: ReferenceParams,
          querystring: NoQuery,
          body: RescheduleBody,
          response: {
            200: dataOf(RescheduledBookingResource),
            400: ErrorEnvelope.describe('invalid_request naming the field.'),
            404: ErrorEnvelope.describe('not_found: no booking has this reference.'),
            409: ErrorEnvelope.describe(
              'conflict with its reason: not_changeable (the booking is not live or has started), late_change ' +
                '(the policy window forbids it), too_soon, too_far_ahead, closed, not_on_grid, ' +
                'slot_unavailable or staff_not_working (param starts_at); series_clash (scope ' +
                'following: nothing moved, details.clashes lists each occurrence that cannot move with ' +
                'alternatives that day); without a reason, the ' +
                "catalogue changed since the booking was made: param staff_id (no staff_id was sent and the booking's " +
                'staff member can no longer take it) or service_ids (a service no longer bookable online there).',
            ),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const now = deps.clock.nowMs();
        const dryRun = request.body.dry_run === true;
        const result = await rescheduleWithScope(
          deps.db,
          { organisationId: principal.organisation.id, actor: `api_key:${principal.apiKeyId}` },
          request.params.reference,
          {
            startsAt: instantOfDateTime(request.body.starts_at),
            staffId: request.body.staff_id?.toLowerCase(),
          },
          request.body.scope ?? 'one',
          now,
          dryRun,
        );
        return { data: presentReschedule(result, now, bookingViewer(deps, request), dryRun) };
      },
    );

    app.post(
      '/bookings/:reference/cancel',
      {
        schema: {
          tags: ['Bookings'],
          operationId: 'cancelBooking',
          summary: 'Cancel a booking; the policy window decides whether a paid deposit is refunded',
          description:
            'The answer carries `change` (an addition to v1): whether the cancellation is late, what becomes ' +
            'of a paid deposit, and the late-cancellation fee. With `dry_run: true` nothing changes: the ' +
            'answer is what the cancellation would be.',
          params: ReferenceParams,
          querystring: NoQuery,
          body: CancelBody,
          response: {
            200: dataOf(CancellationResource),
            400: ErrorEnvelope.describe('invalid_request naming the field.'),
            404: ErrorEnvelope.describe('not_found: no booking has this reference.'),
            409: ErrorEnvelope.describe(
              'conflict with its reason: not_changeable (the booking is not live or has started) or late_change ' +
                '(the policy forbids a late cancellation).',
            ),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
            503: ErrorEnvelope.describe(
              'payments_unavailable: a deposit paid online is due back and no payment provider is configured ' +
                '(nothing changed), or the provider could not be reached: the booking is not cancelled yet, and ' +
                'asking again completes the cancellation (as the server does once the provider answers). Or ' +
                DATABASE_UNAVAILABLE,
            ),
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const now = deps.clock.nowMs();
        const dryRun = request.body?.dry_run === true;
        const result = await cancelWithScope(
          deps.db,
          {
            organisationId: principal.organisation.id,
            actor: `api_key:${principal.apiKeyId}`,
            payments: deps.payments,
          },
          request.params.reference,
          request.body?.reason,
          request.body?.scope ?? 'one',
          now,
          dryRun,
        );
        return { data: presentCancellation(result.booking, { ...result, dryRun, at: now }) };
      },
    );
  };
}

/**
 * The handler of the booking-creating routes (POST /bookings, and /bookings/protected-holds with
 * `protectedHoldOnly`). A replay sends back whatever was stored: the 201 body, or a stored 4xx
 * envelope, and says so (Idempotent-Replayed: true, as Stripe's API does), so a client can tell it
 * made nothing new.
 */
export function createBookingHandler(deps: AppDeps, options: { protectedHoldOnly: boolean }) {
  return async (request: FastifyRequest<{ Body: z.infer<typeof NewBookingBody> }>, reply: FastifyReply) => {
    const outcome = request.validationError
      ? await refuseInvalidRequest(deps, request, request.validationError, options.protectedHoldOnly)
      : await createBookingIdempotently(deps, principalOf(request), request.body, {
          idempotencyKey: idempotencyKeyOf(request),
          publicBaseUrl: publicBaseUrl(request),
          source: 'api',
          protectedHoldOnly: options.protectedHoldOnly,
        });
    if (outcome.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(outcome.status as 201).send(outcome.body as never);
  };
}

/**
 * The answer to a booking-creating request that the contract's schema refused (the routes'
 * attachValidation). A refused body is a 4xx like any other, stored under a well-formed
 * Idempotency-Key for 24 hours (design.md 4), fingerprinted as it was sent, less the optional fields
 * sent null (they mean the field omitted, in a parsed body too: withoutOmittedNulls): the same key and
 * body are refused again, replayed; the key with another body is idempotency_key_reused. Refused headers or
 * query strings are no part of the fingerprint: answered, not stored. A body that is not JSON never
 * gets here (the error handler answers it): it has no canonical form to fingerprint.
 */
async function refuseInvalidRequest(
  deps: AppDeps,
  request: FastifyRequest,
  validationError: NonNullable<FastifyRequest['validationError']>,
  protectedHoldOnly: boolean,
): Promise<StoredResponse> {
  const error = toAppError(validationError as FastifyError, request);
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' && isIdempotencyKey(header) ? header : undefined;
  if (key === undefined || validationError.validationContext !== 'body') throw error;
  const scope = {
    organisationId: principalOf(request).organisation.id,
    key,
    fingerprint: bookingFingerprint(withoutOmittedNulls(NewBookingBody, request.body), protectedHoldOnly),
    now: deps.clock.nowMs(),
  };
  return refuseOnce(deps.db, scope, error);
}

/** The Idempotency-Key header of the booking-creating routes. */
export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .meta({ pattern: IDEMPOTENCY_KEY_PATTERN.source, minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH })
    .optional()
    .describe('Any unique string (a UUID v4 is ideal), 1 to 255 printable characters.'),
});

export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !isIdempotencyKey(key)) {
    throw new AppError(
      'invalid_request',
      'Idempotency-Key must be 1 to 255 printable ASCII characters, not beginning or ending with a space.',
      'Idempotency-Key',
    );
  }
  return key;
}

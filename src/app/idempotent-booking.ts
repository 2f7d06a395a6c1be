import type { z } from 'zod';
import type { Principal } from '../app/api-key-service.ts';
import { createSeries } from '../app/booking-series.ts';
import { type Caller, createBooking } from '../app/booking-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { fingerprint, runIdempotently, type StoredResponse } from '../app/idempotency.ts';
import { type NewBookingBody, presentCreatedBooking, presentCreatedSeries } from '../contract/booking.ts';
import type { BookingsTable } from '../data/tables.ts';
import type { CreatedBooking } from '../domain/booking/booking.ts';
import { instantOfDateTime } from '../domain/time-format.ts';
import { redirectTemplate } from './checkout-service.ts';
import { withCheckoutsOpenedFirst } from './checkouts-opened-first.ts';
import { customerLinks } from './customer-links.ts';

/**
 * The use case behind POST /bookings and POST /bookings/protected-holds, shared by the REST routes and
 * the MCP tools in this process: the body (already validated against the public contract) is booked
 * idempotently and answered with the 201 body, or a stored response is replayed (the 201, or a stored
 * 4xx envelope). Both faces store and replay the very same response (the contract's representation,
 * src/contract), so an MCP retry and a REST retry of one key cannot disagree.
 */
export function createBookingIdempotently(
  deps: AppDeps,
  principal: Principal,
  body: z.infer<typeof NewBookingBody>,
  options: {
    idempotencyKey: string | undefined;
    /** null: no address customers reach is known (see CheckoutContext.publicBaseUrl). */
    publicBaseUrl: string | null;
    source: BookingsTable['source'];
    /** The customer is handed the booking page (see CheckoutContext.hostedFlow). */
    hostedFlow?: boolean;
    /**
     * POST /v1/bookings/protected-holds: only Booking Protection's hold (see
     * CheckoutContext.protectedHoldOnly). Its requests are fingerprinted with that path, so a key sent
     * to POST /v1/bookings first (and its stored 409) is not replayed here: the same key is
     * idempotency_key_reused, as with another body.
     */
    protectedHoldOnly?: boolean;
  },
): Promise<StoredResponse> {
  const now = deps.clock.nowMs();
  const { organisation } = principal;
  // A deposit's checkout at a provider across the network is opened between runs, outside the
  // transaction (checkouts-opened-first.ts); the key's record is read afresh by each run.
  return withCheckoutsOpenedFirst(deps.payments, (opener) =>
    runIdempotently(
      deps.db,
      {
        organisationId: organisation.id,
        key: options.idempotencyKey,
        fingerprint: bookingFingerprint(body, options.protectedHoldOnly ?? false),
        now,
      },
      async (trx, record) => {
        const caller: Caller = {
          organisationId: organisation.id,
          currency: organisation.currency,
          referencePrefix: organisation.bookingReferencePrefix,
          actor: `${options.source === 'mcp' ? 'mcp' : 'api_key'}:${principal.apiKeyId}`,
          source: options.source,
          // Read with the key, before anything of this request or tool call; nothing here writes the catalogue.
          catalogueVersion: organisation.catalogueVersion,
        };
        const input = {
          locationSlug: body.location_slug,
          serviceIds: body.service_ids.map((id) => id.toLowerCase()),
          staffId: body.staff_id?.toLowerCase(),
          clientId: body.client_id.toLowerCase(),
          startsAt: instantOfDateTime(body.starts_at),
          notes: body.notes,
          successUrl: redirectTemplate(body.checkout_success_url),
          cancelUrl: redirectTemplate(body.checkout_cancel_url),
        };
        const checkout = {
          payments: deps.payments,
          opener,
          publicBaseUrl: options.publicBaseUrl,
          hostedFlow: options.hostedFlow ?? false,
          protectedHoldOnly: options.protectedHoldOnly ?? false,
        };
        const viewer = {
          scope: principal.scope,
          links: options.publicBaseUrl === null ? null : customerLinks(deps.payments, options.publicBaseUrl),
        };
        // A series is booked whole under the one key: a retry replays every occurrence, never books one again.
        if (body.repeat) {
          const series = await createSeries(
            trx,
            caller,
            input,
            { everyWeeks: body.repeat.every_weeks, count: body.repeat.count },
            now,
            checkout,
          );
          opener?.endOfWork();
          return { status: 201, body: { data: presentCreatedSeries(series, now, viewer) } };
        }
        // The answer's record goes into the booking's own write statement when the answer is known by
        // then (ResponseRecord): the same answer, returned as it was recorded. Nothing runs in the
        // transaction after that statement, which may then carry its COMMIT (lastStatement).
        let recorded: { created: CreatedBooking; response: StoredResponse } | undefined;
        const created = await createBooking(trx, caller, input, now, checkout, {
          keyRecord: record.deferredRead,
          lastStatement: true,
          recordWith: (made) => {
            const response = { status: 201, body: { data: presentCreatedBooking(made, now, viewer) } };
            recorded = { created: made, response };
            return record.rowFor(response);
          },
        });
        opener?.endOfWork();
        if (recorded?.created === created) return recorded.response;
        return { status: 201, body: { data: presentCreatedBooking(created, now, viewer) } };
      },
      // A single booking reads its key's record with its bookings; a series reads it first.
      { workReadsRecord: !body.repeat },
    ),
  );
}

/**
 * The fingerprint of a booking-creating request: its body, and which of the two endpoints it went to
 * (see protectedHoldOnly above). The body as validated, or as sent when the contract refused it.
 */
export function bookingFingerprint(body: unknown, protectedHoldOnly: boolean): string {
  return fingerprint('POST', protectedHoldOnly ? '/v1/bookings/protected-holds' : '/v1/bookings', body);
}

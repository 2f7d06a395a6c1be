import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../app/deps.ts';
import type { BookingLinks } from '../contract/booking.ts';

/** Where the customer reaches this server, for links such as payment_url (honours a trusted proxy). */
export function publicBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** A booking's links (payment_url) as this request's caller should hand them to the customer. */
export function bookingLinks(deps: AppDeps, request: FastifyRequest): BookingLinks {
  const base = publicBaseUrl(request);
  return { paymentUrl: (sessionId) => deps.payments.checkoutUrl(sessionId, base) };
}

import type { FastifyRequest } from 'fastify';

/** Where the customer reaches this server, for links such as payment_url (honours a trusted proxy). */
export function publicBaseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

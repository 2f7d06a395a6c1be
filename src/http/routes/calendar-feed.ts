import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { renderFeed } from '../../app/calendars/feeds.ts';
import type { AppDeps } from '../../app/deps.ts';

/**
 * GET /ical/{token}.ics (design.md 9.6): a staff member's bookings as a calendar to subscribe to in
 * Google, Apple or Outlook calendars. No key: the token in the address is the credential (calendar
 * apps cannot send one), so the route is outside /v1 and hidden from its OpenAPI document. An unknown
 * and a revoked token answer the same 404. The answer carries a strong ETag (the body's hash) and
 * honours If-None-Match, so a client polling an unchanged calendar gets 304 and no body.
 */
export function calendarFeedRoutes(deps: AppDeps) {
  return async (app: FastifyInstance) => {
    app.get<{ Params: { file: string } }>(
      '/ical/:file',
      { schema: { hide: true } },
      async (request, reply) => {
        const match = /^(.+)\.ics$/.exec(request.params.file);
        const body = match ? await renderFeed(deps.db, match[1]!, deps.clock.nowMs()) : null;
        // Never cached by a shared cache, never sent on as a referrer: the address is a secret.
        reply.header('cache-control', 'private, no-cache').header('referrer-policy', 'no-referrer');
        if (body === null) {
          return reply
            .code(404)
            .send({ error: { code: 'not_found', message: 'No calendar feed has this address.' } });
        }
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
        reply.header('etag', etag);
        if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
        return reply
          .type('text/calendar; charset=utf-8')
          .header('content-disposition', 'inline; filename="bookings.ics"')
          .header('x-content-type-options', 'nosniff')
          .send(body);
      },
    );
  };
}

/** If-None-Match lists the ETag (or is *); weak comparison, as RFC 9110 asks for this header. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

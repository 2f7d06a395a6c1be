import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * CORS for the calls a browser-based MCP client makes itself (design.md 9.3; the SDK's browser
 * transport, an inspector in a web page): /mcp, its protected-resource metadata and client
 * registration. Each is a call with a Bearer token or none, never a cookie, so the answers name the
 * page's origin (or any) and never allow credentials: a page gains nothing a script outside a browser
 * does not already have. The SDK sends MCP-Protocol-Version (and, from 2026-07-28, Mcp-Method,
 * Mcp-Name and Mcp-Param-* headers), which makes even its GETs preflighted; a preflight is granted the
 * headers it names rather than a list that would refuse the next revision's.
 *
 * The authorization server's own endpoints (token, revocation, JWKS, metadata) are oidc-provider's to
 * answer, and it does (oauth-routes.ts): its token endpoint lets a public client's page in only from
 * the origin of one of its redirect URIs.
 */

/** How long a browser may keep a preflight's grant, in seconds (the provider's own figure). */
const PREFLIGHT_MAX_AGE_SECONDS = 3600;

/** A CORS preflight: it names the method to be sent (an OPTIONS without it is no CORS request). */
export function isPreflight(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
  );
}

/**
 * Lets the page that sent `request` read its answer (set on the raw response, so that it also holds
 * for answers a route writes itself), showing it `exposed` besides the safelisted headers. `anyOrigin`
 * answers `*` for what is the same for every page (a public document).
 */
export function allowCrossOrigin(
  request: FastifyRequest,
  reply: FastifyReply,
  exposed: readonly string[] = [],
  anyOrigin = false,
): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const raw = reply.raw;
  if (anyOrigin) {
    raw.setHeader('access-control-allow-origin', '*');
  } else {
    raw.setHeader('access-control-allow-origin', origin);
    raw.setHeader('vary', 'Origin');
  }
  if (exposed.length > 0) raw.setHeader('access-control-expose-headers', exposed.join(', '));
}

/** The answer to a preflight: `methods` and the headers it asked for, for an hour; no credentials. */
export function answerPreflight(
  request: FastifyRequest,
  reply: FastifyReply,
  methods: readonly string[],
  anyOrigin = false,
): FastifyReply {
  allowCrossOrigin(request, reply, [], anyOrigin);
  const asked = request.headers['access-control-request-headers'];
  if (typeof asked === 'string' && asked.trim() !== '') reply.header('access-control-allow-headers', asked);
  return reply
    .code(204)
    .header('access-control-allow-methods', methods.join(', '))
    .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
    .send();
}

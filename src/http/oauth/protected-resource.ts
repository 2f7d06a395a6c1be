import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONNECTOR_SCOPES } from '../../app/oauth-connectors.ts';
import { answerPreflight, isPreflight } from '../cross-origin.ts';
import { publicBaseUrl } from '../public-base-url.ts';

/**
 * /mcp as an OAuth protected resource (RFC 9728, design.md 9.3): its metadata names the authorization
 * server (this server, oauth-routes.ts), and a 401 from /mcp points to that metadata, which is how an
 * MCP host that only knows the URL finds where to sign in.
 */

/** The issuer, and base of /mcp, as this request names the server (public-base-url.ts), no trailing slash. */
export function issuerOf(request: FastifyRequest): string {
  return publicBaseUrl(request).replace(/\/+$/, '');
}

/** The resource every token for this request's /mcp must be bound to (RFC 8707). */
export function mcpResourceFor(request: FastifyRequest): string {
  return `${issuerOf(request)}/mcp`;
}

/** Where /mcp's metadata is: the RFC 9728 path-suffixed form for a resource with a path. */
export function resourceMetadataUrlFor(request: FastifyRequest): string {
  return `${issuerOf(request)}/.well-known/oauth-protected-resource/mcp`;
}

/**
 * The challenge of a 401 from /mcp (design.md 9.3: `Bearer resource_metadata="…"`): where the metadata
 * says to sign in; the scopes to ask for (RFC 6750's `scope`, which the MCP authorization spec of
 * 2025-11-25 says a server SHOULD send and a client uses before the metadata's `scopes_supported`: the
 * two, so the consent page still offers read-only or read and write); and `error="invalid_token"` when a Bearer credential was sent and refused (RFC 6750), which
 * tells an OAuth client to refresh or sign in again; with `description`, why (RFC 6750's
 * error_description: an access token expired, revoked, unknown or bound to another resource).
 */
export function setMcpChallenge(reply: FastifyReply, request: FastifyRequest, description?: string): void {
  // A token sent: a Bearer credential. Another scheme (Basic), or Bearer with nothing after it, is
  // no token, and gets no error code (RFC 6750 section 3.1: unaware, or an unsupported method).
  const tokenSent = /^Bearer +\S/i.test(request.headers.authorization ?? '');
  // A quoted-string of RFC 6750's characters: printable ASCII without " and \.
  const said = description?.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
  reply.header(
    'www-authenticate',
    `Bearer resource_metadata="${resourceMetadataUrlFor(request)}", scope="${CONNECTOR_SCOPES.join(' ')}", realm="booking"${tokenSent ? ', error="invalid_token"' : ''}${tokenSent && said ? `, error_description="${said}"` : ''}`,
  );
}

export function protectedResourceRoutes(app: FastifyInstance): void {
  const hidden = { schema: { hide: true } };
  const metadata = async (request: FastifyRequest, reply: FastifyReply) => {
    const issuer = issuerOf(request);
    return (
      reply
        .header('cache-control', 'public, max-age=3600')
        // Without PUBLIC_BASE_URL the issuer is the Host asked for: a shared cache keeps one per host.
        .header('vary', 'Host')
        .header('access-control-allow-origin', '*')
        .type('application/json; charset=utf-8')
        .send(
          JSON.stringify({
            resource: `${issuer}/mcp`,
            authorization_servers: [issuer],
            scopes_supported: CONNECTOR_SCOPES,
            bearer_methods_supported: ['header'],
            resource_name: 'Booking engine MCP',
            // The server serves no page on its MCP tools (docs/mcp.md is the repository's); the
            // console's connectors page is the one that says how an app connects to /mcp.
            resource_documentation: `${issuer}/console/connectors`,
          }),
        )
    );
  };
  // A browser-based client's GET carries MCP-Protocol-Version, so its browser asks first (CORS).
  const options = async (request: FastifyRequest, reply: FastifyReply) =>
    isPreflight(request)
      ? answerPreflight(request, reply, ['GET', 'HEAD'], true)
      : reply.code(204).header('allow', 'GET, HEAD, OPTIONS').send();
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    app.get(path, hidden, metadata);
    app.options(path, hidden, options);
  }
}

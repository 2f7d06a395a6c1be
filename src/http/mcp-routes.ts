import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { AppError } from '../domain/errors.ts';
import { buildMcpServer, type ToolExtra } from '../mcp/build-server.ts';
import { InProcessBookingApi } from '../mcp/in-process-api.ts';
import { createKeyResolver } from './authenticate.ts';
import { publicBaseUrl } from './public-base-url.ts';

export interface McpHttpOptions {
  /**
   * Host names (without port) the MCP endpoints answer to; a request whose Host, or Origin when a
   * browser sends one, names anything else is refused, against DNS rebinding.
   */
  allowedHosts: readonly string[];
}

/** JSON-RPC endpoints, not REST resources: kept out of the OpenAPI document (docs/mcp.md documents them). */
const HIDDEN = { schema: { hide: true } };

/**
 * The MCP endpoints on the REST server (the one place the HTTP face reaches into src/mcp): Streamable HTTP at /mcp (stateless: every POST carries its
 * own JSON-RPC exchange, so any instance can answer it) and the legacy SSE transport at /sse with its
 * /messages endpoint (stateful: the stream lives in this process). Callers authenticate with the REST
 * API's keys (Bearer); the key's scope and rate limit are applied per tool call by the tools' API, so
 * a read key can call the read-only tools. Faults are logged without arguments (personal data).
 */
export function registerMcpRoutes(app: FastifyInstance, deps: AppDeps, options: McpHttpOptions): void {
  const identify = createKeyResolver(deps);
  const allowed = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  const serverFor = (request: FastifyRequest) =>
    buildMcpServer({
      apiFor: async (extra) =>
        InProcessBookingApi.forToolCall(deps, principalOf(extra), { publicBaseUrl: publicBaseUrl(request) }),
      onFault: (error) => request.log.error({ err: error }, 'MCP tool failed'),
    });
  /** Host check and key; the raw request for the SDK, carrying the caller to the tools. */
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    assertAllowedHost(request, allowed);
    const principal = await identify(request, reply);
    const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
    raw.auth = { token: '', clientId: principal.apiKeyId, scopes: [principal.scope], extra: { principal } };
    reply.raw.setHeader('x-request-id', request.id);
    return { raw, principal };
  };

  app.post('/mcp', HIDDEN, async (request, reply) => {
    const { raw } = await admit(request, reply);
    const server = serverFor(request);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(raw, reply.raw, request.body);
  });
  // Stateless: there is no session to stream to (GET) or end (DELETE).
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      ...HIDDEN,
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        return reply.code(405).send({
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: 'Method not allowed: this server is stateless; POST JSON-RPC to /mcp.',
          },
          id: null,
        });
      },
    });
  }

  const sessions = new Map<string, { transport: SSEServerTransport; apiKeyId: string }>();
  // An SSE stream never ends by itself; a graceful shutdown ends them (clients reconnect elsewhere),
  // or the server would wait for them forever.
  app.addHook('preClose', async () => {
    await Promise.all([...sessions.values()].map(({ transport }) => transport.close()));
  });
  // No automatic HEAD route: a HEAD would open a session whose stream it can never carry.
  app.get('/sse', { ...HIDDEN, exposeHeadRoute: false }, async (request, reply) => {
    const { principal } = await admit(request, reply);
    const server = serverFor(request);
    reply.hijack();
    const transport = new SSEServerTransport('/messages', reply.raw);
    sessions.set(transport.sessionId, { transport, apiKeyId: principal.apiKeyId });
    reply.raw.on('close', () => {
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  });
  app.post('/messages', HIDDEN, async (request, reply) => {
    const { raw, principal } = await admit(request, reply);
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    // Another key's session is answered as if it did not exist.
    if (!session || session.apiKeyId !== principal.apiKeyId) {
      throw new AppError('not_found', 'No SSE session has this sessionId; open /sse first.', 'sessionId');
    }
    // Checked before the reply is handed to the SDK, whose own refusals are plain text (and, for a
    // JSON null, an internal "stream is not readable"): a message that is not JSON-RPC gets the envelope.
    if (!JSONRPCMessageSchema.safeParse(request.body).success) {
      throw new AppError('invalid_request', 'The body must be one JSON-RPC message.', 'body');
    }
    reply.hijack();
    await session.transport.handlePostMessage(raw, reply.raw, request.body);
  });
}

function principalOf(extra: ToolExtra): Principal {
  const principal = extra.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new Error('MCP request reached a tool without an authenticated caller');
  return principal;
}

/**
 * DNS rebinding: a web page may make a browser send requests to a name that resolves to this server;
 * it cannot make the Host (or Origin) header name this server. 403 invalid_host otherwise.
 */
function assertAllowedHost(request: FastifyRequest, allowed: ReadonlySet<string>): void {
  const host = hostnameOf(request.headers.host);
  if (host === undefined || !allowed.has(host)) {
    throw new AppError(
      'invalid_host',
      'This Host is not served here (MCP endpoints check it against DNS rebinding).',
      'Host',
    );
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !allowed.has(hostnameOf(origin, true) ?? '')) {
    throw new AppError('invalid_host', 'Requests from this Origin are not accepted.', 'Origin');
  }
}

function hostnameOf(value: string | undefined, isOrigin = false): string | undefined {
  if (!value) return undefined;
  try {
    return new URL(isOrigin ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

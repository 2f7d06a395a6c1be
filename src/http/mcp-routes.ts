import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isApiKeyActive } from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { storageRefusal } from '../app/health-service.ts';
import { countRequest, rateLimitRefusal } from '../app/request-budgets.ts';
import { AppError, isAppError } from '../domain/errors.ts';
import { createKeyResolver, RefusedAccessToken } from './authenticate.ts';
import { allowCrossOrigin, answerPreflight, isPreflight } from './cross-origin.ts';
import { isFault } from './error-envelope.ts';
import {
  JSON_RPC_ERROR,
  type JsonRpcId,
  requestIdOf,
  SaysHowToFix,
  sendJsonRpcError,
} from './json-rpc-errors.ts';
import { batchRefusal, duplicateIdRefusal, revisionOfHttpBatch } from './mcp-batches.ts';
import type { Caller, McpProtocol } from './mcp-protocol.ts';
import { DEFAULT_SSE_LIMITS, loadSseTransport, type SseLimits, SseSessions } from './mcp-sse.ts';
import { mcpResourceFor, setMcpChallenge } from './oauth/protected-resource.ts';
import { onDemand } from './on-demand.ts';
import { publicBaseUrl } from './public-base-url.ts';

export interface McpHttpOptions {
  /**
   * Host names (without port) the MCP endpoints answer to; a request whose Host, or Origin when a
   * browser sends one, names anything else is refused, against DNS rebinding.
   */
  allowedHosts: readonly string[];
  /**
   * Keep-alive, idle timeout and streams per key of the legacy SSE transport; streams per organisation
   * are the limits' organisationSseStreams unless given here.
   */
  sse?: Partial<SseLimits>;
  /** The largest request body, as the REST API's. */
  bodyLimitBytes: number;
}

/** JSON-RPC endpoints, not REST resources: kept out of the OpenAPI document (docs/mcp.md documents them). */
const HIDDEN = { schema: { hide: true } };

declare module 'fastify' {
  interface FastifyRequest {
    /** The MCP caller, once the endpoint's admission ran. */
    mcpCaller?: Caller;
  }
}

/**
 * The MCP endpoints on the REST server (the one place the HTTP face reaches into src/mcp):
 *
 * - Streamable HTTP at POST /mcp, stateless (any instance answers any request), both protocol
 *   generations: 2026-07-28 requests go to the SDK's `createMcpHandler`, 2025-era ones (no per-request
 *   envelope) to a stateless Streamable HTTP transport of the SDK's; both answer JSON, whatever the
 *   Accept header says, since nothing here ever streams.
 * - the legacy SSE transport at GET /sse and POST /messages (mcp-sse.ts).
 *
 * Callers authenticate with the REST API's keys (Bearer), checked as soon as the headers are in, before
 * the body is read; a refusal is an HTTP error (401 with WWW-Authenticate: Bearer, 403, 429) whose body
 * is a JSON-RPC error carrying the hint. So is every other error of POST /mcp and POST /messages, the
 * app's own included (a body that is not JSON or holds a NUL, a wrong method: json-rpc-errors.ts). The
 * key's scope, its rate limit and its organisation's budget are applied per tool call by the tools'
 * API, so a read key can call the read-only tools. Faults are logged without arguments.
 *
 * The protocol itself (the SDK, its schemas and the tools: 9 MB of heap) is loaded by the first MCP
 * request a server receives, not at start: a server that only ever serves REST never holds it, and
 * the first caller of one that does waits for it once (mcp-protocol.ts; docs/decisions/memory-under-load.md).
 */
export function registerMcpRoutes(app: FastifyInstance, deps: AppDeps, options: McpHttpOptions): void {
  // /mcp takes OAuth access tokens bound to it as well as keys (design.md 9.3); the SSE transport keys only.
  const identify = createKeyResolver(deps);
  const identifyMcp = createKeyResolver(deps, { oauthResource: mcpResourceFor });
  const allowed = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
  const protocol = onDemand(
    async (): Promise<McpProtocol> =>
      (await import('./mcp-protocol.ts')).createMcpProtocol(deps, options.bodyLimitBytes),
  );
  const sseLimits: SseLimits = {
    ...DEFAULT_SSE_LIMITS,
    maxStreamsPerOrganisation: deps.limits.organisationSseStreams,
    ...options.sse,
  };
  const sessions = new SseSessions({
    limits: sseLimits,
    keyIsActive: (apiKeyId) => isApiKeyActive(deps.db, apiKeyId),
    now: () => deps.clock.nowMs(),
  });

  /** Host check and key, before the body is read: the caller, or a JSON-RPC refusal already sent. */
  const admitWith =
    (resolve: typeof identify, challenge: boolean) =>
    async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      try {
        assertAllowedHost(request, allowed);
        const principal = await resolve(request, reply);
        request.mcpCaller = { principal, publicBaseUrl: publicBaseUrl(request), log: request.log };
      } catch (error) {
        if (challenge && isAppError(error) && error.status === 401) {
          setMcpChallenge(reply, request, error instanceof RefusedAccessToken ? error.message : undefined);
        }
        return refuse(reply, error, null);
      }
    };
  const admit = admitWith(identify, false);
  const admitMcp = admitWith(identifyMcp, true);

  app.post('/mcp', { ...HIDDEN, onRequest: admitMcp }, async (request, reply) => {
    if (nestedDeeperThan(request.body, MAX_JSON_DEPTH)) {
      return refuse(
        reply,
        new AppError('invalid_request', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`, 'body'),
        requestIdOf(request.body),
      );
    }
    if (Array.isArray(request.body)) {
      const refusal =
        batchRefusal(revisionOfHttpBatch(request.headers['mcp-protocol-version'], request.body)) ??
        duplicateIdRefusal(request.body);
      if (refusal !== undefined) {
        return refuse(
          reply,
          new SaysHowToFix('invalid_request', refusal, 'body'),
          null,
          JSON_RPC_ERROR.invalidRequest,
        );
      }
    }
    const caller = request.mcpCaller!;
    // A POST without a body is read as JSON null, as the SDK would read it (and refuse it).
    const body = request.body ?? null;
    const mcp = await protocol();
    const authInfo = authInfoOf(caller);
    const direct = mcp.answerDirectly(body, request.headers, authInfo);
    if (direct) {
      try {
        return reply.type('application/json').send(await direct);
      } catch (error) {
        return refuse(reply, error, requestIdOf(body));
      }
    }
    return sendResponse(reply, await mcp.answer(toWebRequest(request), authInfo, body));
  });
  // Only POST: stateless, /mcp has no session to stream to (GET) or end (DELETE). Any other method is
  // a wrong method (405, Allow: POST), answered in JSON-RPC like every error of /mcp.

  // An SSE stream never ends by itself; a graceful shutdown ends them (clients reconnect elsewhere),
  // or the server would wait for them forever.
  app.addHook('preClose', () => sessions.closeAll());
  // No automatic HEAD route: a HEAD would open a session whose stream it can never carry.
  app.get('/sse', { ...HIDDEN, exposeHeadRoute: false, onRequest: admit }, async (request, reply) => {
    const { principal } = request.mcpCaller!;
    // Opening a stream is a request against the key's window and its organisation's, as any REST
    // request is.
    const now = deps.clock.nowMs();
    const decision = await countRequest(deps.rateLimitStore, principal, deps.limits, now);
    if (decision.refusedBy !== null) {
      reply.header('retry-after', Math.max(1, Math.ceil((decision.resetAt - now) / 1000)));
      return refuse(reply, rateLimitRefusal(decision, now), null);
    }
    const reservation = sessions.reserve({
      apiKeyId: principal.apiKeyId,
      organisationId: principal.organisation.id,
    });
    if (!reservation) {
      // No window to wait for: a place frees when one of the organisation's streams closes; the
      // ticks that close idle and revoked streams come every keep-alive.
      reply.header('retry-after', Math.max(1, Math.ceil(sseLimits.keepAliveMs / 1000)));
      return refuse(
        reply,
        new AppError(
          'rate_limited',
          `This organisation already holds ${sseLimits.maxStreamsPerOrganisation} SSE streams, across all its keys; close one or retry later.`,
        ),
        null,
      );
    }
    try {
      const [{ newServer }] = await Promise.all([protocol(), loadSseTransport()]);
      reply.hijack();
      reply.raw.setHeader('x-request-id', request.id);
      await sessions.open(reply.raw, reservation, newServer());
    } finally {
      sessions.release(reservation);
    }
  });
  app.post(
    '/messages',
    {
      ...HIDDEN,
      // Host and key before the session is looked at (design.md 9.1): a bad key is 401 and the session,
      // whoever's it is, is untouched (a stream whose key was revoked is closed by the sessions' tick).
      // Then the session, before the body is read: another key's session is answered as if it did not
      // exist.
      onRequest: async (request, reply) => {
        await admit(request, reply);
        const caller = request.mcpCaller;
        // No caller: admit has answered (a bad host or key).
        if (!caller) return;
        const session = sessions.touch(
          (request.query as { sessionId?: unknown }).sessionId,
          caller.principal.apiKeyId,
        );
        if (!session) return refuse(reply, noSuchSession(), null);
      },
    },
    async (request, reply) => {
      const caller = request.mcpCaller!;
      const session = sessions.touch(
        (request.query as { sessionId?: unknown }).sessionId,
        caller.principal.apiKeyId,
      );
      // The stream may have closed while the body arrived.
      if (!session) return refuse(reply, noSuchSession(), requestIdOf(request.body));
      if (Array.isArray(request.body)) {
        // The SSE transport is 2024-11-05's, which has no batches (mcp-batches.ts).
        return refuse(
          reply,
          new SaysHowToFix(
            'invalid_request',
            'JSON-RPC batches are not accepted on the SSE transport (protocol revision 2024-11-05 has none): POST one message at a time.',
            'body',
          ),
          null,
          JSON_RPC_ERROR.invalidRequest,
        );
      }
      if (!isJsonRpcMessage(request.body)) {
        return refuse(
          reply,
          new AppError('invalid_request', 'The body must be one JSON-RPC message.', 'body'),
          null,
          JSON_RPC_ERROR.invalidRequest,
        );
      }
      const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
      raw.auth = authInfoOf(caller);
      // Loaded already: the session's stream was opened with it.
      const mcp = await protocol();
      reply.hijack();
      reply.raw.setHeader('x-request-id', request.id);
      await session.transport.handlePostMessage(raw, reply.raw, mcp.asServed(request.body));
    },
  );
}

/**
 * `/mcp/` is `/mcp`: a connector's address pasted with a trailing slash (and the resource an SDK then
 * derives from it) reaches the same endpoint, its challenge and its tools, instead of a 404 the host
 * reports as a server it cannot connect to. Every other address is left as it came.
 */
export function withoutMcpTrailingSlash(url: string): string {
  if (!url.startsWith('/mcp/')) return url;
  const rest = url.slice('/mcp/'.length);
  return rest === '' || rest.startsWith('?') ? `/mcp${rest}` : url;
}

/**
 * /mcp from a web page (a browser-based client, cross-origin): every answer readable by the page, with
 * the headers the SDK reads (the 401's challenge above all: without it a browser client cannot find
 * where to sign in). True for a CORS preflight, which the caller answers (answerMcpPreflight) once the
 * request line is checked. The Host and Origin checks stay /mcp's own (403 invalid_host, which the
 * page can read): a page of an origin not served here is refused by them.
 */
export function crossOriginAtMcp(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.headers.origin === undefined || request.url.split('?', 1)[0] !== '/mcp') return false;
  allowCrossOrigin(request, reply, MCP_EXPOSED_HEADERS);
  return isPreflight(request);
}

/**
 * Grants Streamable HTTP's methods: the GET for a stream and the DELETE of a session are then answered
 * 405 to the page (which the SDK reads as "no stream here") rather than failing in its browser.
 */
export function answerMcpPreflight(request: FastifyRequest, reply: FastifyReply): void {
  answerPreflight(request, reply, ['POST', 'GET', 'DELETE']);
}

/** What a page may read of /mcp's answers besides the safelisted headers. */
const MCP_EXPOSED_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Retry-After'];

function authInfoOf(caller: Caller): AuthInfo {
  const { principal } = caller;
  return { token: '', clientId: principal.apiKeyId, scopes: [principal.scope], extra: { caller } };
}

/**
 * The request as the SDK's web-standard entries take it. The body was parsed (and checked) by Fastify
 * and is always passed alongside as `parsedBody`, which the SDK then never reads from the request: so
 * the request carries none (serialising it again and wrapping it in a stream showed in profiles).
 * Accept is widened to both types the transports insist on: this server only ever answers JSON, so a
 * client that accepts only JSON (or says nothing) is served as well.
 */
function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length') continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  headers.set('accept', 'application/json, text/event-stream');
  return new Request(`${request.protocol}://${request.host}${request.url}`, {
    method: request.method,
    headers,
  });
}

async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value);
  });
  const text = await response.text();
  return reply.send(text === '' ? undefined : text);
}

/** An MCP endpoint's refusal: the HTTP status of the error's code, and a JSON-RPC error with its hint. */
function refuse(
  reply: FastifyReply,
  error: unknown,
  id: JsonRpcId,
  code: number = JSON_RPC_ERROR.refused,
): FastifyReply {
  const appError = refusalOf(error);
  if (isFault(error, appError)) reply.log.error({ err: error }, 'MCP endpoint failed');
  return sendJsonRpcError(reply, appError, id, code);
}

function refusalOf(error: unknown): AppError {
  if (isAppError(error)) return error;
  return storageRefusal(error) ?? new AppError('server_error', 'The request could not be served.');
}

/**
 * The transport's own refusal, said to the MCP client in its JSON-RPC message: not_found's hint ("check
 * the details with the caller") speaks of a caller, who has nothing to do with a session.
 */
function noSuchSession(): AppError {
  return new SaysHowToFix(
    'not_found',
    'No SSE session has this sessionId (it ended, or another key opened it): open a new stream at /sse and post to the endpoint it names.',
    'sessionId',
  );
}

/** No JSON-RPC message nests this deep; a body that does is refused before anything walks it recursively. */
const MAX_JSON_DEPTH = 64;

function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

function isJsonRpcMessage(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, unknown>;
  return (
    message.jsonrpc === '2.0' &&
    (typeof message.method === 'string' || 'result' in message || 'error' in message)
  );
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

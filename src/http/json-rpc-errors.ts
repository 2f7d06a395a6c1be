import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOGUE } from '../domain/errors.ts';
import { refusedBodyOf } from './json-body.ts';

/**
 * The MCP endpoints that take JSON-RPC messages (POST /mcp, POST /messages; mcp-routes.ts): every
 * error they answer is a JSON-RPC error, never the REST envelope, which an MCP client cannot read (the
 * SDK's client throws "Error POSTing to endpoint" instead of handing on the hint). That holds for what
 * is refused before their handlers run as well: the body (not JSON, a NUL, too large, not
 * application/json), the URL, the transport, a wrong method. GET /sse is not one of them: its own
 * refusals are JSON-RPC (mcp-routes.ts) until its stream starts, and a wrong method there is REST's 405.
 */
const JSON_RPC_PATHS: ReadonlySet<string> = new Set(['/mcp', '/messages']);

/**
 * The error codes: JSON-RPC 2.0's own where they say what is wrong, as the SDK uses them on /mcp for
 * the same faults; otherwise -32000, a server-defined error (docs/decisions/
 * mcp-transports.md).
 */
export const JSON_RPC_ERROR = {
  /** The body is not JSON text: not UTF-8, empty, or not JSON. */
  parseError: -32700,
  /** The body is JSON, but not one JSON-RPC message. */
  invalidRequest: -32600,
  /** This server refuses the request: its key, Host, rate, size, method, or something the message holds. */
  refused: -32000,
} as const;

export type JsonRpcId = string | number | null;

/** Whether the errors of the request at `url` (its path and query) are answered in JSON-RPC. */
export function answersJsonRpcAt(url: string | undefined): boolean {
  const path = (url ?? '').split('?')[0] ?? '';
  if (JSON_RPC_PATHS.has(path)) return true;
  // The router decodes percent-escapes: /m%63p is /mcp to it.
  try {
    return JSON_RPC_PATHS.has(decodeURIComponent(path));
  } catch {
    return false;
  }
}

/** Whether the request's errors are answered in JSON-RPC: the route that took it, else its path. */
export function answersJsonRpc(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return route !== undefined ? JSON_RPC_PATHS.has(route) : answersJsonRpcAt(request.url);
}

/**
 * A refusal of the client's set-up or protocol use (a key sent without "Bearer ", a batch where the
 * revision has none), whose own message, saying what to change, is the JSON-RPC message: the code's
 * hint (what to tell a caller on the phone) would not say it.
 */
export class SaysHowToFix extends AppError {
  override readonly name: string = 'SaysHowToFix';
}

/**
 * A refusal whose hint, the JSON-RPC message, is its own rather than its code's: the code says too
 * little or the wrong thing (an OAuth access token refused under invalid_api_key, whose hint speaks of
 * an API key).
 */
export class HasOwnHint extends AppError {
  override readonly name: string = 'HasOwnHint';
  readonly hint: string;

  constructor(code: AppError['code'], message: string, hint: string, param?: string) {
    super(code, message, param);
    this.hint = hint;
  }
}

/**
 * An MCP endpoint's error: `message` is the code's hint (a client that shows only the message shows
 * what to tell the caller), a HasOwnHint's own hint, or a SaysHowToFix's own message; `data` the REST
 * error's code, message (`detail`) and param.
 */
export function jsonRpcErrorBody(error: AppError, id: JsonRpcId, code: number = JSON_RPC_ERROR.refused) {
  return {
    jsonrpc: '2.0' as const,
    id,
    error: {
      code,
      message: hintOf(error),
      data: {
        code: error.code,
        detail: error.message,
        ...(error.param !== undefined && { param: error.param }),
      },
    },
  };
}

function hintOf(error: AppError): string {
  if (error instanceof SaysHowToFix) return error.message;
  if (error instanceof HasOwnHint) return error.hint;
  return ERROR_CATALOGUE[error.code].hint;
}

/** What a 401 of the API or MCP answers in WWW-Authenticate where nothing more is to be said. */
export const BEARER_CHALLENGE = 'Bearer realm="booking"';

/** Answers `error` in JSON-RPC with the HTTP status of its code (401 says how to authenticate). */
export function sendJsonRpcError(
  reply: FastifyReply,
  error: AppError,
  id: JsonRpcId,
  code: number = JSON_RPC_ERROR.refused,
): FastifyReply {
  // An endpoint may have said more already (/mcp names its OAuth metadata: oauth/protected-resource.ts).
  if (error.status === 401 && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', BEARER_CHALLENGE);
  }
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(jsonRpcErrorBody(error, id, code));
}

/**
 * The JSON-RPC answer to an error the app's error handling met on an MCP endpoint (error-envelope.ts):
 * the id of the request when its body could be read, even if it was refused for what it holds; a
 * parse error, without an id, when the body is not JSON at all.
 */
export function sendRequestError(reply: FastifyReply, error: AppError): FastifyReply {
  const request = reply.request;
  const refused = refusedBodyOf(request);
  if (refused === undefined) return sendJsonRpcError(reply, error, requestIdOf(request.body));
  if (!refused.isJson) return sendJsonRpcError(reply, error, null, JSON_RPC_ERROR.parseError);
  return sendJsonRpcError(reply, error, requestIdOf(refused.value));
}

/** The id of a JSON-RPC message, when it has one that can be echoed. */
export function requestIdOf(body: unknown): JsonRpcId {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

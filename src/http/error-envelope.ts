import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { storageRefusal } from '../app/health-service.ts';
import { describeIssues, type RefusedIssue } from '../contract/validation-wording.ts';
import { AppError, isAppError } from '../domain/errors.ts';
import { forbiddenKeyRefusal, notJsonBody, refusedBodyOf } from './json-body.ts';
import {
  answersJsonRpc,
  answersJsonRpcAt,
  BEARER_CHALLENGE,
  jsonRpcErrorBody,
  sendRequestError,
} from './json-rpc-errors.ts';
import { requestIdFor } from './request-id.ts';

/**
 * Every error leaves the service in the contract's envelope {error: {code, message, param?}}: our own
 * AppErrors, request validation, Fastify's body-parsing failures, unknown paths, wrong methods and
 * faults alike. Nothing else ever reaches a client. The MCP endpoints that take JSON-RPC messages
 * answer the same errors as JSON-RPC errors instead (json-rpc-errors.ts).
 */
export function installErrorEnvelope(app: FastifyInstance): UnroutedRefusal {
  const routeTable = trackRoutes(app);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error, request);
    if (isFault(error, appError)) request.log.error({ err: error }, 'request failed');
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, unroutedError(routeTable, request, reply)));
  return (request, reply) => {
    if (request.is404) throw unroutedError(routeTable, request, reply);
  };
}

/**
 * An onRequest hook that answers a request no route takes as soon as its headers are in: the body of
 * a request for an unknown path or with a wrong method is never read (QUERY included, which Fastify
 * would otherwise refuse for a missing Content-Type with its own error code). It goes after the hooks
 * every answer needs (the request id).
 */
export type UnroutedRefusal = (request: FastifyRequest, reply: FastifyReply) => void;

/** 405 with Allow when another method serves the path, 404 otherwise. */
function unroutedError(
  table: ReturnType<typeof FindMyWay>,
  request: FastifyRequest,
  reply: FastifyReply,
): AppError {
  const path = request.url.split('?')[0] ?? '/';
  const allowed = ALL_METHODS.filter((method) => table.find(method, path) !== null);
  if (allowed.length > 0) {
    reply.header('allow', allowed.join(', '));
    return new AppError(
      'method_not_allowed',
      `${request.method} is not allowed here; use ${allowed.join(' or ')}.`,
    );
  }
  return new AppError('not_found', `No endpoint matches ${request.method} on this path.`);
}

/**
 * A refusal for too many tries whose wait the use case knows (a re-send cap, the public page's
 * attempts) says it in Retry-After, as the contract's 429 does, unless a limiter set it already.
 */
export function withRetryAfter(reply: FastifyReply, error: AppError): FastifyReply {
  const seconds = error.details?.retryAfterSeconds;
  if (error.code === 'rate_limited' && typeof seconds === 'number' && !reply.hasHeader('retry-after')) {
    reply.header('retry-after', String(Math.max(1, Math.ceil(seconds))));
  }
  return reply;
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  withRetryAfter(reply, error);
  // RFC 6750: a 401 names the scheme that authenticates (an endpoint may have said more already).
  if (error.status === 401 && !reply.hasHeader('www-authenticate')) {
    // A credential was sent and refused: said so (RFC 6750 section 3.1), as /mcp says it.
    const refused = error.code === 'invalid_api_key' ? ', error="invalid_token"' : '';
    reply.header('www-authenticate', `${BEARER_CHALLENGE}${refused}`);
  }
  if (answersJsonRpc(reply.request)) return sendRequestError(reply, error);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.envelope());
}

/**
 * Fastify's frameworkErrors: requests its router refuses before any hook runs (a path that is not
 * valid percent-encoded UTF-8, a path parameter over maxParamLength). Fastify's own answers carry
 * neither the envelope nor a request id, and echo the path; onSend hooks do not run for them, so the
 * rate-limit headers are set here.
 */
export function answerFrameworkError(headersFor: (address: string) => Promise<Record<string, string>>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', request.id);
    void headersFor(request.ip)
      .catch(() => ({}))
      .then((headers) => sendError(reply.headers(headers), toAppError(error)));
  };
}

/**
 * Fastify's clientErrorHandler: bytes Node cannot parse as an HTTP request (broken chunking, raw
 * non-ASCII in the path, oversized headers, a truncated request) never become a request, and
 * Fastify's default answer has neither the envelope nor a request id; nor has Node's answer to a
 * request that does not arrive in time. After such an error the connection cannot be reused, so it is
 * closed. `headersFor` gives the rate-limit headers for the peer's address (rate-limit-headers.ts).
 */
export function answerClientError(headersFor: (address: string) => Promise<Record<string, string>>) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const appError = clientErrorOf(error.code);
    // As Node does: a response already under way on this connection must not be corrupted by another.
    const responseUnderWay = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
      ?.headersSent;
    if (!socket.writable || responseUnderWay) {
      socket.destroy(error);
      return;
    }
    // A HEAD request's answer ends with its headers (RFC 9110 9.3.2): a body after them is read by the
    // client as the start of a next response, or as a framing error.
    const withBody = !isHeadRequest(error, socket);
    void answerOnSocket(socket, appError, headersFor, { withBody }).finally(() => socket.destroy(error));
  };
}

/**
 * Node's connect event: a CONNECT request, which Node hands to no route and, with nobody listening,
 * answers by closing the connection. This server is no proxy and has no resource a CONNECT could
 * target (its target is a host and port, not a path): 405, with an Allow that is empty as RFC 9110
 * 10.2.1 has it for a target that allows no method.
 */
export function answerConnect(headersFor: (address: string) => Promise<Record<string, string>>) {
  return (_request: IncomingMessage, socket: Socket): void => {
    const refusal = new AppError(
      'method_not_allowed',
      'CONNECT is not served here: this is no proxy. Send GET, POST, PATCH or DELETE to a path of the API.',
    );
    void answerOnSocket(socket, refusal, headersFor, { withBody: true, extra: { allow: '' } }).finally(() =>
      socket.destroy(),
    );
  };
}

/**
 * Writes an answer straight to a connection that has no response object (a request Node parsed no
 * further), with the envelope, a request id and the peer's rate-limit headers, and asks to close.
 */
async function answerOnSocket(
  socket: Socket,
  appError: AppError,
  headersFor: (address: string) => Promise<Record<string, string>>,
  options: { withBody: boolean; extra?: Record<string, string> },
): Promise<void> {
  const body = JSON.stringify(appError.envelope());
  const headers = await headersFor(socket.remoteAddress ?? '').catch(() => ({}));
  if (!socket.writable) return;
  const lines = Object.entries({ ...headers, ...options.extra }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  socket.write(
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nx-request-id: ${randomUUID()}\r\n` +
      lines.join('') +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${options.withBody ? body : ''}`,
  );
}

/**
 * Whether the refused bytes are a HEAD request: the request Node had parsed when it gave up (a body
 * that did not arrive in time), or else the chunk Node was parsing (the error's rawPacket), when the
 * request line is in it: a request sent at once, as clients send headers. Headers that came in several
 * chunks and overflowed in a later one leave the method unknown, and an unknown method counts as not
 * HEAD (the answer then keeps its body, as before).
 */
function isHeadRequest(error: Error & { rawPacket?: unknown }, socket: Socket): boolean {
  const parsed = (socket as { parser?: { incoming?: { method?: string } | null } | null }).parser?.incoming;
  if (parsed?.method) return parsed.method === 'HEAD';
  const received = error.rawPacket;
  return Buffer.isBuffer(received) && /^(?:\r?\n)*HEAD /.test(received.subarray(0, 16).toString('latin1'));
}

function clientErrorOf(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('headers_too_large', 'The request line and headers are larger than 16 KiB.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'The request did not arrive in time.');
    default:
      return new AppError('invalid_request', 'The request is not valid HTTP/1.1.');
  }
}

/**
 * Node's checkExpectation event: an Expect other than 100-continue, which Node would refuse itself
 * with a bare 417 (no envelope, no request id).
 */
export function answerUnmetExpectation(headersFor: (address: string) => Promise<Record<string, string>>) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const error = new AppError(
      'expectation_failed',
      'Only the expectation 100-continue is supported.',
      'Expect',
    );
    const body = JSON.stringify(
      answersJsonRpcAt(request.url) ? jsonRpcErrorBody(error, null) : error.envelope(),
    );
    void headersFor(request.socket.remoteAddress ?? '')
      .catch(() => ({}))
      .then((headers) => {
        response.writeHead(417, {
          ...headers,
          'x-request-id': requestIdFor(request),
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          connection: 'close',
        });
        response.end(body);
      });
  };
}

const ALL_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The longest path parameter the routers take (a longer one is refused as a bad URL). The app's router
 * and the shadow router below must agree, or a path the app routes would look unknown to the other.
 */
export const MAX_PARAM_LENGTH = 500;

/** A shadow router of every registered path, to tell "wrong method" (405) from "no such path" (404). */
function trackRoutes(app: FastifyInstance) {
  const table = FindMyWay({ maxParamLength: MAX_PARAM_LENGTH });
  app.addHook('onRoute', (route) => {
    // A route that takes every method to refuse the others itself says which it serves (`allow`).
    const served = (route.config as { allow?: readonly string[] } | undefined)?.allow;
    const methods = (served ?? (Array.isArray(route.method) ? route.method : [route.method])) as HTTPMethod[];
    for (const method of methods) {
      if (table.find(method, route.url) === null) table.on(method, route.url, () => {});
    }
  });
  return table;
}

/**
 * Whether an error is logged as a fault: a server_error, or anything else on our side that was not an
 * expected AppError (a write the full disk refused: its own message, e.g. SQLite's "database or disk
 * is full", is what the operator needs to read).
 */
export function isFault(error: unknown, answered: AppError): boolean {
  return answered.code === 'server_error' || (!isAppError(error) && answered.status >= 500);
}

/**
 * Translates whatever was thrown into one of the catalogue's codes. `request`, where there is one, is
 * what a refused validation names its fields from (a field missing, or of another type).
 */
export function toAppError(error: FastifyError, request?: FastifyRequest): AppError {
  const input = request && validatedInput(request, error.validationContext);
  if (isAppError(error)) return error;
  const storage = storageRefusal(error);
  if (storage) return storage;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const first = error.validation[0]!;
    const param = paramOf(error.validationContext, first.instancePath, first.params);
    return new AppError('invalid_request', validationWords(error, input), param);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return notJsonBody();
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(request);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'The body is empty; send a JSON object.', 'body');
    case 'FST_ERR_CTP_INVALID_JSON_BODY': {
      // Read again only here, for a refused body: JSON holding a forbidden key is said as such.
      const forbidden = request && refusedBodyOf(request)?.forbiddenKey;
      if (forbidden) return forbiddenKeyRefusal(forbidden);
      return new AppError('invalid_request', 'The body is not valid JSON.', 'body');
    }
  }
  if (error instanceof SyntaxError)
    return new AppError('invalid_request', 'The body is not valid JSON.', 'body');
  // The router's refusals (answerFrameworkError): said in words, since Fastify's codes mean nothing to
  // a caller. The URL is not echoed (it may hold a phone or an e-mail).
  if (error.code === 'FST_ERR_BAD_URL') {
    return new AppError(
      'invalid_request',
      'The URL is not valid: every % must begin the escape of a UTF-8 character, such as %20.',
      'url',
    );
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new AppError(
      'invalid_request',
      `A segment of the URL's path is longer than ${MAX_PARAM_LENGTH} characters.`,
      'url',
    );
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return bodyTooLarge(request);
  if (status >= 400 && status < 500) {
    // Fastify's own 4xx codes describe the request, never its content, so they are safe to echo.
    return new AppError('invalid_request', `The request could not be processed (${error.code ?? status}).`);
  }
  return new AppError(
    'server_error',
    'Something went wrong on our side; idempotent requests are safe to retry.',
  );
}

/**
 * Requests whose body is held to a limit of their routes' own, not the server's 64 KiB (a pages
 * plugin's forms, acceptPageFields): the limit, so a body refused is said with the limit that refused it.
 */
const ownBodyLimits = new WeakMap<FastifyRequest, number>();

export function noteBodyLimit(request: FastifyRequest, limit: number): void {
  ownBodyLimits.set(request, limit);
}

function bodyTooLarge(request: FastifyRequest | undefined): AppError {
  const limit = request && ownBodyLimits.get(request);
  const words =
    limit === undefined ? '64 KiB' : limit % 1024 === 0 ? `${limit / 1024} KiB` : `${limit} bytes`;
  return new AppError('payload_too_large', `The request body is larger than ${words}.`);
}

/** The part of the request a validation refused, as it arrived. */
function validatedInput(request: FastifyRequest, context: string | undefined): unknown {
  switch (context) {
    case 'body':
      return request.body;
    case 'querystring':
      return request.query;
    case 'params':
      return request.params;
    case 'headers':
      return request.headers;
    default:
      return undefined;
  }
}

/**
 * The message of a request the schemas refused: every bad field named, with what it takes
 * (contract/validation-wording.ts), never zod's own English.
 */
function validationWords(
  error: FastifyError & { validation: NonNullable<FastifyError['validation']> },
  input: unknown,
): string {
  const part = (['body', 'querystring', 'params', 'headers'] as const).find(
    (name) => name === error.validationContext,
  );
  const issues: RefusedIssue[] = error.validation.map((entry) => ({
    ...(entry.params as Record<string, unknown>),
    code: entry.keyword,
    path: pathOf(entry.instancePath, input),
    message: entry.message ?? '',
  }));
  return describeIssues(issues, input, part);
}

/** The segments of a validation's instancePath, an index of an array as a number ("service_ids[2]"). */
function pathOf(instancePath: string, input: unknown): PropertyKey[] {
  const path: PropertyKey[] = [];
  let node = input;
  for (const segment of instancePath === '/' ? [] : instancePath.split('/').slice(1)) {
    // A member of what the schema made of a text (the ids of `service_ids=a,b`): the text is the field.
    if (typeof node === 'string') break;
    const step = Array.isArray(node) && /^\d+$/.test(segment) ? Number(segment) : segment;
    path.push(step);
    node =
      typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[step] : undefined;
  }
  return path;
}

/**
 * The contract's param is the field, parameter or header at fault: the first segment of the
 * validation path ("service_ids" for a bad service_ids[2]), or the unknown key itself.
 */
function paramOf(context: string | undefined, instancePath: string, params: Record<string, unknown>): string {
  const field = instancePath.split('/').find((segment) => segment !== '');
  if (field !== undefined) return field;
  const unknownKeys = params.keys;
  if (Array.isArray(unknownKeys) && typeof unknownKeys[0] === 'string') return unknownKeys[0];
  return context === 'body' ? 'body' : (context ?? 'request');
}

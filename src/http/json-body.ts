import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { LONE_SURROGATE } from '../domain/text-rules.ts';

/**
 * Bodies are read as the contract says they are sent: JSON in UTF-8, whose strings are text. Node
 * would otherwise decode bytes that are not UTF-8 (a Latin-1 "ë") as U+FFFD, and JSON may spell a
 * lone UTF-16 surrogate ("\ud800") that no UTF-8 column can store, so SQLite would keep U+FFFD: either
 * way the caller's data would silently change (while the response still echoed what was sent). Both
 * are refused like any other invalid body. So is U+0000, which PostgreSQL cannot store in text at all
 * (and SQLite's C strings end at): no name, note or reason needs it.
 */
export function parseJsonAsText(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const refuse = (error: Error, text: string | null, byJsonParser = false) => {
      refusals.set(request, { text, byJsonParser });
      done(error, undefined);
    };
    const bytes = body as Buffer;
    // No bytes is no body, not an invalid one, where the route's body is optional (the contract's
    // "Body (optional)" of POST /bookings/{reference}/cancel) or it takes none (a DELETE).
    if (bytes.length === 0 && bodyMayBeAbsent(request)) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      refuse(new AppError('invalid_request', 'The body is not valid UTF-8.', 'body'), null);
      return;
    }
    const text = bytes.toString('utf8');
    if (NUL_ESCAPE.test(text)) {
      refuse(unstorableText(request, text, 'NUL'), text);
      return;
    }
    if (hasLoneSurrogateEscape(text)) {
      refuse(unstorableText(request, text, 'surrogate'), text);
      return;
    }
    parseJson(request, text, (error, value) => (error ? refuse(error, text, true) : done(null, value)));
  });
}

/**
 * The REST API's answer to a body that is not JSON: the contract asks for Content-Type:
 * application/json on every request that sends a body.
 */
export function notJsonBody(): AppError {
  return new AppError('invalid_request', 'A request body must be sent as application/json.', 'Content-Type');
}

/**
 * For the REST API (registered in its scope): a request that sends no body is not refused for the
 * Content-Type an HTTP client put on it anyway (many set one on every request), where the operation's
 * body is optional or it takes none; any other type with a body is refused as not JSON. The body of a
 * refused request is never read (the connection is closed after the answer, build-app.ts).
 */
export function acceptNoBodyOfAnyType(app: FastifyInstance): void {
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (sendsNoBody(request) && bodyMayBeAbsent(request)) done(null, undefined);
    else done(notJsonBody(), undefined);
  });
}

/**
 * For the REST API (registered in its scope): an operation that takes no body (a DELETE, a test event,
 * send-link) refuses one with fields, naming the first as an unknown field is named everywhere else,
 * instead of ignoring what the caller meant by it; no body, or an empty object, is none.
 */
export function refuseBodiesWhereNoneIsTaken(app: FastifyInstance): void {
  // Attached to those operations only (a body schema's own check covers the rest): a hook on every
  // request would cost each GET (issue 47) to look at a body it cannot have.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (route.schema?.body !== undefined || methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    route.preValidation = [route.preValidation ?? []].flat().concat(refuseAnyBody);
  });
}

function refuseAnyBody(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const { body } = request;
  if (body === undefined || body === null) {
    done();
    return;
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    done(new AppError('invalid_request', 'This operation takes no body.', 'body'));
    return;
  }
  const field = Object.keys(body)[0];
  if (field === undefined) done();
  else done(new AppError('invalid_request', `${field}: this operation takes no body fields.`, field));
}

/** HTTP/1.1: a request without Transfer-Encoding has the body its Content-Length says, none without one. */
function sendsNoBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * Whether the route may be called without a body: its body schema (zod, through
 * fastify-type-provider-zod) accepts none, or it is a REST operation that takes no body at all.
 */
function bodyMayBeAbsent(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema?.body;
  if (schema === undefined) return request.routeOptions.url?.startsWith('/v1/') === true;
  return schemaTakesNoBody(schema);
}

/** Whether a route's body schema (zod, through fastify-type-provider-zod) takes a request without a body. */
export function schemaTakesNoBody(schema: unknown): boolean {
  const zod = schema as { safeParse?: (value: unknown) => { success: boolean } } | undefined;
  return typeof zod?.safeParse === 'function' && zod.safeParse(undefined).success;
}

/**
 * What can still be read of a body the parser refused, for the MCP endpoints, whose JSON-RPC answer
 * names the request's id when the body says it (json-rpc-errors.ts). Kept only for refused bodies.
 */
export interface RefusedBody {
  /**
   * Whether the text is JSON after all (JSON.parse reads it), so that what was refused is something
   * it holds (a NUL, a lone surrogate, a forbidden key); false for a body that is not UTF-8, is empty
   * or is not JSON.
   */
  readonly isJson: boolean;
  /** The body's value, when it is JSON. */
  readonly value?: unknown;
  /**
   * The key refused as prototype poisoning, when that was the refusal (Fastify's parser, through
   * secure-json-parse, calls it invalid JSON; every answer names the key: forbiddenKeyRefusal).
   */
  readonly forbiddenKey?: '__proto__' | 'constructor.prototype';
}

/**
 * The refused body's text as it was refused; read again only when asked (only the MCP endpoints ask),
 * so a REST request refused for its body costs no second parse.
 */
const refusals = new WeakMap<FastifyRequest, { text: string | null; byJsonParser: boolean }>();

/** What is left of the request's body, if the parser refused it. */
export function refusedBodyOf(request: FastifyRequest): RefusedBody | undefined {
  const refused = refusals.get(request);
  return refused && whatIsLeftOf(refused.text, refused.byJsonParser);
}

/**
 * The refusal of JSON that holds a key secure-json-parse refuses (prototype poisoning): Fastify's
 * parser calls it invalid JSON, which it is not, so the key is named instead.
 */
export function forbiddenKeyRefusal(key: NonNullable<RefusedBody['forbiddenKey']>): AppError {
  return new AppError('invalid_request', `The body holds the key ${key}, which is not accepted.`, 'body');
}

/** `byJsonParser`: the refusal is Fastify's JSON parser's, not one of the checks above it. */
function whatIsLeftOf(text: string | null, byJsonParser: boolean): RefusedBody {
  if (text === null) return { isJson: false };
  let value: unknown;
  try {
    // JSON.parse keeps a "__proto__" key as an own property, never as the object's prototype.
    value = JSON.parse(text);
  } catch {
    return { isJson: false };
  }
  // JSON that Fastify's parser refused all the same: secure-json-parse found a forbidden key.
  const forbiddenKey = byJsonParser ? forbiddenKeyIn(value) : undefined;
  return { isJson: true, value, ...(forbiddenKey && { forbiddenKey }) };
}

/** The first key secure-json-parse refuses in `value` (walked without recursion: a body may nest deep). */
function forbiddenKeyIn(value: unknown): RefusedBody['forbiddenKey'] {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Object.hasOwn(node, '__proto__')) return '__proto__';
    const held = Object.hasOwn(node, 'constructor') ? (node as { constructor: unknown }).constructor : null;
    if (typeof held === 'object' && held !== null && Object.hasOwn(held, 'prototype')) {
      return 'constructor.prototype';
    }
    for (const child of Object.values(node)) stack.push(child);
  }
  return undefined;
}

const UNSTORABLE = {
  NUL: { words: 'a NUL character (\\u0000)', in: (text: string) => text.includes('\u0000') },
  surrogate: { words: 'a lone UTF-16 surrogate escape', in: (text: string) => LONE_SURROGATE.test(text) },
} as const;

/**
 * The refusal of a body holding text no column can store (a NUL, a lone surrogate). A REST body is an
 * object of fields, and the contract's invalid_request names the field (param): the top-level field
 * whose value holds it, as every other refused value is named. Elsewhere (the MCP endpoints, whose
 * JSON-RPC answer says it of the body), and where no one field holds it (a key, a body that is not an
 * object), it is the body's.
 */
function unstorableText(request: FastifyRequest, text: string, kind: keyof typeof UNSTORABLE): AppError {
  const { words } = UNSTORABLE[kind];
  const field =
    request.routeOptions.url?.startsWith('/v1/') === true
      ? fieldHolding(text, UNSTORABLE[kind].in)
      : undefined;
  return field === undefined
    ? new AppError('invalid_request', `The body holds ${words}.`, 'body')
    : new AppError('invalid_request', `${field} holds ${words}; send text only.`, field);
}

/** The first top-level field of a JSON object whose value (at any depth, keys included) `holds` matches. */
function fieldHolding(text: string, holds: (text: string) => boolean): string | undefined {
  let body: unknown;
  try {
    // JSON.parse reads both escapes as what they spell (and keeps "__proto__" as an own key).
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  for (const [field, value] of Object.entries(body)) {
    if (holds(field)) return undefined;
    // Walked without recursion: a body may nest deep.
    const stack: unknown[] = [value];
    while (stack.length > 0) {
      const node = stack.pop();
      if (typeof node === 'string') {
        if (holds(node)) return field;
      } else if (typeof node === 'object' && node !== null) {
        for (const [key, child] of Object.entries(node)) {
          if (holds(key)) return field;
          stack.push(child);
        }
      }
    }
  }
  return undefined;
}

/** A JSON \u0000 escape that is not itself an escaped backslash followed by "u0000". */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

/** Whether JSON text has a \uD800-\uDFFF escape that is not half of a surrogate pair. */
function hasLoneSurrogateEscape(json: string): boolean {
  if (!json.includes('\\u')) return false;
  // Every escape in order, so an escaped backslash followed by "u..." is not mistaken for one.
  let lowExpectedAt = -1;
  for (const match of json.matchAll(/\\(?:u([0-9a-fA-F]{4})|[^u])/g)) {
    const unit = match[1] === undefined ? -1 : Number.parseInt(match[1], 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (lowExpectedAt !== -1) {
      if (!isLow || match.index !== lowExpectedAt) return true;
      lowExpectedAt = -1;
    } else if (isLow) {
      return true;
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      lowExpectedAt = match.index + match[0].length;
    }
  }
  return lowExpectedAt !== -1;
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type Principal,
  requireCountedPrincipal,
  requirePrincipal,
  requireScope,
} from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { type AccessTokenRefusal, principalOfAccessToken } from '../app/oauth-connectors.ts';
import { FixedWindowRateLimiter, failedAuthentications } from '../app/rate-limiter.ts';
import { decideRequest, rateLimitRefusal } from '../app/request-budgets.ts';
import {
  API_KEY_BODY_LENGTH,
  API_KEY_PREFIX,
  type ApiKeyScope,
  isWellFormedApiKey,
} from '../domain/api-key.ts';
import { AppError, isAppError } from '../domain/errors.ts';
import { HasOwnHint, SaysHowToFix } from './json-rpc-errors.ts';
import { secondsUntil, setRateLimitHeaders } from './rate-limit-headers.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, once authenticate() has run; null on routes that need no key. */
    principal: Principal | null;
  }
}

/** read permits GET (and HEAD); everything else needs read_write. */
export function scopeNeededFor(method: string): ApiKeyScope {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'read_write';
}

/**
 * Resolves the caller of a request from its Bearer key, or throws:
 * - a valid key is always accepted, whatever else comes from its address (NATs and voice platforms
 *   put many organisations behind one address, and a proxy's X-Forwarded-For can name any);
 * - a missing or unusable key is a failed authentication, counted for the client address: 401
 *   missing_api_key / invalid_api_key (param Authorization), or 429 rate_limited once the address
 *   has failed more than the limit in the window, with the address window's X-RateLimit headers.
 * The REST endpoints and the MCP endpoints share it; what each counts and allows differs. With
 * `oauthResource` (/mcp) it also takes OAuth access tokens bound to that resource; without it (the SSE
 * transport) it takes API keys only, and says so of anything that is not one (NotAnApiKey).
 */
export function createKeyResolver(
  deps: AppDeps,
  options: { oauthResource?: (request: FastifyRequest) => string } = {},
) {
  const { oauthResource } = options;
  const identify = keyedCaller(deps, async (key, now, request) => {
    if (isWellFormedApiKey(key)) return requirePrincipal(deps.db, key, now);
    // An endpoint that takes API keys only (the SSE transport): anything else, an access token
    // included, is told so and where a token is taken, without a lookup.
    if (oauthResource === undefined) throw new NotAnApiKey('sse');
    // An OAuth access token (design.md 9.3) where the endpoint takes them; never one that looks like a key.
    const resource = oauthResource(request);
    const found = await principalOfAccessToken(deps.db, key, resource, now);
    if (!('refused' in found)) return found;
    if (found.refused !== 'not_a_token') throw new RefusedAccessToken(found.refused, resource);
    // Neither a key nor a token: which was meant cannot be told, so the code's own hint goes with it.
    throw new AppError(
      'invalid_api_key',
      'The Bearer credential is neither an API key nor an access token this server issues: send an API key, or sign in with OAuth.',
      'Authorization',
    );
  });
  return async function resolve(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const principal = await identify(request, reply, deps.clock.nowMs());
    request.principal = principal;
    return principal;
  };
}

/**
 * What `lookup` makes of the request's Bearer key, with createKeyResolver's handling of a missing or
 * unusable one (counted per client address).
 */
function keyedCaller<T>(
  deps: AppDeps,
  lookup: (key: string, now: number, request: FastifyRequest) => Promise<T>,
) {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);

  return async function identify(request: FastifyRequest, reply: FastifyReply, now: number): Promise<T> {
    try {
      return await lookup(bearerKey(request.headers.authorization), now, request);
    } catch (error) {
      // A fault (the database down) is not the caller's failure to authenticate.
      if (!isAppError(error)) throw error;
      const failures = await limiter.hit(
        failedAuthentications(request.ip),
        deps.limits.failedAuthPerMinute,
        now,
      );
      setRateLimitHeaders(reply, failures);
      if (failures.allowed) throw error;
      reply.header('retry-after', secondsUntil(failures.resetAt, now));
      throw new AppError(
        'rate_limited',
        'Too many failed authentication attempts from this address; wait and retry.',
      );
    }
  };
}

/**
 * The onRequest hook of every /v1 endpoint that needs a key, in this order:
 * 1. the caller is identified (as createKeyResolver does: 401s, failed authentications per address)
 *    and, in the same step, the request is counted in its key's window and its organisation's
 *    (requireCountedPrincipal: on PostgreSQL one statement finds the key and counts the request);
 * 2. the three X-RateLimit headers are set, so they appear on every authenticated response, errors
 *    included: the key's window, or the organisation's when its budget is what refuses the request
 *    (429 rate_limited with Retry-After, before any route work; src/app/request-budgets.ts);
 * 3. the key's scope is checked against the method (403 insufficient_scope).
 * A credential not of an API key's shape is refused without a database lookup (design.md), with
 * NotAnApiKey's words: an OAuth access token for /mcp is the likeliest such credential.
 */
export function createAuthenticator(deps: AppDeps) {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);
  const identify = keyedCaller(deps, (key, now) =>
    isWellFormedApiKey(key)
      ? requireCountedPrincipal(deps.db, deps.rateLimitStore, key, now, limiter.windowEnd(now), deps.limits)
      : Promise.reject(new NotAnApiKey('rest')),
  );

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // One instant for the whole decision: the window counted in is the window reported.
    const now = deps.clock.nowMs();
    const { principal, counts } = await identify(request, reply, now);
    request.principal = principal;
    const decision = decideRequest(limiter, counts, principal, deps.limits, now);
    setRateLimitHeaders(reply, decision);
    if (decision.refusedBy !== null) {
      reply.header('retry-after', secondsUntil(decision.resetAt, now));
      throw rateLimitRefusal(decision, now);
    }

    requireScope(principal, scopeNeededFor(request.method));
  };
}

/** The key of an Authorization header: 401 missing_api_key without one; '' when it is no Bearer key. */
function bearerKey(header: string | undefined): string {
  if (header === undefined) {
    throw new AppError(
      'missing_api_key',
      'Send the header Authorization: Bearer <API key>.',
      'Authorization',
    );
  }
  const bearer = /^Bearer +(\S+) *$/i.exec(header)?.[1];
  if (bearer !== undefined) return bearer;
  // A key pasted as the whole header (or after another word) is the commonest set-up mistake: said as
  // such, not as a key that is unknown or revoked. Said of any well-formed key, valid or not, so the
  // answer tells nothing about which keys exist.
  if (isWellFormedApiKey(header.trim().split(/\s+/).at(-1) ?? '')) throw new KeyWithoutBearer();
  return '';
}

/**
 * 401 invalid_api_key (the contract's code) for a header that holds a key without the `Bearer `
 * scheme: its message, which the MCP endpoints also send as their JSON-RPC message (json-rpc-errors.ts),
 * says how to send it.
 */
export class KeyWithoutBearer extends SaysHowToFix {
  override readonly name = 'KeyWithoutBearer';

  constructor() {
    super(
      'invalid_api_key',
      'The Authorization header holds an API key without "Bearer ": send it as "Authorization: Bearer <API key>".',
      'Authorization',
    );
  }
}

/**
 * 401 invalid_api_key (the contract's code) for a Bearer credential that is not of an API key's shape,
 * where API keys only are taken: REST /v1, or the SSE transport (GET /sse, POST /messages). Known by
 * its shape alone (no lookup: design.md), so it is said of any such credential; the likeliest is an
 * OAuth access token meant for /mcp, so the message says where those are taken. On the SSE transport
 * it is also the JSON-RPC message.
 */
export class NotAnApiKey extends SaysHowToFix {
  override readonly name = 'NotAnApiKey';

  constructor(where: 'sse' | 'rest') {
    super('invalid_api_key', KEYS_ONLY[where], 'Authorization');
  }
}

const KEY_SHAPE_SAID = `This is not an API key (${API_KEY_PREFIX} followed by ${API_KEY_BODY_LENGTH} letters and digits)`;

const KEYS_ONLY: Record<'sse' | 'rest', string> = {
  sse: `${KEY_SHAPE_SAID}, and the SSE transport takes API keys only: send one as "Authorization: Bearer <API key>", or connect to /mcp (Streamable HTTP), where an assistant signs in with OAuth.`,
  rest: `${KEY_SHAPE_SAID}, and REST /v1 takes API keys only: send one as "Authorization: Bearer <API key>". An OAuth access token is taken by the MCP endpoint /mcp alone.`,
};

/**
 * 401 invalid_api_key (the contract's code) for an OAuth access token /mcp refuses: its message says
 * why (expired, revoked, unknown, bound to another resource) and what to do, and its hint, the
 * JSON-RPC message, speaks of the assistant's sign-in, not of an API key it never had.
 */
export class RefusedAccessToken extends HasOwnHint {
  override readonly name = 'RefusedAccessToken';
  readonly refusal: AccessTokenRefusal;

  constructor(refusal: Exclude<AccessTokenRefusal, 'not_a_token'>, resource: string) {
    const [message, hint] = TOKEN_REFUSALS[refusal](resource);
    super('invalid_api_key', message, hint, 'Authorization');
    this.refusal = refusal;
  }
}

const CALLER = 'tell the caller bookings cannot be taken right now.';

/** What each refusal of an access token says: its message (detail), then its hint. */
const TOKEN_REFUSALS: Record<
  Exclude<AccessTokenRefusal, 'not_a_token'>,
  (resource: string) => [string, string]
> = {
  unknown: () => [
    'The access token is not one this server holds: it was revoked, expired a while ago, or was issued elsewhere. Refresh it, or sign in again.',
    `The booking system no longer knows this assistant's sign-in, which must be renewed; ${CALLER}`,
  ],
  expired: () => [
    'The access token has expired: refresh it with the refresh token, or sign in again.',
    `This assistant's sign-in to the booking system has expired and must be renewed; ${CALLER}`,
  ],
  other_resource: (resource) => [
    `The access token was issued for another resource, not ${resource}: sign in again at this address.`,
    `This assistant signed in to the booking system at another address and must sign in again here; ${CALLER}`,
  ],
  revoked: () => [
    "The access token's connection was revoked (from the console, or its account was disabled): sign in again.",
    `This assistant's connection to the booking system was revoked; ${CALLER}`,
  ],
};

/** The principal of an authenticated request; a programming error if authenticate() did not run. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('Route registered without authentication');
  return request.principal;
}

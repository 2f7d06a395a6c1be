import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Principal, requirePrincipal, requireScope } from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { FixedWindowRateLimiter, failedAuthentications, keyRequests } from '../app/rate-limiter.ts';
import type { ApiKeyScope } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';

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
 * 1. an address with too many failed authentications in the window is refused (429) before its key
 *    is even looked at, which makes key guessing pointless;
 * 2. the Bearer key is resolved (401 missing_api_key / invalid_api_key, param Authorization).
 * The REST endpoints and the MCP endpoints share it; what each counts and allows differs.
 */
export function createKeyResolver(deps: AppDeps) {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);

  return async function identify(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const now = deps.clock.nowMs();
    const failureKey = failedAuthentications(request.ip);
    if (await limiter.isExhausted(failureKey, deps.limits.failedAuthPerMinute, now)) {
      reply.header('retry-after', secondsUntil(limiter.windowEnd(now), now));
      throw new AppError(
        'rate_limited',
        'Too many failed authentication attempts from this address; wait and retry.',
      );
    }
    try {
      request.principal = await principalOfHeader(deps, request.headers.authorization, now);
      return request.principal;
    } catch (error) {
      await limiter.hit(failureKey, deps.limits.failedAuthPerMinute, now);
      throw error;
    }
  };
}

/**
 * The onRequest hook of every /v1 endpoint that needs a key, in this order:
 * 1. the caller is identified (createKeyResolver: failed-authentication limit, 401s);
 * 2. the key's request is counted in its window and the three X-RateLimit headers are set, so they
 *    appear on every authenticated response, errors included (429 rate_limited with Retry-After);
 * 3. the key's scope is checked against the method (403 insufficient_scope).
 */
export function createAuthenticator(deps: AppDeps) {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);
  const identify = createKeyResolver(deps);

  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await identify(request, reply);
    const now = deps.clock.nowMs();
    const limit = principal.rateLimitPerMinute ?? deps.limits.requestsPerMinute;
    const decision = await limiter.hit(keyRequests(principal), limit, now);
    reply.header('x-ratelimit-limit', decision.limit);
    reply.header('x-ratelimit-remaining', decision.remaining);
    reply.header('x-ratelimit-reset', Math.ceil(decision.resetAt / 1000));
    if (!decision.allowed) {
      reply.header('retry-after', secondsUntil(decision.resetAt, now));
      throw new AppError(
        'rate_limited',
        `More than ${limit} requests in a minute for this key; wait and retry.`,
      );
    }

    requireScope(principal, scopeNeededFor(request.method));
  };
}

/** 401 missing_api_key without the header; invalid_api_key for anything but a valid Bearer key. */
async function principalOfHeader(deps: AppDeps, header: string | undefined, now: number): Promise<Principal> {
  if (header === undefined) {
    throw new AppError(
      'missing_api_key',
      'Send the header Authorization: Bearer <API key>.',
      'Authorization',
    );
  }
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return requirePrincipal(deps.db, match?.[1] ?? '', now);
}

function secondsUntil(epochMs: number, now: number): number {
  return Math.max(1, Math.ceil((epochMs - now) / 1000));
}

/** The principal of an authenticated request; a programming error if authenticate() did not run. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('Route registered without authentication');
  return request.principal;
}

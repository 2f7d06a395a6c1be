import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Principal, requirePrincipal, requireScope } from '../app/api-key-service.ts';
import type { AppDeps } from '../app/deps.ts';
import { FixedWindowRateLimiter, failedAuthentications, keyRequests } from '../app/rate-limiter.ts';
import type { ApiKeyScope } from '../domain/api-key.ts';
import { AppError, isAppError } from '../domain/errors.ts';
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
 * The REST endpoints and the MCP endpoints share it; what each counts and allows differs.
 */
export function createKeyResolver(deps: AppDeps) {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);

  return async function identify(request: FastifyRequest, reply: FastifyReply): Promise<Principal> {
    const now = deps.clock.nowMs();
    try {
      request.principal = await principalOfHeader(deps, request.headers.authorization, now);
      return request.principal;
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
 * 1. the caller is identified (createKeyResolver: 401s, failed authentications per address);
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
    setRateLimitHeaders(reply, decision);
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

/** The principal of an authenticated request; a programming error if authenticate() did not run. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('Route registered without authentication');
  return request.principal;
}

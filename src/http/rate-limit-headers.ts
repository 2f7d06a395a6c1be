import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app/deps.ts';
import {
  FixedWindowRateLimiter,
  failedAuthentications,
  type RateLimitDecision,
} from '../app/rate-limiter.ts';

/**
 * The contract puts X-RateLimit-Limit, -Remaining and -Reset on every response. Once a request's key
 * is known they describe the key's window (authenticate.ts). Before that, or without a usable key,
 * they describe the window that does apply to the caller: the failed authentications of its address
 * (401 and 429 answers, and what is refused before a key is even read: an unknown path, a wrong
 * method, a malformed URL, headers over the limit).
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(Math.ceil(decision.resetAt / 1000)),
  };
}

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  reply.headers(rateLimitHeaders(decision));
}

/** Seconds until `epochMs`, at least 1 (Retry-After). */
export function secondsUntil(epochMs: number, now: number): number {
  return Math.max(1, Math.ceil((epochMs - now) / 1000));
}

/** Where the failed authentications of `address` stand in the current window (counts nothing). */
export function addressWindow(deps: AppDeps): (address: string) => Promise<RateLimitDecision> {
  const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);
  return (address) =>
    limiter.peek(failedAuthentications(address), deps.limits.failedAuthPerMinute, deps.clock.nowMs());
}

/**
 * Gives a response the three headers of its client address's window (for the onSend hook, to the
 * responses needsAddressWindow picks).
 */
export function addressWindowHeaders(deps: AppDeps) {
  const windowOf = addressWindow(deps);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      setRateLimitHeaders(reply, await windowOf(request.ip));
    } catch (error) {
      // The answer itself matters more than its headers (a database outage must not turn a 404 into a 500).
      request.log.warn({ err: error }, 'rate-limit window unavailable');
    }
  };
}

/**
 * The REST API's responses (everything under /v1) and those to requests no route took, when
 * authentication did not set the headers. The other endpoints (the MCP transports, the checkout
 * pages, /healthz) are not the REST API and count differently.
 */
export function needsAddressWindow(request: FastifyRequest, reply: FastifyReply): boolean {
  if (reply.hasHeader('x-ratelimit-limit')) return false;
  const route = request.routeOptions.url;
  return route === undefined || route.startsWith('/v1/');
}

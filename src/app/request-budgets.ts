import type { RateLimitStore, RequestCounts } from '../data/rate-limit-counters.ts';
import { AppError } from '../domain/errors.ts';
import type { Limits } from './deps.ts';
import {
  FixedWindowRateLimiter,
  keyRequests,
  organisationRequests,
  type RateLimitDecision,
} from './rate-limiter.ts';

/**
 * The two windows a request made with an API key counts in, whichever face it comes through (a REST
 * request, an MCP tool call, the opening of an SSE stream):
 *
 * - its key's: the key's own limit, else `requestsPerMinute`;
 * - its organisation's, across all its keys: `organisationRequestsPerMinute`, or the key's limit where
 *   that is higher (a key given more by arrangement is never held below it by the budget), so one
 *   organisation with many keys cannot take the server from the others.
 *
 * A request its key's limit refuses is not counted in the organisation's window: a runaway key spends
 * its own window, not the one its organisation's other keys share. Both windows are the same fixed
 * minutes, counted in one step (one statement on PostgreSQL: RateLimitStore.countRequest).
 */
export type RequestBudgets = Pick<Limits, 'requestsPerMinute' | 'organisationRequestsPerMinute'>;

/**
 * What the budgets read of a caller (a Principal, named by its shape: api-key-service.ts counts with
 * these budgets, so this module does not import it).
 */
export interface Caller {
  apiKeyId: string;
  rateLimitPerMinute: number | null;
  organisation: { id: string };
}

/** Where a request stands: the window to report (the key's, or the one that refused it) and who refused. */
export interface RequestDecision extends RateLimitDecision {
  refusedBy: 'key' | 'organisation' | null;
}

export function keyLimitOf(principal: Caller, budgets: RequestBudgets): number {
  return principal.rateLimitPerMinute ?? budgets.requestsPerMinute;
}

export function organisationLimitOf(principal: Caller, budgets: RequestBudgets): number {
  return Math.max(budgets.organisationRequestsPerMinute, keyLimitOf(principal, budgets));
}

/**
 * The decision for a request already counted (`counts`, this request included). Allowed, it reports
 * the key's window, as the contract's rate-limit headers promise; refused by the organisation's
 * budget, the organisation's (no request left in it until it resets).
 */
export function decideRequest(
  limiter: FixedWindowRateLimiter,
  counts: RequestCounts,
  principal: Caller,
  budgets: RequestBudgets,
  now: number,
): RequestDecision {
  const key = limiter.decide(counts.key, keyLimitOf(principal, budgets), now);
  if (!key.allowed) return by(key, 'key');
  const organisation = limiter.decide(counts.organisation ?? 0, organisationLimitOf(principal, budgets), now);
  if (!organisation.allowed) return by(organisation, 'organisation');
  return by(key, null);
}

/** A window's decision as the request's, built member by member rather than spread (every request). */
function by(window: RateLimitDecision, refusedBy: RequestDecision['refusedBy']): RequestDecision {
  const { allowed, limit, remaining, resetAt } = window;
  return { allowed, limit, remaining, resetAt, refusedBy };
}

/** Counts one request of `principal` in both windows and decides it. */
export async function countRequest(
  store: RateLimitStore,
  principal: Caller,
  budgets: RequestBudgets,
  now: number,
): Promise<RequestDecision> {
  const limiter = new FixedWindowRateLimiter(store);
  const counts = await store.countRequest(
    keyRequests(principal),
    keyLimitOf(principal, budgets),
    organisationRequests(principal.organisation.id),
    organisationLimitOf(principal, budgets),
    limiter.windowEnd(now),
  );
  return decideRequest(limiter, counts, principal, budgets, now);
}

/** 429 rate_limited for a refused request, saying whose budget is spent, with `retryAfterSeconds`. */
export function rateLimitRefusal(decision: RequestDecision, now: number): AppError {
  const whose = decision.refusedBy === 'organisation' ? 'this organisation, across all its keys' : 'this key';
  return new AppError(
    'rate_limited',
    `More than ${decision.limit} requests in a minute for ${whose}; wait and retry.`,
    undefined,
    { retryAfterSeconds: Math.max(1, Math.ceil((decision.resetAt - now) / 1000)) },
  );
}

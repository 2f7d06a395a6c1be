import {
  countRequestInTurn,
  NO_ORGANISATION,
  type RateLimitCounter,
  type RateLimitStore,
  type RequestCounts,
} from '../data/rate-limit-counters.ts';
import { ipv4Of, ipv6Groups } from './ip-address.ts';

/**
 * Fixed-window request counting.
 *
 * Windows are aligned to the epoch (minute 0, 1, 2, ... since 1970), not to a key's first request, so
 * every instance agrees on when a window resets and the counter can live in any shared store. The
 * clock comes from the caller, so tests can step through windows without waiting.
 */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

/** What the counter of an API key's requests is named, before the key's id. */
export const KEY_COUNTER_PREFIX = 'key:';

/** The requests of one API key, counted the same by the REST and MCP faces. */
export function keyRequests(principal: { apiKeyId: string; organisation: { id: string } }): RateLimitCounter {
  return { organisationId: principal.organisation.id, name: `${KEY_COUNTER_PREFIX}${principal.apiKeyId}` };
}

/** What the counter of an organisation's requests, across all its keys, is named (in the organisation). */
export const ORGANISATION_COUNTER = 'organisation';

/** The requests of one organisation, whichever of its keys made them (src/app/request-budgets.ts). */
export function organisationRequests(organisationId: string): RateLimitCounter {
  return { organisationId, name: ORGANISATION_COUNTER };
}

/** The failed authentications from one client address; no organisation is known yet. */
export function failedAuthentications(address: string): RateLimitCounter {
  return { organisationId: NO_ORGANISATION, name: `auth-failures:${clientOfAddress(address)}` };
}

/** The OAuth client registrations (RFC 7591) from one client address: open registration, so bounded. */
export function clientRegistrations(address: string): RateLimitCounter {
  return { organisationId: NO_ORGANISATION, name: `oauth-registrations:${clientOfAddress(address)}` };
}

/**
 * The Client ID Metadata Documents fetched for one client address (its authorization requests name
 * them): anyone may make the server fetch one, so bounded.
 */
export function clientMetadataFetches(address: string): RateLimitCounter {
  return { organisationId: NO_ORGANISATION, name: `oauth-metadata-fetches:${clientOfAddress(address)}` };
}

/** The requests of one client address to the keyless public pages (/p/...). */
export function pageRequests(address: string): RateLimitCounter {
  return { organisationId: NO_ORGANISATION, name: `pages:${clientOfAddress(address)}` };
}

/** Counters of the current windows in process memory; expired windows are dropped as they pass. */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #counts = new Map<string, { windowEnd: number; count: number }>();
  #lastSweep = 0;

  async increment(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    if (windowEnd !== this.#lastSweep) this.#sweep(windowEnd);
    const key = memoryKey(counter);
    const entry = this.#counts.get(key);
    if (entry && entry.windowEnd === windowEnd) {
      entry.count += 1;
      return entry.count;
    }
    this.#counts.set(key, { windowEnd, count: 1 });
    return 1;
  }

  countRequest(
    key: RateLimitCounter,
    keyLimit: number,
    organisation: RateLimitCounter,
    _organisationLimit: number,
    windowEnd: number,
  ): Promise<RequestCounts> {
    return countRequestInTurn(this, key, keyLimit, organisation, windowEnd);
  }

  async get(counter: RateLimitCounter, windowEnd: number): Promise<number> {
    const entry = this.#counts.get(memoryKey(counter));
    return entry && entry.windowEnd === windowEnd ? entry.count : 0;
  }

  // No sweep here: a sweep drops the windows ending before the one it is given, and these windows may
  // be longer than a minute (sign-in's 15). The next increment's sweep drops them once passed.
  async incrementBelow(counter: RateLimitCounter, limit: number, windowEnd: number): Promise<number | null> {
    const key = memoryKey(counter);
    const entry = this.#counts.get(key);
    const count = entry && entry.windowEnd === windowEnd ? entry.count : 0;
    if (count >= limit) return null;
    this.#counts.set(key, { windowEnd, count: count + 1 });
    return count + 1;
  }

  async decrement(counter: RateLimitCounter, windowEnd: number): Promise<void> {
    const entry = this.#counts.get(memoryKey(counter));
    if (entry && entry.windowEnd === windowEnd && entry.count > 0) entry.count -= 1;
  }

  #sweep(currentWindowEnd: number): void {
    this.#lastSweep = currentWindowEnd;
    for (const [key, entry] of this.#counts) if (entry.windowEnd < currentWindowEnd) this.#counts.delete(key);
  }
}

function memoryKey(counter: RateLimitCounter): string {
  return `${counter.organisationId}\u0000${counter.name}`;
}

export class FixedWindowRateLimiter {
  readonly #store: RateLimitStore;
  readonly #windowMs: number;

  constructor(store: RateLimitStore, windowMs = 60_000) {
    this.#store = store;
    this.#windowMs = windowMs;
  }

  async hit(counter: RateLimitCounter, limit: number, nowMs: number): Promise<RateLimitDecision> {
    const resetAt = this.windowEnd(nowMs);
    return this.decide(await this.#store.increment(counter, resetAt), limit, nowMs);
  }

  /** The decision for a hit already counted (`count` with it) in the current window. */
  decide(count: number, limit: number, nowMs: number): RateLimitDecision {
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: this.windowEnd(nowMs),
    };
  }

  /** Where `counter` stands in the current window, counting nothing. */
  async peek(counter: RateLimitCounter, limit: number, nowMs: number): Promise<RateLimitDecision> {
    const resetAt = this.windowEnd(nowMs);
    const count = await this.#store.get(counter, resetAt);
    return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), resetAt };
  }

  windowEnd(nowMs: number): number {
    return (Math.floor(nowMs / this.#windowMs) + 1) * this.#windowMs;
  }
}

/**
 * The client a counter of a client address counts: an IPv4 address itself (an IPv4-mapped IPv6
 * address as the IPv4 address it is), an IPv6 address by its /64. One home line or server is given a
 * whole /64 and may take its 2^64 addresses in turn; counted one by one, they would make every cap per
 * address (the pages' requests a minute, the public booking attempts an hour, failed authentications,
 * sign-ins, OAuth client registrations) no cap at all.
 */
export function clientOfAddress(address: string): string {
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return ipv4Of(g6, g7);
  return `${[g0, g1, g2, g3].map((g) => g.toString(16)).join(':')}::/64`;
}

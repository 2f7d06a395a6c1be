import { describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter, MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';
import type { RateLimitCounter } from '../../src/data/rate-limit-counters.ts';

const t0 = Date.parse('2026-11-23T09:00:00Z');
const counter = (name: string, organisationId = 'org-1'): RateLimitCounter => ({ organisationId, name });

describe('FixedWindowRateLimiter', () => {
  it('allows `limit` hits per epoch-aligned minute and reports what is left', async () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.hit(counter('k'), 3, t0 + 10_000));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[0]!.resetAt).toBe(t0 + 60_000);
  });

  it('starts afresh at the window boundary, not a minute after the first hit', async () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    await limiter.hit(counter('k'), 1, t0 + 59_999);
    expect((await limiter.hit(counter('k'), 1, t0 + 59_999)).allowed).toBe(false);
    expect((await limiter.hit(counter('k'), 1, t0 + 60_000)).allowed).toBe(true);
  });

  it('counts keys separately and can tell exhaustion without counting', async () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    await limiter.hit(counter('a'), 2, t0);
    await limiter.hit(counter('a'), 2, t0);
    expect((await limiter.peek(counter('a'), 2, t0)).allowed).toBe(false);
    expect((await limiter.peek(counter('a'), 2, t0)).allowed).toBe(false);
    expect((await limiter.peek(counter('b'), 2, t0)).allowed).toBe(true);
    expect((await limiter.peek(counter('a'), 2, t0 + 60_000)).allowed).toBe(true);
  });

  it('keeps the same name in two organisations apart', async () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    await limiter.hit(counter('a', 'org-1'), 1, t0);
    expect((await limiter.peek(counter('a', 'org-1'), 1, t0)).allowed).toBe(false);
    expect((await limiter.peek(counter('a', 'org-2'), 1, t0)).allowed).toBe(true);
  });

  it('forgets windows that have passed', async () => {
    const store = new MemoryRateLimitStore();
    const limiter = new FixedWindowRateLimiter(store);
    for (let i = 0; i < 100; i++) await limiter.hit(counter(`key-${i}`), 5, t0);
    await limiter.hit(counter('later'), 5, t0 + 120_000);
    expect(await store.get(counter('key-1'), t0 + 60_000)).toBe(0);
  });
});

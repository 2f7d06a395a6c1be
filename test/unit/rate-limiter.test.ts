import { describe, expect, it } from 'vitest';
import { FixedWindowRateLimiter, MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';

const t0 = Date.parse('2026-11-23T09:00:00Z');

describe('FixedWindowRateLimiter', () => {
  it('allows `limit` hits per epoch-aligned minute and reports what is left', () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    const decisions = [1, 2, 3, 4].map(() => limiter.hit('k', 3, t0 + 10_000));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[0]!.resetAt).toBe(t0 + 60_000);
  });

  it('starts afresh at the window boundary, not a minute after the first hit', () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    limiter.hit('k', 1, t0 + 59_999);
    expect(limiter.hit('k', 1, t0 + 59_999).allowed).toBe(false);
    expect(limiter.hit('k', 1, t0 + 60_000).allowed).toBe(true);
  });

  it('counts keys separately and can tell exhaustion without counting', () => {
    const limiter = new FixedWindowRateLimiter(new MemoryRateLimitStore());
    limiter.hit('a', 2, t0);
    limiter.hit('a', 2, t0);
    expect(limiter.isExhausted('a', 2, t0)).toBe(true);
    expect(limiter.isExhausted('a', 2, t0)).toBe(true);
    expect(limiter.isExhausted('b', 2, t0)).toBe(false);
    expect(limiter.isExhausted('a', 2, t0 + 60_000)).toBe(false);
  });

  it('forgets windows that have passed', () => {
    const store = new MemoryRateLimitStore();
    const limiter = new FixedWindowRateLimiter(store);
    for (let i = 0; i < 100; i++) limiter.hit(`key-${i}`, 5, t0);
    limiter.hit('later', 5, t0 + 120_000);
    expect(store.get('key-1', t0 + 60_000)).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { clientOfAddress, FixedWindowRateLimiter, MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';
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

describe('the client a counter of a client address counts', () => {
  it('is an IPv4 address itself, written as IPv4 or as IPv4-mapped IPv6', () => {
    expect(clientOfAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(clientOfAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientOfAddress('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('is an IPv6 address’s /64, however the address is written', () => {
    const one = clientOfAddress('2001:db8:1:2::5');
    expect(one).toBe('2001:db8:1:2::/64');
    for (const same of [
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
      '2001:DB8:1:2:0:0:0:1',
      '2001:db8:1:2::1%eth0',
    ]) {
      expect(clientOfAddress(same)).toBe(one);
    }
    expect(clientOfAddress('2001:db8:1:3::5')).not.toBe(one);
    expect(clientOfAddress('::1')).toBe('0:0:0:0::/64');
  });
});

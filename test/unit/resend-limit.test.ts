import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';
import { withResend } from '../../src/app/resend-limit.ts';
import { RESENDS_PER_HOUR } from '../../src/domain/public-booking-policy.ts';

/**
 * The re-send cap (resend-limit.ts) on the store every process shares: at most RESENDS_PER_HOUR within
 * the last 60 minutes, counted by the minute, however the attempts interleave.
 */
const BOOKING = { organisationId: 'org', bookingId: 'booking' };
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 11, 4, 17, 0);

/** One attempt at `now`: whether it was let through. */
async function attempt(store: MemoryRateLimitStore, now: number): Promise<boolean> {
  try {
    await withResend({ store }, BOOKING, now, async () => undefined);
    return true;
  } catch (error) {
    expect((error as { code?: string }).code).toBe('rate_limited');
    return false;
  }
}

describe('re-sends within the last hour', () => {
  it('lets none over the limit through when attempts either side of a minute’s end run at once', async () => {
    const store = new MemoryRateLimitStore();
    expect(await attempt(store, T0 + 10 * MINUTE)).toBe(true);
    expect(await attempt(store, T0 + 10 * MINUTE)).toBe(true);
    // Each reads the other's minute while the other is between its own steps.
    const racing = await Promise.all([
      attempt(store, T0 + 59 * MINUTE + 59_900),
      attempt(store, T0 + 60 * MINUTE),
      attempt(store, T0 + 60 * MINUTE + 100),
    ]);
    expect(racing.filter(Boolean).length).toBeLessThanOrEqual(1);
  });

  it('never lets more than the limit through within 60 minutes, whatever the times and interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 180 * MINUTE }), { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (waves) => {
          const store = new MemoryRateLimitStore();
          const through: number[] = [];
          // Waves in time order; the attempts of a wave run at once, each at its own instant.
          let start = T0;
          for (const wave of waves) {
            const times = wave.map((offset) => start + (offset % (3 * MINUTE)));
            const results = await Promise.all(times.map((now) => attempt(store, now)));
            through.push(...times.filter((_, i) => results[i]));
            start = Math.max(...times) + (wave[0]! % (40 * MINUTE));
          }
          through.sort((a, b) => a - b);
          for (let i = RESENDS_PER_HOUR; i < through.length; i++) {
            // The one RESENDS_PER_HOUR before it was at least 59 minutes earlier (counted by the minute).
            expect(through[i]! - through[i - RESENDS_PER_HOUR]!).toBeGreaterThanOrEqual(59 * MINUTE);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is free again once the earliest of the hour’s minutes has left it, as Retry-After says', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < RESENDS_PER_HOUR; i++) expect(await attempt(store, T0 + 30_000)).toBe(true);
    const refused = await withResend({ store }, BOOKING, T0 + 20 * MINUTE, async () => undefined).catch(
      (error) => error,
    );
    expect(refused.details.retryAfterSeconds).toBe(40 * 60);
    expect(await attempt(store, T0 + 60 * MINUTE - 1)).toBe(false);
    expect(await attempt(store, T0 + 60 * MINUTE)).toBe(true);
  });
});

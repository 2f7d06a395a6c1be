import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/app/clock.ts';
import { createAppDeps } from '../../src/app/deps.ts';
import { FixedWindowRateLimiter, failedAuthentications } from '../../src/app/rate-limiter.ts';
import { NO_ORGANISATION } from '../../src/data/rate-limit-counters.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * The rate-limit store each database gets (in process memory on SQLite, the shared unlogged table on
 * PostgreSQL): counters of one name in two organisations are two counters.
 */
let t: TempDatabase;
const START = '2026-11-23T09:00:00Z';
const t0 = Date.parse(START);
beforeEach(async () => {
  t = await createTempDatabase();
});
afterEach(async () => {
  await t.dispose();
});

describe('the rate-limit store of the database', () => {
  it('keeps counters of one name in two organisations apart, and files them by organisation', async () => {
    const deps = createAppDeps({ db: t.db, clock: new ManualClock(START), secret: 's' });
    const limiter = new FixedWindowRateLimiter(deps.rateLimitStore);
    const inA = { organisationId: 'org-a', name: 'key:1' };
    const inB = { organisationId: 'org-b', name: 'key:1' };
    await limiter.hit(inA, 2, t0);
    await limiter.hit(inA, 2, t0);
    await limiter.hit(failedAuthentications('192.0.2.1'), 2, t0);
    expect((await limiter.peek(inA, 2, t0)).allowed).toBe(false);
    expect((await limiter.peek(inB, 2, t0)).allowed).toBe(true);
    expect((await limiter.hit(inB, 2, t0)).remaining).toBe(1);
    if (onPostgres) {
      const rows = await t.db
        .selectFrom('rate_limit_counters')
        .select(['organisation_id', 'key', 'count'])
        .orderBy('organisation_id')
        .orderBy('key')
        .execute();
      expect(rows).toEqual([
        { organisation_id: NO_ORGANISATION, key: 'auth-failures:192.0.2.1', count: 1 },
        { organisation_id: 'org-a', key: 'key:1', count: 2 },
        { organisation_id: 'org-b', key: 'key:1', count: 1 },
      ]);
    }
  });
});

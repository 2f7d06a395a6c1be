import { statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitStoreFor } from '../../src/app/deps.ts';
import {
  FixedWindowRateLimiter,
  failedAuthentications,
  MemoryRateLimitStore,
  organisationRequests,
} from '../../src/app/rate-limiter.ts';
import { NO_ORGANISATION, type RateLimitStore } from '../../src/data/rate-limit-counters.ts';
import { leaseSize, rateLimitFileOf, SqliteRateLimitStore } from '../../src/data/sqlite-rate-limits.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * The rate-limit store each database gets (a counters file beside a SQLite database, the shared
 * unlogged table on PostgreSQL): counters of one name in two organisations are two counters, and two
 * processes on one database count into the same windows.
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
    const store = rateLimitStoreFor(t.db, onPostgres ? null : t.file);
    const limiter = new FixedWindowRateLimiter(store);
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
    store.close?.();
  });

  it('counts the hits of two processes on one database into one window', async () => {
    // Each store stands for a process: its own connection to the database, or to the counters file.
    const other = onPostgres ? t.reopen() : null;
    const stores = [
      rateLimitStoreFor(t.db, onPostgres ? null : t.file),
      rateLimitStoreFor(other?.db ?? t.db, onPostgres ? null : t.file),
    ];
    try {
      const limiters = stores.map((store) => new FixedWindowRateLimiter(store));
      const key = { organisationId: 'org-a', name: 'key:shared' };
      const decisions = [];
      for (let i = 0; i < 6; i++) decisions.push(await limiters[i % 2]!.hit(key, 5, t0));
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, true, false]);
      expect((await limiters[0]!.peek(key, 5, t0)).remaining).toBe(0);
    } finally {
      for (const store of stores) store.close?.();
      await other?.close();
    }
  });
});

describe('a request counted in its key’s window and its organisation’s (countRequest)', () => {
  it('counts the organisation only within the key’s limit, into one window for two processes', async () => {
    const other = onPostgres ? t.reopen() : null;
    const stores: RateLimitStore[] = [
      rateLimitStoreFor(t.db, onPostgres ? null : t.file),
      rateLimitStoreFor(other?.db ?? t.db, onPostgres ? null : t.file),
      // An in-memory database's store counts alike, in one process.
      new MemoryRateLimitStore(),
    ];
    const organisation = organisationRequests('org-a');
    const windowEnd = new FixedWindowRateLimiter(stores[0]!).windowEnd(t0);
    try {
      const counts = [];
      // Two keys of one organisation, limit 2 each, on both processes in turn.
      for (let i = 0; i < 6; i++) {
        const key = { organisationId: 'org-a', name: `key:${i % 3 === 2 ? 'b' : 'a'}` };
        counts.push(await stores[i % 2]!.countRequest(key, 2, organisation, 100, windowEnd));
      }
      expect(counts).toEqual([
        { key: 1, organisation: 1 },
        { key: 2, organisation: 2 },
        { key: 1, organisation: 3 },
        { key: 3, organisation: null },
        { key: 4, organisation: null },
        { key: 2, organisation: 4 },
      ]);
      expect(await stores[1]!.get(organisation, windowEnd)).toBe(4);
      // Another organisation's window, and the next window, start at one.
      expect(
        await stores[0]!.countRequest(
          { organisationId: 'org-b', name: 'key:a' },
          2,
          organisationRequests('org-b'),
          100,
          windowEnd,
        ),
      ).toEqual({ key: 1, organisation: 1 });
      expect(
        await stores[1]!.countRequest(
          { organisationId: 'org-a', name: 'key:a' },
          2,
          organisation,
          100,
          windowEnd + 60_000,
        ),
      ).toEqual({ key: 1, organisation: 1 });

      const memory = stores[2]!;
      const inMemory = [];
      for (let i = 0; i < 3; i++)
        inMemory.push(
          await memory.countRequest(
            { organisationId: 'org-a', name: 'key:a' },
            2,
            organisation,
            100,
            windowEnd,
          ),
        );
      expect(inMemory.map((c) => c.organisation)).toEqual([1, 2, null]);
    } finally {
      for (const store of stores) store.close?.();
      await other?.close();
    }
  });
});

describe.skipIf(onPostgres)('the counters file of a SQLite database', () => {
  it('is private, and one that cannot be read is started afresh', async () => {
    const file = rateLimitFileOf(t.file);
    writeFileSync(file, 'not a database, just bytes that were left here by a crash of the machine');
    const store = new SqliteRateLimitStore(file);
    try {
      expect(await store.increment({ organisationId: 'o', name: 'k' }, t0 + 60_000)).toBe(1);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      store.close();
    }
  });
});

describe('a busy key counted in batches from the counters file (SQLite)', () => {
  it.skipIf(onPostgres)(
    'hands out distinct counts across processes: never more than the limit allowed, and little held back',
    async () => {
      const limit = 640;
      expect(leaseSize(limit)).toBe(10);
      expect(leaseSize(120)).toBe(1);
      expect(leaseSize(1_000_000)).toBe(64);
      const stores = [0, 1, 2].map(() => new SqliteRateLimitStore(rateLimitFileOf(t.file!)));
      const windowEnd = new FixedWindowRateLimiter(stores[0]!).windowEnd(t0);
      const organisation = organisationRequests('org-a');
      try {
        const key = { organisationId: 'org-a', name: 'key:busy' };
        // One process alone counts 1, 2, 3, … as before, while the file holds a batch ahead.
        const alone = [];
        for (let i = 0; i < 12; i++)
          alone.push((await stores[0]!.countRequest(key, limit, organisation, 10 * limit, windowEnd)).key);
        expect(alone).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        expect(await stores[1]!.get(key, windowEnd)).toBe(20);
        // Three processes in a shuffled order until every one is refused.
        const seen: number[] = [...alone];
        const refused = new Set<number>();
        let turn = 7;
        while (refused.size < stores.length) {
          turn = (turn * 1_103_515_245 + 12_345) % 2_147_483_648;
          const which = turn % stores.length;
          const counts = await stores[which]!.countRequest(key, limit, organisation, 10 * limit, windowEnd);
          if (counts.key > limit) {
            refused.add(which);
            expect(counts.organisation).toBeNull();
          } else seen.push(counts.key);
        }
        expect(new Set(seen).size).toBe(seen.length);
        expect(Math.max(...seen)).toBeLessThanOrEqual(limit);
        // What the others held unused when the window ran out: less than a batch each.
        expect(seen.length).toBeGreaterThanOrEqual(limit - (stores.length - 1) * (leaseSize(limit) - 1));
        // The organisation's window counted each allowed request once, in batches of its own.
        expect(await stores[0]!.get(organisation, windowEnd)).toBeGreaterThanOrEqual(seen.length);
      } finally {
        for (const store of stores) store.close();
      }
    },
  );
});

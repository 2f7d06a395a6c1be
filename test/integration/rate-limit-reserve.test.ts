import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitStoreFor } from '../../src/app/deps.ts';
import { MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';
import type { RateLimitStore } from '../../src/data/rate-limit-counters.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * Reserving a try (incrementBelow) and giving it back (decrement), what sign-in throttling counts
 * with: in process memory, and in the database's shared store, where two processes reserving at once
 * still stop at the limit together.
 */
let t: TempDatabase;
const t0 = Date.parse('2026-11-23T09:00:00Z');
const minuteEnd = t0 + 60_000;
const quarterEnd = t0 + 15 * 60_000;
const counter = { organisationId: '', name: 'signin:acme/desk@acme.test/192.0.2.1' };

beforeEach(async () => {
  t = await createTempDatabase();
});
afterEach(async () => {
  await t.dispose();
});

const stores: Record<string, () => { stores: RateLimitStore[]; close(): Promise<void> }> = {
  memory: () => ({ stores: [new MemoryRateLimitStore()], close: async () => {} }),
  database: () => {
    // Each store stands for a process: its own connection to the database, or to the counters file.
    const other = onPostgres ? t.reopen() : null;
    const both = [
      rateLimitStoreFor(t.db, onPostgres ? null : t.file),
      rateLimitStoreFor(other?.db ?? t.db, onPostgres ? null : t.file),
    ];
    return {
      stores: both,
      async close() {
        for (const store of both) store.close?.();
        await other?.close();
      },
    };
  },
};

describe.each(Object.keys(stores))('reserving in the %s store', (kind) => {
  it('adds a hit only below the limit, however many reserve at once, and gives it back', async () => {
    const { stores: all, close } = stores[kind]!();
    try {
      const counts = await Promise.all(
        Array.from({ length: 12 }, (_, i) => all[i % all.length]!.incrementBelow(counter, 5, quarterEnd)),
      );
      expect(counts.filter((c) => c !== null).sort()).toEqual([1, 2, 3, 4, 5]);
      expect(counts.filter((c) => c === null)).toHaveLength(7);
      expect(await all[0]!.get(counter, quarterEnd)).toBe(5);
      await all.at(-1)!.decrement(counter, quarterEnd);
      expect(await all[0]!.get(counter, quarterEnd)).toBe(4);
      expect(await all[0]!.incrementBelow(counter, 5, quarterEnd)).toBe(5);
      // Another window, another count; a limit of 0 allows nothing.
      expect(await all[0]!.incrementBelow(counter, 5, quarterEnd + 15 * 60_000)).toBe(1);
      expect(await all[0]!.incrementBelow({ ...counter, name: 'other' }, 0, quarterEnd)).toBeNull();
      // Never below zero.
      const fresh = { ...counter, name: 'fresh' };
      await all[0]!.decrement(fresh, quarterEnd);
      expect(await all[0]!.get(fresh, quarterEnd)).toBe(0);
    } finally {
      await close();
    }
  });

  it("keeps the current minute's counts while reserving in a 15-minute window", async () => {
    const { stores: all, close } = stores[kind]!();
    try {
      const store = all[0]!;
      const key = { organisationId: 'org-a', name: 'key:1' };
      await store.increment(key, minuteEnd);
      await store.incrementBelow(counter, 5, quarterEnd);
      await store.increment(key, minuteEnd);
      expect(await store.get(key, minuteEnd)).toBe(2);
      expect(await store.get(counter, quarterEnd)).toBe(1);
    } finally {
      await close();
    }
  });
});

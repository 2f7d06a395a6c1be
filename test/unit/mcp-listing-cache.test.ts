import { describe, expect, it } from 'vitest';
import { LISTING_CACHE_BYTES, LISTING_CACHE_SIZE, ListingCache } from '../../src/mcp/in-process-api.ts';

/** A listing whose JSON is `length` bytes long. */
const listing = (length: number) => ['x'.repeat(length - 4)];

/** Lets the cache see its listings loaded. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("the tools' listing cache", () => {
  it('loads a listing once, for concurrent calls too', async () => {
    const cache = new ListingCache();
    let loads = 0;
    const load = async () => {
      loads += 1;
      return listing(10);
    };
    await Promise.all([cache.getOrLoad('a', load), cache.getOrLoad('a', load)]);
    await cache.getOrLoad('a', load);
    expect(loads).toBe(1);
    await settled();
    expect([cache.size, cache.bytes]).toEqual([1, 10]);
    expect([LISTING_CACHE_SIZE, LISTING_CACHE_BYTES]).toEqual([1000, 8 * 2 ** 20]);
  });

  it('holds at most its number of listings', async () => {
    const cache = new ListingCache(3, 1_000_000);
    for (let i = 0; i < 10; i += 1) {
      await cache.getOrLoad(`k${i}`, async () => listing(10));
      expect(cache.size).toBeLessThanOrEqual(3);
    }
  });

  it('holds at most its bytes of JSON, and does not keep a listing larger than that', async () => {
    const cache = new ListingCache(1_000, 1_000);
    for (let i = 0; i < 50; i += 1) {
      await cache.getOrLoad(`k${i}`, async () => listing(i % 2 === 0 ? 300 : 60));
      await settled();
      expect(cache.bytes).toBeLessThanOrEqual(1_000);
    }
    expect(cache.size).toBeGreaterThan(1);
    expect(await cache.getOrLoad('huge', async () => listing(5_000))).toHaveLength(1);
    await settled();
    let loads = 0;
    await cache.getOrLoad('huge', async () => {
      loads += 1;
      return listing(5_000);
    });
    expect(loads).toBe(1);
    expect(cache.bytes).toBeLessThanOrEqual(1_000);
  });

  it('answers a failure and forgets it', async () => {
    const cache = new ListingCache();
    await expect(
      cache.getOrLoad('a', async () => Promise.reject(new Error('no such location'))),
    ).rejects.toThrow('no such location');
    await settled();
    expect(await cache.getOrLoad('a', async () => listing(10))).toEqual(listing(10));
  });
});

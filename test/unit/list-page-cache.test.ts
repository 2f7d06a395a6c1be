import { describe, expect, it } from 'vitest';
import { ListPageCache, MAX_PAGE_BYTES, MAX_PAGES } from '../../src/http/list-page-cache.ts';

const page = (length: number) => ({ body: Buffer.alloc(length, 'x'), next: null });

describe('the cache of catalogue listing pages', () => {
  it('holds at most its number of pages, least recently used out first', async () => {
    const cache = new ListPageCache(3, 1_000_000);
    for (const key of ['a', 'b', 'c']) await cache.getOrLoad(key, async () => page(10));
    await cache.getOrLoad('a', async () => page(10));
    await cache.getOrLoad('d', async () => page(10));
    expect(cache.size).toBe(3);
    let loaded = false;
    await cache.getOrLoad('b', async () => {
      loaded = true;
      return page(10);
    });
    expect(loaded).toBe(true);
  });

  it('holds at most its bytes of JSON, whatever the number of pages', async () => {
    const cache = new ListPageCache(1_000, 1_000);
    for (let i = 0; i < 100; i += 1) {
      await cache.getOrLoad(`page-${i}`, async () => page(i % 2 === 0 ? 300 : 50));
      expect(cache.bytes).toBeLessThanOrEqual(1_000);
    }
    expect(cache.size).toBeGreaterThan(2);
    // A page larger than the bound is served, and evicts nothing.
    const huge = await cache.getOrLoad('huge', async () => page(5_000));
    expect(huge.body.length).toBe(5_000);
    expect(cache.bytes).toBeLessThanOrEqual(1_000);
    expect(cache.size).toBeGreaterThan(2);
  });

  it('counts a page reloaded under the same key once', async () => {
    const cache = new ListPageCache();
    await Promise.all([
      cache.getOrLoad('a', async () => page(10)),
      cache.getOrLoad('a', async () => page(10)),
    ]);
    expect([cache.size, cache.bytes]).toEqual([1, 10]);
    expect([MAX_PAGES, MAX_PAGE_BYTES]).toEqual([1000, 8 * 2 ** 20]);
  });
});

import { describe, expect, it } from 'vitest';
import { STATEMENT_CACHE_SIZE, STATEMENT_CACHE_TEXT_BYTES, StatementCache } from '../../src/data/database.ts';

describe('the cache of prepared statements', () => {
  it('holds at most its number of statements', () => {
    const cache = new StatementCache<number>(3, 1_000);
    for (let i = 0; i < 10; i += 1) {
      cache.set(`select ${i}`, i);
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(cache.get('select 9')).toBe(9);
  });

  it('holds at most its bytes of SQL text, whatever the number of statements', () => {
    const cache = new StatementCache<number>(1_000, 100);
    for (let i = 0; i < 50; i += 1) {
      cache.set(`select * from t where id in (${'?, '.repeat(i % 7)}?) -- ${i}`, i);
      expect(cache.textBytes).toBeLessThanOrEqual(100);
      expect(cache.get(`select * from t where id in (${'?, '.repeat(i % 7)}?) -- ${i}`)).toBe(i);
    }
    cache.set(`select '${'x'.repeat(200)}'`, -1);
    expect(cache.get(`select '${'x'.repeat(200)}'`)).toBeUndefined();
    expect(cache.textBytes).toBeLessThanOrEqual(100);
  });

  it('counts a statement once however often it is kept', () => {
    const cache = new StatementCache<number>();
    cache.set('select 1', 1);
    cache.set('select 1', 1);
    expect([cache.size, cache.textBytes]).toEqual([1, 'select 1'.length]);
    expect([STATEMENT_CACHE_SIZE, STATEMENT_CACHE_TEXT_BYTES]).toEqual([500, 2 ** 20]);
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_NAMED_STATEMENTS, MAX_NAMED_TEXT_BYTES, StatementNames } from '../../src/data/postgres.ts';

describe('the names of PostgreSQL statements', () => {
  it('names each text once, the same name every time', () => {
    const names = new StatementNames();
    expect(names.nameOf('select $1')).toBe('s1');
    expect(names.nameOf('select $1, $2')).toBe('s2');
    expect(names.nameOf('select $1')).toBe('s1');
    expect([MAX_NAMED_STATEMENTS, MAX_NAMED_TEXT_BYTES]).toEqual([1_000, 2 ** 20]);
  });

  it('names at most its number of texts, and runs the others unnamed', () => {
    const names = new StatementNames(3, 1_000_000);
    const given = Array.from({ length: 10 }, (_, i) => names.nameOf(`select ${i}, $1`));
    expect(given).toEqual(['s1', 's2', 's3', ...Array(7).fill(undefined)]);
    expect(names.size).toBe(3);
  });

  it('names at most its bytes of text, whatever the number of texts', () => {
    const names = new StatementNames(1_000, 100);
    for (let i = 0; i < 50; i += 1) {
      names.nameOf(`select * from t where id in (${'$1, '.repeat(i % 9)}$1) -- ${i}`);
      expect(names.textBytes).toBeLessThanOrEqual(100);
    }
    expect(names.nameOf(`select '${'x'.repeat(200)}', $1`)).toBeUndefined();
    expect(names.size).toBeGreaterThan(0);
  });
});

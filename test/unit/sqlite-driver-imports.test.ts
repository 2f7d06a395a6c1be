import { describe, expect, it } from 'vitest';
import { readSources } from '../helpers/import-graph.ts';

/**
 * src/data/sqlite-driver.ts picks the better-sqlite3 major that this Node.js runs safely (13 on Node 22
 * and 24, 12 on Node 20); a file importing better-sqlite3 itself would load 13 on Node 20, where it
 * crashes, and a file importing better-sqlite3-12 would load 12 on Node 24, where it aborts.
 */
describe('the SQLite driver', () => {
  it('is imported only through src/data/sqlite-driver.ts, in the code, the tests and the benchmarks', () => {
    const sources = ['src', 'test', 'bench'].flatMap((dir) => readSources(dir));
    expect(sources.length).toBeGreaterThan(200);
    const direct = sources
      .filter(({ file, imports }) => file !== 'src/data/sqlite-driver.ts' && imports.some(isDriver))
      .map(({ file }) => file);
    expect(direct).toEqual([]);
    expect(sources.find(({ file }) => file === 'src/data/sqlite-driver.ts')?.imports).toContain(
      'better-sqlite3',
    );
  });
});

function isDriver(specifier: string): boolean {
  return specifier === 'better-sqlite3' || specifier === 'better-sqlite3-12';
}

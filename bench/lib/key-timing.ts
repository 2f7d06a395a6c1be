import { generateApiKey } from '../../src/app/api-key-crypto.ts';
import { authenticateApiKey, createApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { smallCatalogue } from '../../test/helpers/catalogue-fixtures.ts';
import { createTempDatabase } from '../../test/helpers/temp-database.ts';
import type { Timing } from './benchmark.ts';
import { summariseTimes } from './timing.ts';

const WARM_UP = 2000;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface KeyTimingFigures {
  /** A key equal to a real one but for its last character. */
  nearMiss: Timing;
  /** A well-formed key sharing nothing on purpose with any real one. */
  random: Timing;
  /** nearMiss p50 / random p50: 1 means a guess's closeness cannot be told from its timing. */
  ratio: number;
}

/**
 * Times key resolution (`authenticateApiKey`, the function every request's authentication runs) for
 * wrong keys that are close to a real key and for random ones, interleaved call by call on one database
 * so that machine noise falls on both alike. Were keys compared as strings, the near misses would be
 * slower; compared as hashes, both kinds cost the same. This is a measurement for the report, not a
 * test: the suite checks the structure instead (the lookup's only parameter is the hash).
 */
export async function measureKeyTiming(calls: number): Promise<KeyTimingFigures> {
  const now = Date.parse('2026-11-23T09:00:00Z');
  const database = await createTempDatabase();
  try {
    await importCatalogue(database.db, smallCatalogue(), now);
    // Enough real keys that no near miss repeats: a repeated string could hit a cache a fresh random
    // key cannot, and the comparison would measure that cache instead.
    const realKeys: string[] = [];
    for (let i = 0; i < Math.ceil((calls + WARM_UP) / 61); i += 1) {
      const created = await createApiKey(
        database.db,
        { organisationSlug: 'acme-hair', label: `timing ${i}`, scope: 'read' },
        now,
      );
      realKeys.push(created.key);
    }
    const nearMiss = (i: number) => {
      const key = realKeys[i % realKeys.length]!;
      const other = (BASE62.indexOf(key.at(-1)!) + 1 + (Math.floor(i / realKeys.length) % 61)) % 62;
      return key.slice(0, -1) + BASE62[other];
    };
    // Every candidate is made before timing starts, so the timed loop does nothing but resolve keys,
    // and each is decoded from bytes as a request header is: strings built by concatenation are kept
    // by V8 as trees of pieces, and flattening a deep one costs more than the lookup's differences.
    const asHeader = (key: string) => Buffer.from(key, 'latin1').toString('latin1');
    const rounds = Array.from({ length: calls + WARM_UP }, (_, i) => ({
      near: asHeader(nearMiss(i)),
      random: asHeader(generateApiKey()),
    }));
    const times = { nearMiss: [] as number[], random: [] as number[] };
    for (const [i, round] of rounds.entries()) {
      const order: [keyof typeof times, string][] = [
        ['nearMiss', round.near],
        ['random', round.random],
      ];
      if (i % 2 === 1) order.reverse();
      for (const [kind, candidate] of order) {
        const started = performance.now();
        const principal = await authenticateApiKey(database.db, candidate, now);
        const elapsed = performance.now() - started;
        if (principal !== null) throw new Error('a wrong key was accepted');
        if (i >= WARM_UP) times[kind].push(elapsed);
      }
    }
    const nearMissTiming = summariseTimes('Near miss (last character differs)', times.nearMiss);
    const randomTiming = summariseTimes('Random well-formed key', times.random);
    return { nearMiss: nearMissTiming, random: randomTiming, ratio: nearMissTiming.p50 / randomTiming.p50 };
  } finally {
    await database.dispose();
  }
}

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows } from '../../src/data/compiled-insert.ts';
import { createTempDatabase, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * insertRows keeps the SQL of an INSERT by its shape and binds each call's values to it: every value
 * must land in its own column whatever the order the rows name them in, a row naming fewer columns
 * must not be bound to the longer statement, and a conflict must be counted as no row, on both
 * databases.
 */
let database: TempDatabase;

beforeAll(async () => {
  database = await createTempDatabase();
});
afterAll(async () => {
  await database.dispose();
});

function organisation(n: number) {
  return {
    id: `org-${n}`,
    slug: `org-${n}`,
    name: `Organisation ${n}`,
    currency: n % 2 === 0 ? 'GBP' : 'EUR',
    booking_reference_prefix: `P${n}`,
    locale: n % 2 === 0 ? 'en-GB' : 'fr-FR',
    created_at: 1_000 + n,
    updated_at: 2_000 + n,
  };
}

async function stored(ids: string[]) {
  return database.db
    .selectFrom('organisations')
    .select([
      'id',
      'slug',
      'name',
      'currency',
      'booking_reference_prefix',
      'locale',
      'created_at',
      'updated_at',
    ])
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

describe('insertRows', () => {
  it('binds each call’s own values, in each column, for one row and several, in any key order', async () => {
    const batches = [[1], [2], [3, 4], [5, 6]].map((ns) => ns.map(organisation));
    // The same shape, its keys named in another order: the values must still find their columns.
    const reversed = Object.fromEntries(Object.entries(organisation(7)).reverse());
    for (const rows of [...batches, [reversed as ReturnType<typeof organisation>]]) {
      expect(await insertRows(database.db, 'organisations', rows)).toBe(BigInt(rows.length));
    }
    const ids = [1, 2, 3, 4, 5, 6, 7].map((n) => `org-${n}`);
    const rows = (await stored(ids)).map((row) => ({
      ...row,
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    }));
    expect(rows).toEqual([1, 2, 3, 4, 5, 6, 7].map(organisation));
  });

  it('leaves out a column not named (undefined) and lets its default stand', async () => {
    const full = organisation(8);
    await insertRows(database.db, 'organisations', [full]);
    const partial = { ...organisation(9), catalogue_version: undefined };
    const withVersion = { ...organisation(10), catalogue_version: 41 };
    expect(await insertRows(database.db, 'organisations', [partial])).toBe(1n);
    expect(await insertRows(database.db, 'organisations', [withVersion])).toBe(1n);
    const versions = await database.db
      .selectFrom('organisations')
      .select(['id', 'catalogue_version'])
      .where('id', 'in', ['org-9', 'org-10'])
      .orderBy('id')
      .execute();
    expect(versions.map((v) => [v.id, Number(v.catalogue_version)])).toEqual([
      ['org-10', 41],
      ['org-9', 0],
    ]);
  });

  it('writes an expression through Kysely, never bound to the kept statement of its shape', async () => {
    await insertRows(database.db, 'organisations', [organisation(12)]);
    const expression = { ...organisation(13), name: sql<string>`'Organisation ' || '13'` };
    expect(await insertRows(database.db, 'organisations', [expression as never])).toBe(1n);
    expect((await stored(['org-13']))[0]!.name).toBe('Organisation 13');
  });

  it('counts a row refused by the conflict clause as none inserted, and writes nothing for it', async () => {
    const again = { ...organisation(1), name: 'Not written' };
    expect(await insertRows(database.db, 'organisations', [again], ['slug'])).toBe(0n);
    expect(await insertRows(database.db, 'organisations', [organisation(11)], ['slug'])).toBe(1n);
    expect((await stored(['org-1']))[0]!.name).toBe('Organisation 1');
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQuery } from '../../src/data/prepared-query.ts';
import { createTempDatabase, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * preparedQuery compiles a query once per dialect and binds its named values at every call: each
 * call must see its own values (never the first call's), constants of the query must stay as written,
 * and a name the query does not bind must be refused rather than silently ignored, on both databases.
 */
let database: TempDatabase;

beforeAll(async () => {
  database = await createTempDatabase();
  await database.db
    .insertInto('organisations')
    .values(
      ['a', 'b', 'c'].map((letter, i) => ({
        id: `org-${letter}`,
        slug: `org-${letter}`,
        name: `Organisation ${letter.toUpperCase()}`,
        currency: i === 2 ? 'EUR' : 'GBP',
        booking_reference_prefix: letter.toUpperCase(),
        locale: 'en-GB',
        created_at: 1_000 * (i + 1),
        updated_at: 0,
      })),
    )
    .execute();
});
afterAll(async () => {
  await database.dispose();
});

const bySlugAndCurrency = preparedQuery<{ slug: string; since: number }, { id: string; name: string }>(
  (db, param) =>
    db
      .selectFrom('organisations')
      .select(['id', 'name'])
      .where('slug', '=', param('slug'))
      // A constant of the query: bound as a parameter too, and kept as written.
      .where('currency', 'in', ['GBP', 'USD'])
      .where('created_at', '>=', param('since')),
);

describe('preparedQuery', () => {
  it('binds every call’s own values by name, and keeps the query’s constants', async () => {
    const { db } = database;
    expect(await bySlugAndCurrency.first(db, { slug: 'org-a', since: 0 })).toEqual({
      id: 'org-a',
      name: 'Organisation A',
    });
    expect(await bySlugAndCurrency.rows(db, { slug: 'org-b', since: 0 })).toEqual([
      { id: 'org-b', name: 'Organisation B' },
    ]);
    // org-b was made at 2,000: not since 2,001.
    expect(await bySlugAndCurrency.first(db, { slug: 'org-b', since: 2_001 })).toBeUndefined();
    // org-c is in EUR, which the constant leaves out.
    expect(await bySlugAndCurrency.rows(db, { slug: 'org-c', since: 0 })).toEqual([]);
  });

  it('works inside a transaction, on its handle', async () => {
    const names = await database.db
      .transaction()
      .execute((trx) => bySlugAndCurrency.first(trx, { slug: 'org-a', since: 1_000 }));
    expect(names?.name).toBe('Organisation A');
  });

  it('refuses a name the query writes into its SQL instead of binding it', async () => {
    const literal = preparedQuery<{ slug: string }, { id: string }>((db, param) =>
      db
        .selectFrom('organisations')
        .select('id')
        .where('slug', '=', sql.lit(param('slug'))),
    );
    await expect(literal.rows(database.db, { slug: 'org-a' })).rejects.toThrow(/slug is not bound/);
    // Bound once and written into the SQL once: still refused.
    const both = preparedQuery<{ slug: string }, { id: string }>((db, param) =>
      db
        .selectFrom('organisations')
        .select('id')
        .where('slug', '=', param('slug'))
        .where('name', '=', sql.lit(param('slug'))),
    );
    await expect(both.rows(database.db, { slug: 'org-a' })).rejects.toThrow(/slug is not bound/);
  });

  it('refuses a list where one value goes', async () => {
    await expect(
      bySlugAndCurrency.rows(database.db, { slug: ['org-a', 'org-b'] as never, since: 0 }),
    ).rejects.toThrow(/slug must be one value/);
  });

  const byIds = preparedQuery<{ ids: readonly string[]; since: number }, { id: string }>((db, param, list) =>
    db
      .selectFrom('organisations')
      .select('id')
      .where('id', 'in', list('ids'))
      .where('created_at', '>=', param('since'))
      .orderBy('id'),
  );

  it('binds a list of any length, each call its own items', async () => {
    const { db } = database;
    const ids = async (list: string[], since = 0) =>
      (await byIds.rows(db, { ids: list, since })).map((r) => r.id);
    expect(await ids(['org-b'])).toEqual(['org-b']);
    expect(await ids(['org-a', 'org-c'])).toEqual(['org-a', 'org-c']);
    // The shape of two items again, with other items: not the first call's.
    expect(await ids(['org-b', 'org-c'])).toEqual(['org-b', 'org-c']);
    expect(await ids(['org-a', 'org-b', 'org-c'], 2_000)).toEqual(['org-b', 'org-c']);
    expect(await ids(['org-a'])).toEqual(['org-a']);
    expect(await ids(['org-x', 'org-y'])).toEqual([]);
  });

  it('refuses an empty list, and one value where a list goes', async () => {
    await expect(byIds.rows(database.db, { ids: [], since: 0 })).rejects.toThrow(
      /ids must be a list of at least one value/,
    );
    await expect(byIds.rows(database.db, { ids: 'org-a' as never, since: 0 })).rejects.toThrow(
      /ids must be a list/,
    );
  });
});

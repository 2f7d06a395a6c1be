import { type ExpressionBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { NameKey, Page } from '../domain/catalogue.ts';
import { literalLimit } from './literal-limit.ts';
import type { Database } from './tables.ts';

/**
 * Keyset pagination over (name, id): stable under inserts and deletes, unlike offsets, and served by
 * the same index walk whatever the page number.
 */
export function afterNameKey<DB extends Database, TB extends keyof DB & string, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  nameColumn: string,
  idColumn: string,
  after: NameKey | null,
  limit: number,
): SelectQueryBuilder<DB, TB, O> {
  let q = query;
  if (after) {
    q = q.where((eb: ExpressionBuilder<DB, TB>) =>
      eb.or([
        eb(sql.ref(nameColumn), '>', after.name),
        eb.and([eb(sql.ref(nameColumn), '=', after.name), eb(sql.ref(idColumn), '>', after.id)]),
      ]),
    );
  }
  return q
    .orderBy(sql.ref(nameColumn))
    .orderBy(sql.ref(idColumn))
    .limit(literalLimit(rowsToRead(limit)));
}

/**
 * The page sizes a listing reads, whatever size was asked for: each distinct LIMIT is a statement of
 * its own (literal-limit.ts), and a client may ask for any size from 1 to 100, which would otherwise
 * make a hundred statements of each listing and use up most of the process's named ones (postgres.ts).
 */
const PAGE_READS = [10, 25, 50, 100] as const;

/**
 * The rows read for a page of `limit`: a size of PAGE_READS at least that large, and one more to tell
 * whether more follow. toPage (or the listing's own caller) keeps `limit` of them.
 */
export function rowsToRead(limit: number): number {
  return (PAGE_READS.find((size) => size >= limit) ?? limit) + 1;
}

/** Keeps the page's `limit` of the rows afterNameKey read, and says where the next page starts. */
export function toPage<R extends { name: string; id: string }, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return { items: pageRows.map(map), next: hasMore && last ? { name: last.name, id: last.id } : null };
}

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
    .limit(literalLimit(limit + 1));
}

/** Cuts the extra row fetched by afterNameKey and says where the next page starts. */
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

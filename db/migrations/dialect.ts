import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * What the migrations need to know about the database they run on. The tables, columns, keys, checks
 * and indexes are written once with Kysely's schema builder, which speaks both dialects; only the
 * rules the schema builder cannot express (triggers, an exclusion constraint) are written per dialect,
 * each migration keeping its two versions side by side.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL: the rate-limit windows every instance counts in, so a key's 120 requests a minute are
 * 120 across all instances. UNLOGGED: counters are scratch data, written on every request; skipping
 * the write-ahead log makes each hit cheap, and a crash that empties the table only forgives part of a
 * minute. Not organisation data: a key id or a client address names each counter.
 *
 * SQLite keeps its counters in the one process's memory (src/app/rate-limiter.ts).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql
    .raw(
      `CREATE UNLOGGED TABLE rate_limit_counters (
         key text NOT NULL,
         window_end bigint NOT NULL,
         count integer NOT NULL,
         PRIMARY KEY (key, window_end)
       )`,
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

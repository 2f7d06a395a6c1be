import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL: one overlap guard instead of two, and no index a booking's re-check can stray into
 * (issue 47, the CPU of a booking). docs/decisions/postgres-booking-cost.md.
 *
 * - The trigger `bookings_no_overlap` (2026-11-23-0001) is dropped. The exclusion constraint of the
 *   same name (2026-11-23-0002) refuses every write the trigger refused, and more: it sees rows other
 *   transactions have not committed yet, and counts a lapsed hold until its row says expired, which
 *   the booking paths write first. The trigger's query ran on every insert and guarded nothing more;
 *   with a generic plan and no statistics yet (a new database, or autovacuum off) it scanned every
 *   booking the staff member ever had through the constraint's GiST index.
 * - `bookings_series` covers only the bookings of a series (`series_id IS NOT NULL`, what every query
 *   by series says). Over every booking, and with no statistics yet, a generic plan chose it for the
 *   re-check's read of a staff member's bookings, scanning the whole organisation's day instead of
 *   one staff member's.
 *
 * SQLite keeps its triggers: they are its only guard, and it plans each statement with its values.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw('DROP TRIGGER bookings_no_overlap ON bookings').execute(db);
  await sql.raw('DROP FUNCTION bookings_refuse_overlap()').execute(db);
  await sql.raw('DROP INDEX bookings_series').execute(db);
  await sql
    .raw(
      'CREATE INDEX bookings_series ON bookings (organisation_id, series_id, starts_at) WHERE series_id IS NOT NULL',
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

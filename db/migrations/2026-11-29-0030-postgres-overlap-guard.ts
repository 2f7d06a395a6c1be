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
 * - Two functions take a turn (a transaction-scoped advisory lock, see takeTurn) and then read, in
 *   one statement, what the turn guards: a request's idempotency record, and the live bookings a
 *   booking's re-check reads. VOLATILE, so the read inside takes its snapshot after the lock is
 *   granted and sees what the turn's previous holder committed, as a separate statement would; one
 *   round trip instead of two (each costs the server process about 0.1-0.2 ms of CPU).
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
  await sql
    .raw(
      `CREATE FUNCTION idempotency_record_after_turn(turn text, organisation text, request_key text, at_ms bigint)
       RETURNS SETOF idempotency_records LANGUAGE plpgsql VOLATILE AS $$
       BEGIN
         PERFORM pg_advisory_xact_lock(hashtextextended(turn, 0));
         RETURN QUERY SELECT * FROM idempotency_records r
           WHERE r.organisation_id = organisation AND r.idempotency_key = request_key AND r.expires_at > at_ms;
       END $$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE FUNCTION live_bookings_after_turn(turn text, organisation text, staff text[], statuses text[],
         starts_before bigint, blocked_after bigint, starts_after bigint, excluded text)
       RETURNS TABLE (staff_id text, status text, starts_at bigint, ends_at bigint, blocked_until bigint,
         hold_expires_at bigint, id text)
       LANGUAGE plpgsql VOLATILE AS $$
       #variable_conflict use_column
       BEGIN
         PERFORM pg_advisory_xact_lock(hashtextextended(turn, 0));
         -- One staff member (a booking naming one): equality, so that even a generic plan without
         -- statistics ranges over that staff member's bookings alone in bookings_staff_time.
         IF cardinality(staff) = 1 THEN
           RETURN QUERY SELECT b.staff_id, b.status, b.starts_at, b.ends_at, b.blocked_until, b.hold_expires_at, b.id
             FROM bookings b
             WHERE b.organisation_id = organisation AND b.staff_id = staff[1] AND b.status = ANY (statuses)
               AND b.starts_at < starts_before AND b.blocked_until > blocked_after AND b.starts_at > starts_after
               AND (excluded IS NULL OR b.id <> excluded);
         ELSE
           RETURN QUERY SELECT b.staff_id, b.status, b.starts_at, b.ends_at, b.blocked_until, b.hold_expires_at, b.id
             FROM bookings b
             WHERE b.organisation_id = organisation AND b.staff_id = ANY (staff) AND b.status = ANY (statuses)
               AND b.starts_at < starts_before AND b.blocked_until > blocked_after AND b.starts_at > starts_after
               AND (excluded IS NULL OR b.id <> excluded);
         END IF;
       END $$`,
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

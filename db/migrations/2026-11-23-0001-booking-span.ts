import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * A booking blocks its staff member for at most a day (starts_at to blocked_until), and the overlap
 * guard uses that bound: a live booking that overlaps a new one must start less than a day before the
 * new one starts, so the guard's index range scan covers a day of the staff member's bookings instead
 * of their whole history (it grew with every booking ever taken).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

/** 24 hours in milliseconds; frozen here, whatever the code's constant becomes. */
const MAX_SPAN_MS = 86_400_000;
const LIVE = `('pending_payment','pending_confirmation','confirmed')`;

export async function up(db: AnyDb): Promise<void> {
  if (isPostgres(db)) {
    await upPostgres(db);
    return;
  }
  for (const [operation, columns] of [
    ['insert', 'INSERT'],
    ['update', 'UPDATE OF starts_at, blocked_until'],
  ] as const) {
    await sql
      .raw(
        `CREATE TRIGGER bookings_span_limit_${operation} BEFORE ${columns} ON bookings
         WHEN NEW.blocked_until - NEW.starts_at > ${MAX_SPAN_MS} OR NEW.blocked_until < NEW.starts_at
         BEGIN SELECT RAISE(ABORT, 'booking_span'); END`,
      )
      .execute(db);
  }

  const overlap = `
    SELECT RAISE(ABORT, 'booking_overlap')
    WHERE EXISTS (
      SELECT 1 FROM bookings b
      WHERE b.organisation_id = NEW.organisation_id
        AND b.staff_id = NEW.staff_id
        AND b.starts_at > NEW.starts_at - ${MAX_SPAN_MS}
        AND b.starts_at < NEW.blocked_until
        AND NEW.starts_at < b.blocked_until
        AND b.id <> NEW.id
        AND b.status IN ${LIVE}
        AND (b.status = 'confirmed' OR b.hold_expires_at IS NULL OR b.hold_expires_at > NEW.updated_at)
    );`;
  await sql.raw('DROP TRIGGER bookings_no_overlap_insert').execute(db);
  await sql.raw('DROP TRIGGER bookings_no_overlap_update').execute(db);
  await sql
    .raw(
      `CREATE TRIGGER bookings_no_overlap_insert BEFORE INSERT ON bookings
       WHEN NEW.status IN ${LIVE}
       BEGIN ${overlap} END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER bookings_no_overlap_update BEFORE UPDATE OF staff_id, starts_at, blocked_until, status ON bookings
       WHEN NEW.status IN ${LIVE}
       BEGIN ${overlap} END`,
    )
    .execute(db);
}

/** PostgreSQL can add a CHECK to an existing table, and replaces the guard's function in place. */
async function upPostgres(db: AnyDb): Promise<void> {
  await sql
    .raw(
      `ALTER TABLE bookings ADD CONSTRAINT bookings_span
       CHECK (blocked_until - starts_at <= ${MAX_SPAN_MS} AND blocked_until >= starts_at)`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE OR REPLACE FUNCTION bookings_refuse_overlap() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.status IN ${LIVE} AND EXISTS (
           SELECT 1 FROM bookings b
           WHERE b.organisation_id = NEW.organisation_id
             AND b.staff_id = NEW.staff_id
             AND b.starts_at > NEW.starts_at - ${MAX_SPAN_MS}
             AND b.starts_at < NEW.blocked_until
             AND NEW.starts_at < b.blocked_until
             AND b.id <> NEW.id
             AND b.status IN ${LIVE}
             AND (b.status = 'confirmed' OR b.hold_expires_at IS NULL OR b.hold_expires_at > NEW.updated_at)
         ) THEN
           RAISE EXCEPTION 'booking_overlap';
         END IF;
         RETURN NEW;
       END $$`,
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

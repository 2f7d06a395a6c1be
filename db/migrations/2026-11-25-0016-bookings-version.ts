import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * organisations.bookings_version: bumped by database triggers whenever a booking row changes in a way
 * availability can see (a booking made, moved, cancelled, confirmed or expired; a hold's expiry
 * changed). Together with catalogue_version it keys the availability answers every process keeps
 * (src/app/availability-cache.ts): whoever writes, on whichever instance, the next read of the
 * versions misses the old answers. The bump is a row update inside the writer's own transaction, so
 * it commits (or rolls back) with the booking.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

/** The columns of a booking that availability reads (src/data/availability-repository.ts). */
const SEEN = ['staff_id', 'status', 'starts_at', 'ends_at', 'blocked_until', 'hold_expires_at'] as const;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('organisations')
    .addColumn('bookings_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const changed = SEEN.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
  if (isPostgres(db)) {
    await sql
      .raw(
        `CREATE FUNCTION bump_bookings_version() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           UPDATE organisations SET bookings_version = bookings_version + 1
           WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.organisation_id ELSE NEW.organisation_id END;
           RETURN NULL;
         END $$`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER bookings_bump_version_insert_delete AFTER INSERT OR DELETE ON bookings
         FOR EACH ROW EXECUTE FUNCTION bump_bookings_version()`,
      )
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER bookings_bump_version_update AFTER UPDATE ON bookings
         FOR EACH ROW WHEN (${changed.replaceAll(' IS NOT ', ' IS DISTINCT FROM ')} OR OLD.organisation_id <> NEW.organisation_id)
         EXECUTE FUNCTION bump_bookings_version()`,
      )
      .execute(db);
    return;
  }
  for (const [operation, row, when] of [
    ['insert', 'NEW', ''],
    ['delete', 'OLD', ''],
    ['update', 'NEW', `WHEN ${changed}`],
  ] as const) {
    await sql
      .raw(
        `CREATE TRIGGER bookings_bump_version_${operation} AFTER ${operation.toUpperCase()} ON bookings ${when}
         BEGIN UPDATE organisations SET bookings_version = bookings_version + 1 WHERE id = ${row}.organisation_id; END`,
      )
      .execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

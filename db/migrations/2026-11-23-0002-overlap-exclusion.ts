import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL's last guard against double booking across instances: an exclusion constraint over the
 * live bookings of each staff member, on the time range each blocks (start to the end of its last
 * buffer). Unlike the trigger, it sees rows other transactions have inserted but not yet committed,
 * so two instances racing for one slot cannot both commit: the second waits for the first and fails
 * with exclusion_violation, which the booking path answers as 409 conflict.
 *
 * A constraint cannot read the clock, so a pending hold counts as live here until its status is
 * written as expired; the booking paths write that (lazy expiry) before they book over a lapsed hold.
 *
 * SQLite has a single writer: BEGIN IMMEDIATE serialises every booking, and the triggers see all
 * committed rows, so it needs nothing more.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

const LIVE = `('pending_payment','pending_confirmation','confirmed')`;

export async function up(db: AnyDb): Promise<void> {
  if (!isPostgres(db)) return;
  // text equality inside a GiST index needs btree_gist (shipped with PostgreSQL's contrib modules).
  await sql.raw('CREATE EXTENSION IF NOT EXISTS btree_gist').execute(db);
  await sql
    .raw(
      `ALTER TABLE bookings ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
         organisation_id WITH =,
         staff_id WITH =,
         tstzrange(to_timestamp(starts_at / 1000.0), to_timestamp(blocked_until / 1000.0), '[)') WITH &&
       ) WHERE (status IN ${LIVE})`,
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * Every table carries its organisation, and on PostgreSQL every key of organisation data includes it,
 * so the data can be distributed by organisation (Citus: create_distributed_table(t, 'organisation_id')
 * wants each unique key of a distributed table to contain the distribution column).
 *
 * - The cursor secret moves from the instance-wide `instance_settings` to `cursor_secrets`, one per
 *   organisation, generated on first use. The old table goes; cursors signed with the old secret
 *   (at most an hour old) are refused as invalid, and the caller starts the listing again.
 * - PostgreSQL's `rate_limit_counters` gains `organisation_id`. Its rows are scratch data (a minute's
 *   counts), so the table is made anew rather than converted.
 * - PostgreSQL: each primary key gains `organisation_id` as its last column. Last, so that the index
 *   still leads with the row's own key and serves the lookups made by id alone (the public checkout
 *   page, catalogue import); the unique (`organisation_id`, id) keys beside them, which the composite
 *   foreign keys point at, stay as they are.
 *
 * `organisations` (keyed by its id) and `api_keys` (found by key hash before the organisation is known)
 * keep their keys: they are the small reference tables of a distributed deployment.
 *
 * SQLite runs on one machine: it gets the new cursor-secret table and keeps its keys, with one
 * addition: a unique index on booking_fees (organisation_id, booking_id, kind), the columns of the
 * new PostgreSQL key, so that recording a fee names the same ON CONFLICT target on both.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

/** The primary keys that gain organisation_id, as they were. */
const PRIMARY_KEYS: Record<string, { constraint: string; columns: string[] }> = {
  locations: { constraint: 'locations_pkey', columns: ['id'] },
  location_closures: { constraint: 'location_closures_pk', columns: ['location_id', 'date'] },
  services: { constraint: 'services_pkey', columns: ['id'] },
  service_locations: { constraint: 'service_locations_pk', columns: ['service_id', 'location_id'] },
  staff: { constraint: 'staff_pkey', columns: ['id'] },
  staff_services: { constraint: 'staff_services_pk', columns: ['staff_id', 'service_id'] },
  staff_locations: { constraint: 'staff_locations_pk', columns: ['staff_id', 'location_id'] },
  staff_working_hours: {
    constraint: 'staff_working_hours_pk',
    columns: ['staff_id', 'location_id', 'weekday', 'start_minute'],
  },
  staff_time_off: { constraint: 'staff_time_off_pkey', columns: ['id'] },
  clients: { constraint: 'clients_pkey', columns: ['id'] },
  bookings: { constraint: 'bookings_pkey', columns: ['id'] },
  booking_services: { constraint: 'booking_services_pk', columns: ['booking_id', 'position'] },
  checkout_sessions: { constraint: 'checkout_sessions_pkey', columns: ['id'] },
  booking_fees: { constraint: 'booking_fees_pk', columns: ['booking_id', 'kind'] },
  booking_events: { constraint: 'booking_events_pk', columns: ['booking_id', 'seq'] },
};

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('cursor_secrets')
    .addColumn('organisation_id', 'text', (c) => c.primaryKey().notNull().references('organisations.id'))
    .addColumn('secret', 'text', (c) => c.notNull().check(sql`length(secret) >= 32`))
    .execute();
  await db.schema.dropTable('instance_settings').execute();

  if (!isPostgres(db)) {
    await db.schema
      .createIndex('booking_fees_org_key')
      .on('booking_fees')
      .columns(['organisation_id', 'booking_id', 'kind'])
      .unique()
      .execute();
    return;
  }

  await db.schema.dropTable('rate_limit_counters').execute();
  await sql
    .raw(
      `CREATE UNLOGGED TABLE rate_limit_counters (
         organisation_id text NOT NULL,
         key text NOT NULL,
         window_end bigint NOT NULL,
         count integer NOT NULL,
         PRIMARY KEY (organisation_id, key, window_end)
       )`,
    )
    .execute(db);

  for (const [table, key] of Object.entries(PRIMARY_KEYS)) {
    const columns = [...key.columns, 'organisation_id'].map((c) => `"${c}"`).join(', ');
    await sql
      .raw(
        `ALTER TABLE ${table} DROP CONSTRAINT ${key.constraint},
           ADD CONSTRAINT ${key.constraint} PRIMARY KEY (${columns})`,
      )
      .execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

import { type Kysely, sql } from 'kysely';

/**
 * The waitlist (design.md 9.4):
 *
 * - `locations.waitlist_offer_minutes`: how long a freed time is held for the entry it is offered to
 *   (the catalogue's policy, default 15).
 * - `waitlist_entries`: who waits for what (services, an optional staff member, local dates, parts of
 *   the day), in joining order (`created_at`, then `id`, time-ordered). status waiting | booked | left
 *   | ended (past to_date); `booking_id` is the offer that booked it.
 * - `waitlist_offers`: every offer made, one per hold: an offer is a pending_confirmation booking whose
 *   first step is the customer's claim, so availability, the slot checks and the hold sweeper treat it
 *   as every other hold. An entry is not offered again a time it let go (same staff and start).
 * - `waitlist_rescans`: a location whose time may have freed (a cancellation, a move, a lapsed hold, an
 *   import), written in the transaction of that change; the waitlist worker takes them and offers.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('locations')
    .addColumn('waitlist_offer_minutes', 'integer', (c) =>
      c.notNull().defaultTo(15).check(sql`waitlist_offer_minutes between 1 and 1440`),
    )
    .execute();

  await db.schema
    .createTable('waitlist_entries')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('service_ids', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text')
    .addColumn('from_date', 'text', (c) => c.notNull())
    .addColumn('to_date', 'text', (c) => c.notNull())
    .addColumn('times', 'text')
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('waiting', 'booked', 'left', 'ended')`),
    )
    .addColumn('booking_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addPrimaryKeyConstraint('waitlist_entries_pk', ['id', 'organisation_id'])
    .execute();
  // The worker's question (a location's waiting entries in joining order) and the REST list's.
  await db.schema
    .createIndex('waitlist_entries_location')
    .on('waitlist_entries')
    .columns(['organisation_id', 'location_id', 'status', 'created_at', 'id'])
    .execute();
  // The entries that may have passed their last date, which the worker ends.
  await db.schema
    .createIndex('waitlist_entries_last_date')
    .on('waitlist_entries')
    .columns(['status', 'to_date'])
    .execute();
  await db.schema
    .createIndex('waitlist_entries_organisation')
    .on('waitlist_entries')
    .columns(['organisation_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('waitlist_offers')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('entry_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('waitlist_offers_pk', ['organisation_id', 'booking_id'])
    .execute();
  await db.schema
    .createIndex('waitlist_offers_entry')
    .on('waitlist_offers')
    .columns(['organisation_id', 'entry_id'])
    .execute();

  await db.schema
    .createTable('waitlist_rescans')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('waitlist_rescans_pk', ['organisation_id', 'location_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

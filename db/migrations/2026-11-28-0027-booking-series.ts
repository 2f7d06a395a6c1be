import type { Kysely } from 'kysely';

/**
 * Recurring appointments (design.md 9.5):
 *
 * - `booking_series`: one row per series booked at once (`every_weeks`, `count` as asked), so a
 *   client's usual interval can be told and a series listed with its rule.
 * - `bookings.series_id`: the series an occurrence belongs to, null for a single booking. Each
 *   occurrence stays an ordinary booking (its own status, deposit, fees and policy window); the
 *   index serves `GET /v1/bookings?series_id=` and "this and the following" changes.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('booking_series')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('every_weeks', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('booking_series_pk', ['id', 'organisation_id'])
    .execute();
  await db.schema.alterTable('bookings').addColumn('series_id', 'text').execute();
  await db.schema
    .createIndex('bookings_series')
    .on('bookings')
    .columns(['organisation_id', 'series_id', 'starts_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

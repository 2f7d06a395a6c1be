import { type Kysely, sql } from 'kysely';

/**
 * Calendar feeds (design.md 9.6):
 *
 * - `staff_calendar_feeds`: a staff member's private iCalendar feed, GET /ical/{token}.ics. Only the
 *   SHA-256 of the token is kept (as for API keys): the token is a capability, shown once. Revoked
 *   feeds stay listed (revoked_at) so the console can say when.
 * - `staff_busy_calendars`: the external calendars of the catalogue's `busy_calendars[]`, with what
 *   the refresher needs (when next due, the validators of the last good copy) and what the console
 *   shows (last success, last error). Written by the import, refreshed in the background only.
 * - `staff_busy_blocks`: the busy intervals of each calendar's last good copy, expanded (recurrences,
 *   zones) over a bounded window; availability reads them beside time off. A change to them bumps
 *   the organisation's catalogue_version in the refresher's own transaction (one bump per changed
 *   calendar, not one per row), which drops the availability answers computed without them.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('staff_calendar_feeds')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    // Every key holds organisation_id (docs/scaling-out.md): a token is 256 random bits, unique
    // without a constraint across organisations; its lookup (by the hash alone) has an index of its own.
    .addPrimaryKeyConstraint('staff_calendar_feeds_pk', ['organisation_id', 'id'])
    .addUniqueConstraint('staff_calendar_feeds_token', ['organisation_id', 'token_hash'])
    .addForeignKeyConstraint('staff_calendar_feeds_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('staff_calendar_feeds_token_hash')
    .on('staff_calendar_feeds')
    .columns(['token_hash'])
    .execute();
  await db.schema
    .createIndex('staff_calendar_feeds_staff')
    .on('staff_calendar_feeds')
    .columns(['organisation_id', 'staff_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('staff_busy_calendars')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('next_fetch_at', 'bigint', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_success_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .addColumn('busy_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('parsed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addForeignKeyConstraint('staff_busy_calendars_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .addPrimaryKeyConstraint('staff_busy_calendars_pk', ['organisation_id', 'id'])
    .addUniqueConstraint('staff_busy_calendars_url', ['organisation_id', 'staff_id', 'url'])
    .execute();
  // The refresher's question: which calendars are due.
  await db.schema
    .createIndex('staff_busy_calendars_due')
    .on('staff_busy_calendars')
    .columns(['next_fetch_at'])
    .execute();

  await db.schema
    .createTable('staff_busy_blocks')
    .addColumn('calendar_id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('staff_busy_blocks_order', sql`starts_at < ends_at`)
    .addForeignKeyConstraint(
      'staff_busy_blocks_calendar',
      ['organisation_id', 'calendar_id'],
      'staff_busy_calendars',
      ['organisation_id', 'id'],
    )
    .execute();
  // Availability's question: a staff member's blocks overlapping a window (as staff_time_off). The
  // index holds the answer's columns too, so the question never reads the table.
  await db.schema
    .createIndex('staff_busy_blocks_staff')
    .on('staff_busy_blocks')
    .columns(['organisation_id', 'staff_id', 'starts_at', 'ends_at'])
    .execute();
  await db.schema
    .createIndex('staff_busy_blocks_calendar')
    .on('staff_busy_blocks')
    .columns(['organisation_id', 'calendar_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

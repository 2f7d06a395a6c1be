import type { Kysely } from 'kysely';

/**
 * `staff_busy_calendars.copy_note`: what the last good copy's read said of itself (busy times read only
 * until a date, a file too costly to read further), kept apart from `last_error`. A failed fetch
 * overwrites `last_error`; the 304 after it is that same copy again, and gives its note back from here.
 * Filled from `last_error` where it is still the copy's own (written with it, at its parsed_at).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('staff_busy_calendars').addColumn('copy_note', 'text').execute();
  await db
    .updateTable('staff_busy_calendars')
    .set((eb) => ({ copy_note: eb.ref('last_error') }))
    .whereRef('last_error_at', '=', 'parsed_at')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

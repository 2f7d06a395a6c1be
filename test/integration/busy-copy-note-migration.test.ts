import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Migration 0034: a busy calendar's copy keeps its own note (copy_note), so a 304 after a failed fetch
 * shows it again. A note older versions stored is in last_error, dated as the copy (last_error_at =
 * parsed_at); the migration takes it from there, and takes no failure's reason for one.
 */
const t0 = Date.parse('2026-11-23T09:00:00Z');
const empty = emptyDatabasePerTest('busy-copy-note-');

describe('migration 0034: the busy copy note', () => {
  it("keeps the note of a copy read short, and takes no failure's reason for a note", async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-11-30-0033-payment-calls', t0);
    const ids = await catalogueIds(db);
    const calendar = (id: string, lastError: string | null, lastErrorAt: number | null) => ({
      id,
      organisation_id: ids.organisation,
      staff_id: ids.staff.ana!,
      url: `https://calendar.example.com/${id}.ics`,
      next_fetch_at: t0,
      parsed_at: t0,
      last_error: lastError,
      last_error_at: lastErrorAt,
      created_at: t0,
    });
    const note = 'busy times read only until 2028-11-24: more than 20000 busy times in the window kept';
    await db
      .insertInto('staff_busy_calendars')
      .values([
        calendar('short', note, t0),
        calendar('failed', 'the server answered 503', t0 + 60_000),
        calendar('whole', null, null),
      ])
      .execute();

    expect((await migrateToLatest(db)).applied[0]).toBe('2026-11-30-0034-busy-copy-note');

    const rows = await db
      .selectFrom('staff_busy_calendars')
      .select(['id', 'copy_note', 'last_error'])
      .execute();
    expect(rows.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'failed', copy_note: null, last_error: 'the server answered 503' },
      { id: 'short', copy_note: note, last_error: note },
      { id: 'whole', copy_note: null, last_error: null },
    ]);
  });
});

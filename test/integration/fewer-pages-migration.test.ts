import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { newBookingPage } from '../../src/app/booking-page-token.ts';
import { eventRow } from '../../src/data/booking-repository.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest, onPostgres } from '../helpers/temp-database.ts';

/**
 * Migration 0038 (SQLite): booking_services, booking_events and booking_pages become WITHOUT ROWID
 * tables and `bookings_series` covers only the bookings of a series, so a booking writes four b-trees
 * fewer. Every row, constraint and trigger stays.
 */
const t0 = Date.parse('2026-11-23T09:00:00Z');
const empty = emptyDatabasePerTest('fewer-pages-');

describe.skipIf(onPostgres)('migration 0038: fewer pages per booking', () => {
  it('keeps every row, key and trigger of the tables it makes anew', async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-12-01-0037-refund-refusals', t0);
    const ids = await catalogueIds(db);
    const booking = bookingRow({
      organisationId: ids.organisation,
      locationId: ids.locations.soho!,
      staffId: ids.staff.ana!,
      clientId: ids.jo,
      startsAt: t0,
      endsAt: t0 + 45 * 60_000,
    });
    const page = newBookingPage(ids.organisation, booking.id, t0);
    await db.insertInto('bookings').values(booking).execute();
    const segment = {
      organisation_id: ids.organisation,
      booking_id: booking.id,
      position: 0,
      service_id: ids.services.cut!,
      starts_at: booking.starts_at,
      ends_at: booking.ends_at,
      duration_minutes: 45,
      buffer_after_minutes: 0,
      price_minor: 4000,
      deposit_minor: null,
    };
    await db.insertInto('booking_services').values(segment).execute();
    const event = eventRow(
      {
        organisationId: ids.organisation,
        bookingId: booking.id,
        from: null,
        to: 'confirmed',
        actor: 'api',
        at: t0,
      },
      1,
    );
    await db.insertInto('booking_events').values(event).execute();
    await db.insertInto('booking_pages').values(page).execute();

    expect((await migrateToLatest(db)).applied[0]).toBe('2026-12-02-0038-fewer-pages-per-booking');

    expect(await db.selectFrom('booking_services').selectAll().execute()).toEqual([segment]);
    expect(await db.selectFrom('booking_events').selectAll().execute()).toEqual([event]);
    expect(await db.selectFrom('booking_pages').selectAll().execute()).toEqual([page]);
    const definitions = await sql<{ name: string; sql: string }>`
      SELECT name, sql FROM sqlite_master WHERE name IN ('booking_services', 'booking_events', 'booking_pages', 'bookings_series')`.execute(
      db,
    );
    for (const { name, sql: text } of definitions.rows) {
      if (name === 'bookings_series') expect(text).toMatch(/where "series_id" is not null$/);
      else expect(text, name).toMatch(/ WITHOUT ROWID$/);
    }
    // Still append-only, still keyed, still pointing at their booking.
    await expect(db.updateTable('booking_events').set({ actor: 'someone else' }).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(db.insertInto('booking_services').values(segment).execute()).rejects.toThrow(/UNIQUE/);
    await expect(
      db
        .insertInto('booking_pages')
        .values({ ...page, token: 'another token', booking_id: 'no such booking' })
        .execute(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });
});

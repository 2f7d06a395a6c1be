import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/data/catalogue-import.ts';
import { openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { BookingsTable } from '../../src/data/tables.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { createTempDatabase, type TempDatabase } from '../helpers/temp-database.ts';

/** The rules the database itself holds, whatever the code above it does. */
let t: TempDatabase;
let ids: { org: string; location: string; staff: string; client: string };
const hour = 3_600_000;
const t0 = Date.parse('2026-11-23T09:00:00Z');

beforeEach(async () => {
  t = await createTempDatabase();
  await importCatalogue(t.db, smallCatalogue(), t0);
  const catalogue = await catalogueIds(t.db);
  ids = {
    org: catalogue.organisation,
    location: catalogue.locations.soho!,
    staff: catalogue.staff.ana!,
    client: catalogue.jo,
  };
});
afterEach(async () => {
  await t.dispose();
});

function booking(overrides: Partial<BookingsTable> = {}): BookingsTable {
  return bookingRow(
    {
      organisationId: ids.org,
      locationId: ids.location,
      staffId: ids.staff,
      clientId: ids.client,
      startsAt: t0 + 24 * hour,
      endsAt: t0 + 25 * hour,
      blockedUntil: t0 + 25 * hour + 15 * 60_000,
    },
    { created_at: t0, updated_at: t0, ...overrides },
  );
}

const insert = (row: BookingsTable) => t.db.insertInto('bookings').values(row).execute();

describe('SQLite settings', () => {
  it('runs in WAL mode with foreign keys, FULL synchronous and a busy timeout', async () => {
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`PRAGMA ${name}`).execute(t.db)).rows[0] as Record<string, unknown>)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('foreign_keys')).toBe(1);
    expect(await pragma('synchronous')).toBe(2);
    expect(await pragma('busy_timeout')).toBe(5000);
  });

  it('migrates once; a second run changes nothing', async () => {
    expect((await migrateToLatest(t.db)).applied).toEqual([]);
  });

  it('leaves nothing behind when a migration fails', async () => {
    const other = openDatabase(`sqlite:${t.dir}/half.sqlite`);
    try {
      await other.db.schema.createTable('locations').addColumn('id', 'text').execute();
      await expect(migrateToLatest(other.db)).rejects.toThrow(/already exists/);
      const tables = await sql<{
        name: string;
      }>`select name from sqlite_master where type = 'table' order by name`.execute(other.db);
      expect(tables.rows.map((r) => r.name).filter((n) => !n.startsWith('kysely_'))).toEqual(['locations']);
    } finally {
      await other.close();
    }
  });
});

describe('uniqueness', () => {
  it('refuses a second location with the same slug in an organisation', async () => {
    const location = await t.db
      .selectFrom('locations')
      .selectAll()
      .where('id', '=', ids.location)
      .executeTakeFirstOrThrow();
    await expect(
      t.db
        .insertInto('locations')
        .values({ ...location, id: randomUUID(), ref: 'other' })
        .execute(),
    ).rejects.toThrow(/UNIQUE/);
  });

  it('refuses a second client with the same phone or e-mail in an organisation', async () => {
    const client = await t.db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', ids.client)
      .executeTakeFirstOrThrow();
    await expect(
      t.db
        .insertInto('clients')
        .values({ ...client, id: randomUUID(), ref: null, email: null })
        .execute(),
    ).rejects.toThrow(/UNIQUE/);
    await expect(
      t.db
        .insertInto('clients')
        .values({ ...client, id: randomUUID(), ref: null, phone: null })
        .execute(),
    ).rejects.toThrow(/UNIQUE/);
  });

  it('refuses a duplicate booking reference and an unknown status', async () => {
    await insert(booking({ reference: 'AC-ABCDEF' }));
    await expect(
      insert(
        booking({
          reference: 'AC-ABCDEF',
          starts_at: t0 + 48 * hour,
          ends_at: t0 + 49 * hour,
          blocked_until: t0 + 49 * hour,
        }),
      ),
    ).rejects.toThrow(/UNIQUE/);
    await expect(
      insert(
        booking({
          status: 'maybe' as never,
          starts_at: t0 + 72 * hour,
          ends_at: t0 + 73 * hour,
          blocked_until: t0 + 73 * hour,
        }),
      ),
    ).rejects.toThrow(/CHECK/);
  });
});

describe('the double-booking guard', () => {
  it('refuses a live booking overlapping another of the same staff member, buffer included', async () => {
    await insert(booking());
    await expect(
      insert(booking({ starts_at: t0 + 25 * hour, ends_at: t0 + 26 * hour, blocked_until: t0 + 26 * hour })),
    ).rejects.toThrow(/booking_overlap/);
    // Starting exactly when the buffer ends is fine.
    await insert(
      booking({
        starts_at: t0 + 25 * hour + 15 * 60_000,
        ends_at: t0 + 26 * hour,
        blocked_until: t0 + 26 * hour,
      }),
    );
  });

  it('ignores cancelled bookings and holds that have lapsed', async () => {
    await insert(booking({ status: 'cancelled', cancelled_at: t0 }));
    await insert(
      booking({
        status: 'pending_payment',
        hold_expires_at: t0 + 30 * 60_000,
        deposit_minor: 2000,
        deposit_status: 'pending',
      }),
    );
    // The hold has lapsed by the time of this write: the slot is free again.
    const later = t0 + hour;
    await insert(booking({ created_at: later, updated_at: later }));
  });

  it('catches an overlap with a booking that started the better part of a day before', async () => {
    // The guard scans only bookings that start less than a day before the new one; the longest booking
    // allowed (24 h, buffer included) must still be caught.
    await insert(booking({ starts_at: t0, ends_at: t0 + 23 * hour, blocked_until: t0 + 24 * hour }));
    await expect(
      insert(
        booking({
          starts_at: t0 + 24 * hour - 60_000,
          ends_at: t0 + 25 * hour,
          blocked_until: t0 + 25 * hour,
        }),
      ),
    ).rejects.toThrow(/booking_overlap/);
    await insert(
      booking({ starts_at: t0 + 24 * hour, ends_at: t0 + 25 * hour, blocked_until: t0 + 25 * hour }),
    );
  });

  it('refuses a booking blocking its staff member for more than a day, or ending before it starts', async () => {
    await expect(
      insert(booking({ starts_at: t0, ends_at: t0 + 24 * hour, blocked_until: t0 + 24 * hour + 60_000 })),
    ).rejects.toThrow(/booking_span/);
    await expect(insert(booking({ starts_at: t0, ends_at: t0, blocked_until: t0 - 60_000 }))).rejects.toThrow(
      /booking_span/,
    );
    const row = booking();
    await insert(row);
    await expect(
      t.db
        .updateTable('bookings')
        .set({ blocked_until: row.starts_at + 25 * hour })
        .where('id', '=', row.id)
        .execute(),
    ).rejects.toThrow(/booking_span/);
  });

  it('guards reschedules (updates) too', async () => {
    await insert(booking());
    const second = booking({
      starts_at: t0 + 30 * hour,
      ends_at: t0 + 31 * hour,
      blocked_until: t0 + 31 * hour,
    });
    await insert(second);
    await expect(
      t.db
        .updateTable('bookings')
        .set({ starts_at: t0 + 24 * hour + 30 * 60_000 })
        .where('id', '=', second.id)
        .execute(),
    ).rejects.toThrow(/booking_overlap/);
  });
});

describe('the booking event log', () => {
  it('is append-only', async () => {
    const row = booking();
    await insert(row);
    await t.db
      .insertInto('booking_events')
      .values({
        organisation_id: ids.org,
        booking_id: row.id,
        seq: 1,
        from_status: null,
        to_status: 'confirmed',
        actor: 'test',
        occurred_at: t0,
        details: null,
      })
      .execute();
    await expect(t.db.updateTable('booking_events').set({ actor: 'someone else' }).execute()).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.deleteFrom('booking_events').execute()).rejects.toThrow(/append-only/);
  });
});

describe('a confirmed booking', () => {
  it('blocks its slot even when an old hold expiry is still on the row', async () => {
    await insert(booking({ status: 'confirmed', hold_expires_at: t0 - hour }));
    await expect(insert(booking({ created_at: t0 + hour, updated_at: t0 + hour }))).rejects.toThrow(
      /booking_overlap/,
    );
  });
});

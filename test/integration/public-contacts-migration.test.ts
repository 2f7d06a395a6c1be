import { type Insertable, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { OutboxTable } from '../../src/data/tables.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRowBeforeSeries } from '../helpers/booking-row.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest, onPostgres } from '../helpers/temp-database.ts';

/**
 * Migration 0023: clients gain contact_proven, and their phones and e-mails are unique among the
 * clients on file only (on SQLite the table is made anew while bookings and messages point at it);
 * the outbox takes verification_code messages (SQLite: anew); organisations gain the public page's
 * policies with their defaults. A populated database keeps every row and every rule.
 */
const hour = 3_600_000;
const t0 = Date.parse('2026-11-23T09:00:00Z');

const empty = emptyDatabasePerTest('public-contacts-');

describe('migration 0023: public contacts', () => {
  it('keeps clients, bookings and messages, on file, with every rule; an unproven record may share a phone', async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-11-27-0022-outbox-sequence', t0);
    const ids = await catalogueIds(db);
    const booking = bookingRowBeforeSeries(
      {
        organisationId: ids.organisation,
        locationId: ids.locations.soho!,
        staffId: ids.staff.ana!,
        clientId: ids.jo,
        startsAt: t0 + 48 * hour,
        endsAt: t0 + 49 * hour,
        blockedUntil: t0 + 49 * hour,
      },
      { created_at: t0, updated_at: t0 },
    );
    await db.insertInto('bookings').values(booking).execute();
    // biome-ignore lint/suspicious/noExplicitAny: the table as 0022 had it.
    await (db as any)
      .insertInto('outbox')
      .values({
        id: '00000000-0000-7000-8000-000000000001',
        organisation_id: ids.organisation,
        booking_id: booking.id,
        reference: booking.reference,
        channel: 'sms',
        recipient: '+447911123456',
        kind: 'confirmed',
        status: 'sent',
        attempts: 1,
        due_at: t0,
        body: '{"text":"Booked"}',
        created_at: t0,
        sent_at: t0 + 1000,
      })
      .execute();
    const clientsBefore = await db.selectFrom('clients').selectAll().orderBy('id').execute();

    expect((await migrateToLatest(db)).applied).toContain('2026-11-28-0023-public-contacts');

    const clientsAfter = await db.selectFrom('clients').selectAll().orderBy('id').execute();
    expect(clientsAfter).toEqual(clientsBefore.map((c) => ({ ...c, contact_proven: 1 })));
    expect(await db.selectFrom('bookings').select('client_id').execute()).toEqual([{ client_id: ids.jo }]);
    expect(await db.selectFrom('outbox').select(['seq', 'kind', 'body']).execute()).toEqual([
      { seq: 1, kind: 'confirmed', body: '{"text":"Booked"}' },
    ]);
    const organisation = await db
      .selectFrom('organisations')
      .select([
        'public_verification',
        'public_holds_per_contact',
        'public_bookings_per_contact_per_day',
        'public_attempts_per_address_per_hour',
        'sms_countries',
      ])
      .executeTakeFirstOrThrow();
    expect(organisation).toEqual({
      public_verification: 'code',
      public_holds_per_contact: 2,
      public_bookings_per_contact_per_day: 3,
      public_attempts_per_address_per_hour: 10,
      sms_countries: '',
    });

    const client = (id: string, contactProven: 0 | 1, phone = '+447911123456') =>
      db
        .insertInto('clients')
        .values({
          id,
          organisation_id: ids.organisation,
          ref: null,
          first_name: 'Mallory',
          last_name: 'Stranger',
          phone,
          email: null,
          marketing_consent: 0,
          created_at: t0,
          updated_at: t0,
          contact_proven: contactProven,
        })
        .execute();
    // Jo's phone, twice more, unproven: allowed; on file: refused, as before.
    await client('00000000-0000-4000-8000-0000000000a1', 0);
    await client('00000000-0000-4000-8000-0000000000a2', 0);
    await expect(client('00000000-0000-4000-8000-0000000000a3', 1)).rejects.toThrow();
    await expect(client('00000000-0000-4000-8000-0000000000a4', 1, '447911000000')).rejects.toThrow();
    await expect(client('00000000-0000-4000-8000-0000000000a5', 2 as 1, '+447400123456')).rejects.toThrow();
    // A client a booking points at cannot go; the outbox takes the new kind and still refuses others.
    await expect(db.deleteFrom('clients').where('id', '=', ids.jo).execute()).rejects.toThrow();
    const message = (kind: string) =>
      db
        .insertInto('outbox')
        .values({
          id: `00000000-0000-7000-8000-00000000000${kind.length % 10}`,
          organisation_id: ids.organisation,
          booking_id: booking.id,
          reference: booking.reference,
          channel: 'email',
          recipient: 'jo@example.com',
          kind,
          status: 'pending',
          attempts: 0,
          due_at: t0,
          created_at: t0,
        } as Insertable<OutboxTable>)
        .execute();
    await message('verification_code');
    await expect(message('fax_cover')).rejects.toThrow();

    if (!onPostgres) {
      const broken = await sql`PRAGMA foreign_key_check`.execute(db);
      expect(broken.rows).toEqual([]);
      const references = await sql<{ table: string }>`
        select "table" from pragma_foreign_key_list('bookings') where "table" = 'clients'`.execute(db);
      expect(references.rows.length).toBe(2);
    }
  });
});

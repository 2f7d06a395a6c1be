import { type Insertable, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { insertOutboxMessages, listOutboxOf } from '../../src/data/outbox-repository.ts';
import type { OutboxTable } from '../../src/data/tables.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRowBeforeSeries } from '../helpers/booking-row.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest, onPostgres } from '../helpers/temp-database.ts';

/**
 * Migration 0022 keys the outbox by `seq` (on SQLite the rowid) instead of (id, organisation_id), and
 * drops outbox_organisation: a database with messages in it keeps every one, column for column,
 * numbered in the order they were written, and new messages come after them.
 */
const hour = 3_600_000;
const t0 = Date.parse('2026-11-23T09:00:00Z');

const empty = emptyDatabasePerTest('outbox-sequence-');

describe('migration 0022: the outbox keyed by the order its messages were written in', () => {
  it('keeps every message, numbers them by created_at and id, and numbers new ones after them', async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-11-25-0021-staff-accounts', t0);
    const catalogue = await catalogueIds(db);
    const organisationId = catalogue.organisation;
    const booking = bookingRowBeforeSeries(
      {
        organisationId,
        locationId: catalogue.locations.soho!,
        staffId: catalogue.staff.ana!,
        clientId: catalogue.jo,
        startsAt: t0 + 48 * hour,
        endsAt: t0 + 49 * hour,
        blockedUntil: t0 + 49 * hour,
      },
      { created_at: t0, updated_at: t0 },
    );
    await db.insertInto('bookings').values(booking).execute();
    const message = (id: string, createdAt: number, extra: Record<string, unknown> = {}) => ({
      id,
      organisation_id: organisationId,
      booking_id: booking.id,
      reference: booking.reference,
      channel: 'sms',
      recipient: '+447700900123',
      kind: 'confirmed',
      status: 'pending',
      attempts: 0,
      due_at: createdAt,
      claimed_by: null,
      lease_until: null,
      provider_id: null,
      last_error: null,
      body: null,
      created_at: createdAt,
      sent_at: null,
      ...extra,
    });
    // Written out of order: the second-oldest first, then two of one instant (ordered by id), then the
    // oldest, one of them delivered (every column must come through).
    const before = [
      message('00000000-0000-7000-8000-000000000002', t0 + 2 * hour),
      message('00000000-0000-7000-8000-00000000000b', t0 + 3 * hour, {
        kind: 'reminder',
        due_at: t0 + 24 * hour,
      }),
      message('00000000-0000-7000-8000-00000000000a', t0 + 3 * hour, {
        channel: 'email',
        recipient: 'jo@example.com',
      }),
      message('00000000-0000-7000-8000-000000000009', t0 + hour, {
        status: 'sent',
        attempts: 2,
        provider_id: 'SM123',
        last_error: null,
        body: '{"text":"See you"}',
        sent_at: t0 + hour + 5_000,
      }),
    ];
    // biome-ignore lint/suspicious/noExplicitAny: the table as 0021 had it, which today's types no longer describe.
    await (db as any).insertInto('outbox').values(before).execute();

    const names = Object.keys(migrations);
    expect((await migrateToLatest(db)).applied).toEqual(
      names.slice(names.indexOf('2026-11-27-0022-outbox-sequence')),
    );

    const after = await db.selectFrom('outbox').selectAll().orderBy('seq').execute();
    const byAge = [before[3]!, before[0]!, before[2]!, before[1]!];
    expect(after.map(({ seq, ...row }) => row)).toEqual(byAge);
    expect(after.map((row) => row.seq)).toEqual([1, 2, 3, 4]);

    await insertOutboxMessages(db, [
      {
        id: '00000000-0000-7000-8000-000000000001',
        organisation_id: organisationId,
        booking_id: booking.id,
        reference: booking.reference,
        channel: 'sms',
        recipient: '+447700900123',
        kind: 'rescheduled',
        status: 'pending',
        attempts: 0,
        due_at: t0 + 4 * hour,
        created_at: t0 + 4 * hour,
      },
    ]);
    const listed = await listOutboxOf(db, organisationId);
    expect(listed.map((m) => m.kind)).toEqual([
      'confirmed',
      'confirmed',
      'confirmed',
      'reminder',
      'rescheduled',
    ]);
    const newest = await db
      .selectFrom('outbox')
      .select('seq')
      .where('kind', '=', 'rescheduled')
      .executeTakeFirstOrThrow();
    expect(newest.seq).toBe(5);

    // The table's rules came through the rebuild: its checks, and the key only the sequence gives.
    const valid = {
      id: '00000000-0000-7000-8000-0000000000ff',
      organisation_id: organisationId,
      booking_id: booking.id,
      reference: booking.reference,
      channel: 'sms' as const,
      recipient: '+447700900123',
      kind: 'confirmed' as const,
      status: 'pending' as const,
      attempts: 0,
      due_at: t0,
      created_at: t0,
    };
    // Values the table's checks must refuse, which its type would not let through.
    const refused = (row: Record<string, unknown>) =>
      db
        .insertInto('outbox')
        .values(row as unknown as Insertable<OutboxTable>)
        .execute();
    await expect(refused({ ...valid, status: 'queued' })).rejects.toThrow();
    await expect(refused({ ...valid, status: 'sent' })).rejects.toThrow(); // sent without sent_at: outbox_done
    await expect(refused({ ...valid, channel: 'fax' })).rejects.toThrow();
    await expect(refused({ ...valid, booking_id: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow();

    if (onPostgres) {
      await expect(refused({ ...valid, seq: 99 })).rejects.toThrow(/GENERATED ALWAYS|cannot insert/i);
      const key = await sql<{ definition: string }>`
        select pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = 'outbox'::regclass and contype = 'p'`.execute(db);
      expect(key.rows).toEqual([{ definition: 'PRIMARY KEY (seq, organisation_id)' }]);
      const indexes = await sql<{ name: string }>`
        select indexname as name from pg_indexes where tablename = 'outbox' order by indexname`.execute(db);
      expect(indexes.rows.map((r) => r.name)).toEqual(['outbox_booking', 'outbox_due', 'outbox_pk']);
      const references = await sql<{ definition: string }>`
        select pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = 'outbox'::regclass and contype = 'f'`.execute(db);
      expect(references.rows).toEqual([
        { definition: 'FOREIGN KEY (organisation_id, booking_id) REFERENCES bookings(organisation_id, id)' },
      ]);
    } else {
      // The rowid is the key: no index of it beside the table, and no organisation index.
      const indexes = await sql<{ name: string }>`
        select name from pragma_index_list('outbox') order by name`.execute(db);
      expect(indexes.rows.map((r) => r.name)).toEqual(['outbox_booking', 'outbox_due']);
      const seq = await sql<{ pk: number; type: string }>`
        select pk, type from pragma_table_info('outbox') where name = 'seq'`.execute(db);
      expect(seq.rows).toEqual([{ pk: 1, type: 'INTEGER' }]);
      const references = await sql<{ table: string; from: string }>`
        select "table", "from" from pragma_foreign_key_list('outbox') order by seq`.execute(db);
      expect(references.rows).toEqual([
        { table: 'bookings', from: 'organisation_id' },
        { table: 'bookings', from: 'booking_id' },
      ]);
      const notRowid = await sql<{
        n: number;
      }>`select count(*) as n from outbox where seq is not rowid`.execute(db);
      expect(notRowid.rows).toEqual([{ n: 0 }]);
    }
  });
});

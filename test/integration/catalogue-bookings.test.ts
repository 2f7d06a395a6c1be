import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { catalogueId } from '../../src/app/catalogue-import/format/ids.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import type { Db } from '../../src/data/database.ts';
import { REFERENCE_ALPHABET } from '../../src/domain/booking/reference.ts';
import { importProblems } from '../helpers/catalogue-checks.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { createTempDatabase, tempDatabasePerTest } from '../helpers/temp-database.ts';
import { startTestApp, TEST_START } from '../helpers/test-app.ts';

// biome-ignore lint/suspicious/noExplicitAny: catalogue fixtures are edited freely as plain JSON.
type Json = any;

const EXAMPLE = path.resolve('..', 'shared', 'catalogue-example.json');
const NOW = Date.parse(TEST_START); // Monday 2026-11-23 09:00 UTC; London is on UTC in November.
const LATER = NOW + 3_600_000;
const MINUTE = 60_000;
const GENERATED = new RegExp(`^AC-[${REFERENCE_ALPHABET}]{6}$`);
const id = (kind: string, ref: string) => catalogueId('acme-hair', kind, ref);

/** smallCatalogue() with existing bookings: one of each kind the import has to get right. */
function withBookings(): Json {
  const catalogue: Json = smallCatalogue();
  catalogue.bookings = [
    {
      reference: 'ac-abc234',
      location: 'soho',
      services: ['colour', 'cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-11-30T10:00',
      status: 'confirmed',
      notes: 'Regular client',
      deposit_paid: true,
    },
    {
      location: 'kings-cross',
      services: ['cut'],
      staff: 'bo',
      client: 'jo',
      starts_at: '2026-11-26T11:00',
      status: 'pending_confirmation',
      protection: { setup_status: 'pending', payment_method_saved: true },
    },
    {
      location: 'soho',
      services: ['cut'],
      staff: 'bo',
      client: 'jo',
      starts_at: '2026-11-25T10:00',
      status: 'cancelled',
    },
    {
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-11-16T09:00',
      status: 'completed',
    },
    // The cancelled one's replacement: same staff and start, so it needs the occurrence number.
    {
      location: 'soho',
      services: ['cut'],
      staff: 'bo',
      client: 'jo',
      starts_at: '2026-11-25T10:00',
      status: 'confirmed',
    },
  ];
  return catalogue;
}

async function rows(db: Db, table: string, order: string): Promise<Json[]> {
  return (await sql<Json>`select * from ${sql.table(table)} order by ${sql.raw(order)}`.execute(db)).rows;
}

async function bookingByStart(db: Db, local: string, status?: string): Promise<Json> {
  const all = await rows(db, 'bookings', 'starts_at');
  const startsAt = Date.parse(`${local}:00Z`);
  return all.find((b) => b.starts_at === startsAt && (status === undefined || b.status === status));
}

async function snapshot(db: Db) {
  return {
    bookings: await rows(db, 'bookings', 'id'),
    services: await rows(db, 'booking_services', 'booking_id, position'),
    events: await rows(db, 'booking_events', 'booking_id, seq'),
  };
}

describe('importing existing bookings', () => {
  const temp = tempDatabasePerTest();

  it('holds an imported pending booking until its start at the latest', async () => {
    const catalogue = withBookings();
    const pendingEntry = catalogue.bookings[1] as Json;
    pendingEntry.starts_at = '2026-11-23T09:05';
    await importCatalogue(temp.db, catalogue, NOW);
    const pending = await bookingByStart(temp.db, '2026-11-23T09:05');
    expect(pending).toMatchObject({ status: 'pending_confirmation', hold_expires_at: NOW + 5 * MINUTE });
  });

  it('ends a kept hold at the earlier start a re-import moves it to', async () => {
    const catalogue = withBookings();
    const pendingEntry = catalogue.bookings[1] as Json;
    pendingEntry.reference = 'AC-DEF234';
    await importCatalogue(temp.db, catalogue, NOW);
    expect(await bookingByStart(temp.db, '2026-11-26T11:00')).toMatchObject({
      hold_expires_at: NOW + 15 * MINUTE,
    });
    pendingEntry.starts_at = '2026-11-23T09:05';
    await importCatalogue(temp.db, catalogue, NOW + MINUTE);
    const moved = await bookingByStart(temp.db, '2026-11-23T09:05');
    expect(moved).toMatchObject({ reference: 'AC-DEF234', hold_expires_at: NOW + 5 * MINUTE });
  });

  it('writes rows, segments, snapshots, holds and events', async () => {
    const report = await importCatalogue(temp.db, withBookings(), NOW);
    expect(report.counts.bookings).toEqual({ created: 5, updated: 0, unchanged: 0 });

    const confirmed = await bookingByStart(temp.db, '2026-11-30T10:00');
    expect(confirmed).toMatchObject({
      id: id('booking', 'reference:AC-ABC234'),
      reference: 'AC-ABC234',
      location_id: id('location', 'soho'),
      staff_id: id('staff', 'ana'),
      client_id: id('client', 'jo'),
      status: 'confirmed',
      starts_at: Date.UTC(2026, 10, 30, 10, 0),
      ends_at: Date.UTC(2026, 10, 30, 12, 15),
      blocked_until: Date.UTC(2026, 10, 30, 12, 30), // cut's 15-minute buffer
      currency: 'GBP',
      total_price_minor: 13_000,
      deposit_minor: 2000,
      deposit_status: 'paid',
      notes: 'Regular client',
      hold_expires_at: null,
      pending_requirements: null,
      protection_applies: 0,
      late_cancellation_fee_percentage: null,
      protection_setup_status: null,
      payment_method_saved: 0,
      cancelled_at: null,
      source: 'import',
      created_at: NOW,
      updated_at: NOW,
    });
    expect(
      (await rows(temp.db, 'booking_services', 'position')).filter((s) => s.booking_id === confirmed.id),
    ).toEqual([
      expect.objectContaining({
        position: 0,
        service_id: id('service', 'colour'),
        starts_at: Date.UTC(2026, 10, 30, 10, 0),
        ends_at: Date.UTC(2026, 10, 30, 11, 30),
        duration_minutes: 90,
        buffer_after_minutes: 0,
        price_minor: 9000,
        deposit_minor: 2000,
      }),
      expect.objectContaining({
        position: 1,
        service_id: id('service', 'cut'),
        starts_at: Date.UTC(2026, 10, 30, 11, 30),
        ends_at: Date.UTC(2026, 10, 30, 12, 15),
        duration_minutes: 45,
        buffer_after_minutes: 15,
        price_minor: 4000,
        deposit_minor: null,
      }),
    ]);

    const pending = await bookingByStart(temp.db, '2026-11-26T11:00');
    expect(pending).toMatchObject({
      id: id('booking', 'bo|2026-11-26T11:00'),
      location_id: id('location', 'kings-cross'),
      status: 'pending_confirmation',
      ends_at: Date.UTC(2026, 10, 26, 12, 0), // the kings-cross override: 60 minutes, 4500
      blocked_until: Date.UTC(2026, 10, 26, 12, 15),
      total_price_minor: 4500,
      deposit_minor: null,
      deposit_status: 'not_required',
      hold_expires_at: NOW + 15 * MINUTE,
      pending_requirements: '["protection_setup"]',
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      protection_setup_status: 'pending',
      payment_method_saved: 1,
      protection_setup_completed_at: null,
    });
    expect(pending.reference).toMatch(GENERATED);

    const cancelled = await bookingByStart(temp.db, '2026-11-25T10:00', 'cancelled');
    expect(cancelled).toMatchObject({ id: id('booking', 'bo|2026-11-25T10:00'), cancelled_at: NOW });
    const replacement = await bookingByStart(temp.db, '2026-11-25T10:00', 'confirmed');
    expect(replacement).toMatchObject({ id: id('booking', 'bo|2026-11-25T10:00|2'), cancelled_at: null });
    const past = await bookingByStart(temp.db, '2026-11-16T09:00');
    expect(past).toMatchObject({ status: 'completed', hold_expires_at: null, cancelled_at: null });
    for (const b of [cancelled, replacement, past]) expect(b.reference).toMatch(GENERATED);

    const events = await rows(temp.db, 'booking_events', 'booking_id');
    expect(events).toHaveLength(5);
    for (const booking of await rows(temp.db, 'bookings', 'id')) {
      expect(events.filter((e) => e.booking_id === booking.id)).toEqual([
        expect.objectContaining({
          seq: 1,
          from_status: null,
          to_status: booking.status,
          actor: 'import',
          occurred_at: NOW,
        }),
      ]);
    }
  });

  it('changes nothing when the same file is imported again, and generates the same references anywhere', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const before = await snapshot(temp.db);
    const again = withBookings();
    again.bookings[0].reference = 'AC-ABC234'; // any case matches
    const report = await importCatalogue(temp.db, again, LATER);
    expect(report.counts.bookings).toEqual({ created: 0, updated: 0, unchanged: 5 });
    expect(await snapshot(temp.db)).toEqual(before);

    const other = await createTempDatabase();
    try {
      await importCatalogue(other.db, withBookings(), LATER);
      const references = async (d: Db) => (await rows(d, 'bookings', 'id')).map((b) => [b.id, b.reference]);
      expect(await references(other.db)).toEqual(await references(temp.db));
    } finally {
      await other.dispose();
    }
  });

  it('moves a booking imported without a reference once a later file gives it its reference', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const [stored] = (await rows(temp.db, 'bookings', 'starts_at')).filter(
      (b) => b.starts_at === Date.parse('2026-11-26T11:00:00Z'),
    );
    const moved = withBookings();
    Object.assign(moved.bookings[1], { reference: stored!.reference, starts_at: '2026-11-26T14:00' });
    const report = await importCatalogue(temp.db, moved, LATER);
    expect(report.counts.bookings).toEqual({ created: 0, updated: 1, unchanged: 4 });
    const after = (await rows(temp.db, 'bookings', 'id')).find((b) => b.id === stored!.id);
    expect(after).toMatchObject({
      reference: stored!.reference,
      starts_at: Date.parse('2026-11-26T14:00:00Z'),
    });
    expect(await rows(temp.db, 'bookings', 'id')).toHaveLength(5);
  });

  it('keeps what the engine did since (an expired hold) when an unchanged file comes again', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    expect(await expireLapsedHolds(temp.db, NOW + 16 * MINUTE)).toBe(1);
    const before = await snapshot(temp.db);
    const report = await importCatalogue(temp.db, withBookings(), LATER);
    expect(report.counts.bookings).toEqual({ created: 0, updated: 0, unchanged: 5 });
    expect(await snapshot(temp.db)).toEqual(before);
    expect((await bookingByStart(temp.db, '2026-11-26T11:00')).status).toBe('expired');
  });

  it('applies edited notes and statuses, logging each update with the entry it applied', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const edited = withBookings();
    edited.bookings[0].notes = 'Prefers mornings';
    edited.bookings[4].status = 'cancelled';
    const report = await importCatalogue(temp.db, edited, LATER);
    expect(report.counts.bookings).toEqual({ created: 0, updated: 2, unchanged: 3 });

    const confirmed = await bookingByStart(temp.db, '2026-11-30T10:00');
    expect(confirmed).toMatchObject({ notes: 'Prefers mornings', status: 'confirmed', updated_at: LATER });
    const events = await rows(temp.db, 'booking_events', 'booking_id, seq');
    // The notes edited, the status kept.
    expect(
      events
        .filter((e) => e.booking_id === confirmed.id)
        .map((e) => [e.seq, e.from_status, e.to_status, e.actor]),
    ).toEqual([
      [1, null, 'confirmed', 'import'],
      [2, 'confirmed', 'confirmed', 'import'],
    ]);
    const moved = events.filter((e) => e.booking_id === id('booking', 'bo|2026-11-25T10:00|2'));
    expect(moved.map((e) => [e.seq, e.from_status, e.to_status, e.actor])).toEqual([
      [1, null, 'confirmed', 'import'],
      [2, 'confirmed', 'cancelled', 'import'],
    ]);
    const row = (await rows(temp.db, 'bookings', 'id')).find((b) => b.id === moved[0].booking_id);
    expect(row).toMatchObject({ status: 'cancelled', cancelled_at: LATER, updated_at: LATER });

    const still = await importCatalogue(temp.db, edited, LATER + MINUTE);
    expect(still.counts.bookings).toEqual({ created: 0, updated: 0, unchanged: 5 });
  });

  it('puts back a field the file edits again after making it what the engine had made it', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const booking = await bookingByStart(temp.db, '2026-11-30T10:00');
    // Changed in the engine, then the file follows: nothing to write, but the file's entry is the new
    // one to compare with.
    await temp.db.updateTable('bookings').set({ notes: 'Staff note' }).where('id', '=', booking.id).execute();
    const following = withBookings();
    following.bookings[0].notes = 'Staff note';
    expect((await importCatalogue(temp.db, following, LATER)).counts.bookings).toMatchObject({ updated: 0 });
    const back = await importCatalogue(temp.db, withBookings(), LATER + MINUTE);
    expect(back.counts.bookings).toMatchObject({ updated: 1 });
    expect(await bookingByStart(temp.db, '2026-11-30T10:00')).toMatchObject({ notes: booking.notes });
  });

  it('puts back an edit the file undoes: notes and client as they were', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const original = await bookingByStart(temp.db, '2026-11-30T10:00');
    const edited = withBookings();
    edited.clients.push({ ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+447911123457' });
    edited.bookings[0].notes = 'Prefers mornings';
    edited.bookings[0].client = 'sam';
    expect((await importCatalogue(temp.db, edited, LATER)).counts.bookings).toMatchObject({ updated: 1 });
    expect(await bookingByStart(temp.db, '2026-11-30T10:00')).toMatchObject({
      notes: 'Prefers mornings',
      client_id: id('client', 'sam'),
    });
    // The file as it first was: the edit is undone, not taken for no edit at all.
    const undone = await importCatalogue(temp.db, withBookings(), LATER + MINUTE);
    expect(undone.counts.bookings).toMatchObject({ updated: 1 });
    expect(await bookingByStart(temp.db, '2026-11-30T10:00')).toMatchObject({
      notes: original.notes,
      client_id: original.client_id,
    });
  });

  it('shows an imported protected booking through the API', async () => {
    const t = await startTestApp({ catalogues: [withBookings()] });
    try {
      const pending = await bookingByStart(t.database.db, '2026-11-26T11:00');
      const response = await t.request({ method: 'GET', url: `/v1/bookings/${pending.reference}` });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({
        reference: pending.reference,
        status: 'pending_confirmation',
        location_slug: 'kings-cross',
        staff_id: id('staff', 'bo'),
        client_id: id('client', 'jo'),
        service_ids: [id('service', 'cut')],
        starts_at: '2026-11-26T11:00:00+00:00',
        ends_at: '2026-11-26T12:00:00+00:00',
        pending_confirmation: { requirements: ['protection_setup'], expires_at: '2026-11-23T09:15:00Z' },
        booking_protection: {
          applies: true,
          policy: { late_cancellation_fee_percentage: 50, no_show_fee_percentage: 100 },
          setup: { status: 'pending', payment_method_saved: true, completed_at: null },
        },
        late_cancellation_fee: { fee_percentage: 50, amount_minor: 2250, payment_method_saved: true },
      });
      const byLowerCase = await t.request({ method: 'GET', url: '/v1/bookings/ac-abc234' });
      expect(byLowerCase.statusCode).toBe(200);
      expect(byLowerCase.json().data).toMatchObject({
        reference: 'AC-ABC234',
        status: 'confirmed',
        notes: 'Regular client',
        booking_protection: { applies: false },
      });
    } finally {
      await t.close();
    }
  });

  it('refuses overlapping live bookings of one staff member, buffers included', async () => {
    const catalogue = withBookings();
    catalogue.bookings.push(
      // Ana's 10:00 colour+cut blocks her until 12:30 (cut's buffer); this one ends at 12:30.
      {
        location: 'soho',
        services: ['patch-test'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-11-30T12:20',
        status: 'confirmed',
      },
      // Not live: no overlap.
      {
        location: 'soho',
        services: ['cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-11-30T11:00',
        status: 'no_show',
      },
      // Right after the buffer: fine.
      {
        location: 'soho',
        services: ['cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-11-30T12:30',
        status: 'confirmed',
      },
    );
    expect(await importProblems(importCatalogue(temp.db, catalogue, NOW))).toEqual([
      {
        path: '$.bookings[5].starts_at',
        message: expect.stringMatching(/overlaps \$\.bookings\[0\].*buffers included/),
      },
    ]);
    expect(await rows(temp.db, 'bookings', 'id')).toEqual([]);
  });

  it('refuses a booking overlapping a live booking already stored', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    const next = withBookings();
    next.bookings = [
      {
        location: 'soho',
        services: ['cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-11-30T11:00',
        status: 'confirmed',
      },
    ];
    const problems = await importProblems(importCatalogue(temp.db, next, LATER));
    expect(problems).toEqual([
      { path: '$.bookings[0].starts_at', message: expect.stringMatching(/overlaps booking AC-ABC234/) },
    ]);
  });

  it('lets an edited file swap two live bookings of one staff member', async () => {
    const at = (reference: string, startsAt: string) => ({
      reference,
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: startsAt,
      status: 'confirmed',
    });
    const catalogue = withBookings();
    catalogue.bookings.push(at('AC-AAAAAA', '2026-12-07T10:00'), at('AC-BBBBBB', '2026-12-07T11:00'));
    await importCatalogue(temp.db, catalogue, NOW);
    catalogue.bookings[5].starts_at = '2026-12-07T11:00';
    catalogue.bookings[6].starts_at = '2026-12-07T10:00';
    const report = await importCatalogue(temp.db, catalogue, LATER);
    expect(report.counts.bookings).toEqual({ created: 0, updated: 2, unchanged: 5 });
    const byReference = new Map((await rows(temp.db, 'bookings', 'id')).map((b) => [b.reference, b]));
    expect(byReference.get('AC-AAAAAA')).toMatchObject({
      status: 'confirmed',
      starts_at: Date.UTC(2026, 11, 7, 11, 0),
      blocked_until: Date.UTC(2026, 11, 7, 12, 0),
      updated_at: LATER,
    });
    expect(byReference.get('AC-BBBBBB')).toMatchObject({
      status: 'confirmed',
      starts_at: Date.UTC(2026, 11, 7, 10),
    });
    const moved = (await rows(temp.db, 'booking_events', 'seq')).filter(
      (e) => e.booking_id === byReference.get('AC-AAAAAA').id,
    );
    expect(moved.map((e) => [e.seq, e.from_status, e.to_status])).toEqual([
      [1, null, 'confirmed'],
      [2, 'confirmed', 'confirmed'],
    ]);
    expect(JSON.parse(moved[1].details).changed).toEqual(['starts_at']);
  });

  it("turns the database's overlap refusal into a problem at the booking's path", async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    // The engine moved AC-ABC234 since; the file still has it where it was.
    const moved = { starts_at: Date.UTC(2026, 11, 7, 14), ends_at: Date.UTC(2026, 11, 7, 16, 15) };
    await sql`update bookings set starts_at = ${moved.starts_at}, ends_at = ${moved.ends_at},
      blocked_until = ${moved.ends_at + 15 * MINUTE} where reference = 'AC-ABC234'`.execute(temp.db);
    const next = withBookings();
    next.bookings.push({
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-12-07T15:00',
      status: 'confirmed',
    });
    expect(await importProblems(importCatalogue(temp.db, next, LATER))).toEqual([
      {
        path: '$.bookings[5]',
        message:
          'overlaps a live booking of the same staff member already in the database (buffers included)',
      },
    ]);
  });

  it('reports bad references, statuses and local times at their exact paths', async () => {
    const catalogue = withBookings();
    const base = { location: 'soho', services: ['cut'], staff: 'ana', client: 'jo', status: 'completed' };
    catalogue.bookings = [
      { ...base, location: 'mayfair', starts_at: '2026-11-02T09:00' },
      { ...base, services: ['cut', 'perm'], starts_at: '2026-11-02T10:00' },
      { ...base, location: 'kings-cross', services: ['colour'], starts_at: '2026-11-02T11:00' },
      { ...base, staff: 'bo', services: ['colour'], starts_at: '2026-11-02T12:00' },
      { ...base, staff: 'zed', client: 'nobody', starts_at: '2026-11-02T13:00' },
      { ...base, status: 'booked', starts_at: '2026-11-02T14:00' },
      { ...base, starts_at: '2027-03-28T01:30' },
      { ...base, reference: 'XY-ABC234', starts_at: '2026-11-02T15:00' },
      { ...base, reference: 'AC-ABC10I', starts_at: '2026-11-02T16:00' },
      { ...base, status: 'pending_confirmation', starts_at: '2026-12-07T09:00' },
      { ...base, services: [], notes: 'x'.repeat(1001), starts_at: '2026-11-02T17:00' },
      { ...base, reference: 'AC-ABC234', starts_at: '2026-11-09T09:00' },
      { ...base, reference: ' ac-abc234', starts_at: '2026-11-09T10:00' },
      { ...base, status: 'pending_payment', starts_at: '2026-12-07T11:00' },
      { ...base, starts_at: '2026-11-09T11:00:30' },
      { ...base, starts_at: '2026-11-09T12:00', deposit: true },
    ];
    const problems = await importProblems(importCatalogue(temp.db, catalogue, NOW));
    expect(problems.map((p) => p.path).sort()).toEqual(
      [
        '$.bookings[0].location',
        '$.bookings[1].services[1]',
        '$.bookings[2].services[0]',
        '$.bookings[2].staff',
        '$.bookings[3].staff',
        '$.bookings[4].staff',
        '$.bookings[4].client',
        '$.bookings[5].status',
        '$.bookings[6].starts_at',
        '$.bookings[7].reference',
        '$.bookings[8].reference',
        '$.bookings[9].status',
        '$.bookings[10].services',
        '$.bookings[10].notes',
        '$.bookings[12].reference',
        '$.bookings[13].status',
        '$.bookings[14].starts_at',
        '$.bookings[15].deposit',
      ].sort(),
    );
    const message = (p: string) => problems.filter((x) => x.path === p).map((x) => x.message);
    expect(message('$.bookings[6].starts_at')).toEqual([
      expect.stringMatching(/does not exist in Europe\/London/),
    ]);
    expect(message('$.bookings[9].status')).toEqual([
      expect.stringMatching(/^pending_confirmation needs an outstanding step/),
    ]);
    expect(message('$.bookings[12].reference')).toEqual([
      expect.stringMatching(/duplicate reference "AC-ABC234"/),
    ]);
    expect(message('$.bookings[2].services[0]')).toEqual([
      'service "colour" is not offered at location "kings-cross"',
    ]);
    expect(message('$.bookings[3].staff')).toEqual(['staff "bo" does not deliver service "colour"']);
    expect(await rows(temp.db, 'organisations', 'id')).toEqual([]);
  });

  it('refuses services longer than a day with their buffer, alone or booked together', async () => {
    const catalogue = withBookings();
    const services = catalogue.services as Json[];
    const colour = services.find((s) => s.ref === 'colour')!;
    colour.duration_minutes = 1400; // fine alone; with a cut (45 + 15 buffer) after it, 1460
    const cut = services.find((s) => s.ref === 'cut')!;
    cut.overrides['kings-cross'].duration_minutes = 1430; // plus its 15-minute buffer: 1445
    catalogue.bookings = [
      {
        location: 'soho',
        services: ['colour', 'cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-11-02T09:00',
        status: 'completed',
      },
    ];
    const problems = await importProblems(importCatalogue(temp.db, catalogue, NOW));
    expect(problems).toEqual([
      {
        path: '$.services[0].overrides["kings-cross"].duration_minutes',
        message: expect.stringMatching(/must not exceed 1440/),
      },
      { path: '$.bookings[0].services', message: expect.stringMatching(/longer than 24 hours/) },
    ]);
    expect(await rows(temp.db, 'organisations', 'id')).toEqual([]);
  });

  it('takes the first instant of a local time that happens twice', async () => {
    const catalogue = withBookings();
    catalogue.bookings = [
      {
        location: 'soho',
        services: ['cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: '2026-10-25T01:30',
        status: 'completed',
      },
    ];
    await importCatalogue(temp.db, catalogue, NOW);
    const [row] = await rows(temp.db, 'bookings', 'id');
    expect(row.starts_at).toBe(Date.UTC(2026, 9, 25, 0, 30)); // 01:30 BST, not 01:30 GMT
  });

  it('keeps an explicit id, and refuses to change it', async () => {
    const given = '0b8a3f1e-5c2d-4e6f-8a9b-1c2d3e4f5a6b';
    const catalogue = withBookings();
    catalogue.bookings[3].id = given;
    await importCatalogue(temp.db, catalogue, NOW);
    expect((await bookingByStart(temp.db, '2026-11-16T09:00')).id).toBe(given);
    expect((await importCatalogue(temp.db, catalogue, LATER)).counts.bookings?.unchanged).toBe(5);
    catalogue.bookings[0].id = '7c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f'; // AC-ABC234 was imported without one
    catalogue.bookings[3].id = undefined;
    catalogue.bookings[4].id = given; // the completed booking's id, so its reference
    catalogue.bookings[4].reference = 'AC-CCCCCC';
    const problems = await importProblems(importCatalogue(temp.db, catalogue, LATER));
    expect(problems).toEqual([
      { path: '$.bookings[0].id', message: expect.stringMatching(/ids cannot change/) },
      { path: '$.bookings[4].reference', message: expect.stringMatching(/references cannot change/) },
    ]);
  });

  it('does not take over a booking that was not imported', async () => {
    await importCatalogue(temp.db, withBookings(), NOW);
    await sql`update bookings set source = 'api' where reference = 'AC-ABC234'`.execute(temp.db);
    const problems = await importProblems(importCatalogue(temp.db, withBookings(), LATER));
    expect(problems).toEqual([
      { path: '$.bookings[0].reference', message: expect.stringMatching(/was not imported \(source api\)/) },
    ]);
  });

  it.skipIf(!existsSync(EXAMPLE))('still imports the shared example catalogue', async () => {
    const report = await importCatalogue(temp.db, JSON.parse(readFileSync(EXAMPLE, 'utf8')), NOW);
    expect(report.organisation.created).toBe(true);
  });
});

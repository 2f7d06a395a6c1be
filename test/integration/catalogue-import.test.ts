import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { catalogueId } from '../../src/app/catalogue-import/format/ids.ts';
import {
  CatalogueValidationError,
  type ImportReport,
  importCatalogue,
  readCatalogueFile,
} from '../../src/app/catalogue-import/import-catalogue.ts';
import type { Db } from '../../src/data/database.ts';
import { everyRow, importProblems } from '../helpers/catalogue-checks.ts';
import { tempDatabasePerTest } from '../helpers/temp-database.ts';

const EXAMPLE = path.resolve('..', 'shared', 'catalogue-example.json');
const T0 = Date.UTC(2026, 10, 22, 9, 0);
const T1 = T0 + 60_000;

// biome-ignore lint/suspicious/noExplicitAny: catalogue fixtures are edited freely as plain JSON.
type Json = any;

/** A small catalogue of our own, so most tests do not depend on ../shared being present. */
function minimalCatalogue(slug = 'fade-lab'): Json {
  return {
    organisation: {
      slug,
      name: 'Fade Lab',
      currency: 'GBP',
      booking_reference_prefix: 'FL',
      locale: 'en-GB',
    },
    locations: [{ ref: 'soho', slug: 'soho', name: 'Fade Lab Soho', timezone: 'Europe/London' }],
    services: [
      {
        ref: 'cut',
        name: 'Cut',
        duration_minutes: 30,
        price: { amount: 2500, currency: 'GBP' },
        locations: ['soho'],
      },
    ],
    staff: [
      {
        ref: 'sam',
        name: 'Sam',
        services: ['cut'],
        working_hours: { soho: { mon: [['09:00', '17:00']] } },
        time_off: [{ start: '2026-12-24T00:00', end: '2026-12-27T00:00' }],
      },
    ],
    clients: [{ ref: 'kim', first_name: ' Kim ', last_name: 'Lee', email: ' Kim.Lee@Example.COM ' }],
  };
}

function example(): Json {
  return JSON.parse(readFileSync(EXAMPLE, 'utf8'));
}

/** Rows of a table matching simple equalities; terse enough to keep assertions readable. */
async function rowsOf(db: Db, table: string, where: Record<string, unknown> = {}): Promise<Json[]> {
  const conditions = Object.entries(where).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  const clause = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  return (await sql<Json>`select * from ${sql.table(table)} ${clause}`.execute(db)).rows;
}

const counts = (report: ImportReport) => report.counts;

describe('importCatalogue', () => {
  const temp = tempDatabasePerTest();

  it.skipIf(!existsSync(EXAMPLE))('imports the shared example catalogue unchanged', async () => {
    const report = await importCatalogue(temp.db, example(), T0);
    expect(report.organisation).toEqual({
      id: catalogueId('northside-hair', 'organisation', 'northside-hair'),
      slug: 'northside-hair',
      created: true,
      changed: true,
    });
    expect(counts(report)).toEqual({
      locations: { created: 2, updated: 0, unchanged: 0 },
      services: { created: 4, updated: 0, unchanged: 0 },
      staff: { created: 4, updated: 0, unchanged: 0 },
      clients: { created: 1, updated: 0, unchanged: 0 },
    });

    const id = (kind: string, ref: string) => catalogueId('northside-hair', kind, ref);
    const cut = { service_id: id('service', 'cut'), location_id: id('location', 'islington') };
    expect(await rowsOf(temp.db, 'service_locations', cut)).toEqual([
      expect.objectContaining({ duration_minutes: 75, price_minor: 6200, deposit_overridden: 0 }),
    ]);
    expect(await rowsOf(temp.db, 'services', { ref: 'colour' })).toEqual([
      expect.objectContaining({ id: id('service', 'colour'), deposit_minor: 2000, buffer_after_minutes: 0 }),
    ]);
    expect(
      await rowsOf(temp.db, 'staff_working_hours', { staff_id: id('staff', 'amara'), weekday: 4 }),
    ).toEqual([expect.objectContaining({ start_minute: 660, end_minute: 1200 })]);
    expect(await rowsOf(temp.db, 'staff_time_off')).toEqual([
      expect.objectContaining({
        staff_id: id('staff', 'amara'),
        starts_at: Date.UTC(2026, 11, 24),
        ends_at: Date.UTC(2026, 11, 29),
        reason: 'Holiday',
      }),
    ]);
    expect(await rowsOf(temp.db, 'staff', { ref: 'dev' })).toEqual([expect.objectContaining({ active: 0 })]);
    const benLocations = await rowsOf(temp.db, 'staff_locations', { staff_id: id('staff', 'ben') });
    expect(benLocations.map((r) => r.location_id).sort()).toEqual(
      [id('location', 'camden'), id('location', 'islington')].sort(),
    );
    expect(await rowsOf(temp.db, 'location_closures')).toEqual([
      expect.objectContaining({ location_id: id('location', 'camden'), date: '2026-12-25' }),
    ]);
    const [islington] = await rowsOf(temp.db, 'locations', { ref: 'islington' });
    expect(islington).toMatchObject({
      slot_interval_minutes: 30,
      pending_confirmation_hold_minutes: 15,
      pending_payment_hold_minutes: 30,
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      phone: null,
      created_at: T0,
      updated_at: T0,
    });
    const [client] = await rowsOf(temp.db, 'clients');
    expect(client).toMatchObject({ ref: 'jo', phone: '+447911123456', marketing_consent: 0 });
  });

  it.skipIf(!existsSync(EXAMPLE))('re-importing the same file changes nothing', async () => {
    await importCatalogue(temp.db, example(), T0);
    const before = await everyRow(temp.db);
    const report = await importCatalogue(temp.db, example(), T1);
    expect(report.organisation.created).toBe(false);
    for (const kind of ['locations', 'services', 'staff', 'clients'] as const) {
      expect(report.counts[kind].created).toBe(0);
      expect(report.counts[kind].updated).toBe(0);
    }
    expect(report.counts.services.unchanged).toBe(4);
    expect(await everyRow(temp.db)).toEqual(before);
  });

  it('an edited price updates only that service', async () => {
    await importCatalogue(temp.db, minimalCatalogue(), T0);
    const edited = minimalCatalogue();
    edited.services.push({
      ref: 'shave',
      name: 'Shave',
      duration_minutes: 20,
      price: { amount: 1500, currency: 'GBP' },
      locations: ['soho'],
    });
    await importCatalogue(temp.db, edited, T0);
    edited.services[0].price.amount = 2700;
    const report = await importCatalogue(temp.db, edited, T1);
    expect(report.counts.services).toEqual({ created: 0, updated: 1, unchanged: 1 });
    expect(report.counts.staff).toEqual({ created: 0, updated: 0, unchanged: 1 });
    expect(await rowsOf(temp.db, 'services', { ref: 'cut' })).toEqual([
      expect.objectContaining({ price_minor: 2700, updated_at: T1 }),
    ]);
    expect(await rowsOf(temp.db, 'services', { ref: 'shave' })).toEqual([
      expect.objectContaining({ updated_at: T0 }),
    ]);
    expect(await rowsOf(temp.db, 'locations')).toEqual([expect.objectContaining({ updated_at: T0 })]);
  });

  it('replaces owned collections to match the file and counts the owner as updated', async () => {
    await importCatalogue(temp.db, minimalCatalogue(), T0);
    const edited = minimalCatalogue();
    edited.staff[0].working_hours.soho = {
      tue: [
        ['10:00', '12:00'],
        ['13:00', '24:00'],
      ],
    };
    edited.staff[0].time_off = [];
    const report = await importCatalogue(temp.db, edited, T1);
    expect(report.counts.staff).toEqual({ created: 0, updated: 1, unchanged: 0 });
    const hours = (await rowsOf(temp.db, 'staff_working_hours')).map((h) => [
      h.weekday,
      h.start_minute,
      h.end_minute,
    ]);
    expect(hours.sort((a, b) => a[1] - b[1])).toEqual([
      [2, 600, 720],
      [2, 780, 1440],
    ]);
    expect(await rowsOf(temp.db, 'staff_time_off')).toEqual([]);
    expect(await rowsOf(temp.db, 'staff')).toEqual([expect.objectContaining({ updated_at: T1 })]);
  });

  it.skipIf(!existsSync(EXAMPLE))(
    'rejects an invalid file with every problem at its path and writes nothing',
    async () => {
      await importCatalogue(temp.db, example(), T0);
      const before = await everyRow(temp.db);
      const bad = example();
      bad.extras = true;
      bad.locations[0].phone = '+44123';
      bad.locations[1].timezone = 'Europe/Islington';
      bad.locations[1].slug = 'camden';
      bad.services[1].price.currency = 'EUR';
      bad.services[2].locations = ['camden', 'soho'];
      bad.staff[0].working_hours.camden.mon = [
        ['09:00', '13:00'],
        ['12:00', '18:00'],
      ];
      bad.staff[0].time_off = [{ start: '2026-03-29T01:30', end: '2026-03-29T05:00' }];
      bad.clients[0].phone = '07911 123456';

      const problems = await importProblems(importCatalogue(temp.db, bad, T1));
      expect(problems.map((p) => p.path).sort()).toEqual(
        [
          '$.extras',
          '$.locations[0].phone',
          '$.locations[1].timezone',
          '$.locations[1].slug',
          '$.services[1].price.currency',
          '$.services[2].locations[1]',
          '$.staff[0].working_hours.camden.mon[1]',
          '$.staff[0].time_off[0].start',
          '$.clients[0].phone',
        ].sort(),
      );
      for (const problem of problems) expect(problem.message).toMatch(/\w/);
      expect(problems.find((p) => p.path === '$.staff[0].time_off[0].start')?.message).toMatch(
        /does not exist/,
      );
      expect(await everyRow(temp.db)).toEqual(before);
    },
  );

  it('reports shape problems of several entities at once, with semantic problems of the rest', async () => {
    const bad = minimalCatalogue();
    bad.organisation.currency = 'gbp';
    bad.services[0].duration_minutes = 0;
    bad.services[0].colour = 'red';
    bad.staff[0].services = ['cut', 'perm'];
    bad.clients.push({ ref: 'kim', first_name: 'Kim', last_name: 'Two' });
    const problems = await importProblems(importCatalogue(temp.db, bad, T0));
    expect(problems.map((p) => p.path).sort()).toEqual(
      [
        '$.organisation.currency',
        '$.services[0].duration_minutes',
        '$.services[0].colour',
        '$.staff[0].services[1]',
        '$.clients[1].ref',
        '$.clients[1]',
      ].sort(),
    );
    expect(await rowsOf(temp.db, 'organisations')).toEqual([]);
  });

  it('refuses a country code whose numbers the engine cannot read (UK, EU, UN), naming GB for the United Kingdom', async () => {
    const bad = minimalCatalogue();
    bad.locations[0].country = 'UK';
    bad.policies = { ...bad.policies, sms_countries: ['EU', 'UN', 'IE'] };
    const problems = await importProblems(importCatalogue(temp.db, bad, T0));
    expect(problems.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      {
        path: '$.locations[0].country',
        message: 'is not an ISO 3166-1 country code: the United Kingdom is GB',
      },
      {
        path: '$.policies.sms_countries[0]',
        message: 'is not the ISO 3166-1 code of a country with phone numbers',
      },
      {
        path: '$.policies.sms_countries[1]',
        message: 'is not the ISO 3166-1 code of a country with phone numbers',
      },
    ]);
    expect(await rowsOf(temp.db, 'organisations')).toEqual([]);
  });

  it('lists an entry’s unknown key and its unknown ref in the same run', async () => {
    const bad = minimalCatalogue();
    Object.assign(bad.staff[0], { colour: 'teal', services: ['cut', 'nosuch'] });
    const problems = await importProblems(importCatalogue(temp.db, bad, T0));
    expect(problems.map((p) => p.path).sort()).toEqual(['$.staff[0].colour', '$.staff[0].services[1]']);
    expect(await rowsOf(temp.db, 'organisations')).toEqual([]);
  });

  it('checks existing bookings field by field, and accepts an empty list', async () => {
    const withBookings = { ...minimalCatalogue(), bookings: [{ reference: 'FL-ABCDEF' }] };
    const problems = await importProblems(importCatalogue(temp.db, withBookings, T0));
    expect(problems.map((p) => p.path).sort()).toEqual(
      ['client', 'location', 'services', 'staff', 'starts_at', 'status'].map((f) => `$.bookings[0].${f}`),
    );
    expect(await rowsOf(temp.db, 'organisations')).toEqual([]);
    const report = await importCatalogue(temp.db, { ...minimalCatalogue(), bookings: [] }, T0);
    expect(report.organisation.created).toBe(true);
    expect(report.counts.bookings).toBeUndefined();
  });

  it('turns a JSON syntax error into a problem at $', () => {
    const file = path.join(temp.dir, 'broken.json');
    writeFileSync(file, '{ "organisation": { "slug": "x", } ');
    let error: unknown;
    try {
      readCatalogueFile(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CatalogueValidationError);
    expect((error as CatalogueValidationError).problems).toEqual([
      { path: '$', message: expect.stringMatching(/JSON/) },
    ]);
  });

  it('uses explicit ids and reports one that belongs to another organisation', async () => {
    const ids = {
      org: '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c01',
      location: '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c02',
      service: '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c03',
      staff: '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c04',
      client: '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c05',
    };
    const catalogue = minimalCatalogue();
    catalogue.organisation.id = ids.org;
    catalogue.locations[0].id = ids.location;
    catalogue.services[0].id = ids.service;
    catalogue.staff[0].id = ids.staff;
    catalogue.clients[0].id = ids.client;
    const report = await importCatalogue(temp.db, catalogue, T0);
    expect(report.organisation.id).toBe(ids.org);
    for (const [table, id] of [
      ['locations', ids.location],
      ['services', ids.service],
      ['staff', ids.staff],
      ['clients', ids.client],
    ]) {
      expect(await rowsOf(temp.db, table!)).toEqual([
        expect.objectContaining({ id, organisation_id: ids.org }),
      ]);
    }

    const before = await everyRow(temp.db);
    const other = minimalCatalogue('other-shop');
    other.locations[0].id = ids.location;
    const problems = await importProblems(importCatalogue(temp.db, other, T1));
    expect(problems).toEqual([
      { path: '$.locations[0].id', message: expect.stringMatching(/another organisation/) },
    ]);
    expect(await everyRow(temp.db)).toEqual(before);
  });

  it('keeps two organisations with the same refs apart', async () => {
    const a = await importCatalogue(temp.db, minimalCatalogue('shop-a'), T0);
    const b = await importCatalogue(temp.db, minimalCatalogue('shop-b'), T0);
    expect(a.organisation.id).not.toBe(b.organisation.id);
    expect(b.counts.services).toEqual({ created: 1, updated: 0, unchanged: 0 });
    const services = await rowsOf(temp.db, 'services');
    expect(services).toHaveLength(2);
    expect(new Set(services.map((s) => s.id)).size).toBe(2);
    expect(services.map((s) => s.ref)).toEqual(['cut', 'cut']);
    // Clients are normalised, and time off is read in the location's zone (London is on UTC in December).
    expect(await rowsOf(temp.db, 'clients', { organisation_id: a.organisation.id })).toEqual([
      expect.objectContaining({ first_name: 'Kim', email: 'kim.lee@example.com', phone: null }),
    ]);
    expect(await rowsOf(temp.db, 'staff_time_off', { organisation_id: b.organisation.id })).toEqual([
      expect.objectContaining({ starts_at: Date.UTC(2026, 11, 24), ends_at: Date.UTC(2026, 11, 27) }),
    ]);
    const again = await importCatalogue(temp.db, minimalCatalogue('shop-a'), T1);
    expect(again.counts.staff).toEqual({ created: 0, updated: 0, unchanged: 1 });
  });

  it('adopts a client created elsewhere with the same e-mail', async () => {
    await importCatalogue(temp.db, minimalCatalogue(), T0);
    // As if created through the API: no ref, an id of its own.
    const apiClientId = '2b0d6a8e-1c55-4f3e-9a1e-5d6f7a8b9c0f';
    await temp.db.updateTable('clients').set({ id: apiClientId, ref: null }).execute();
    const report = await importCatalogue(temp.db, minimalCatalogue(), T1);
    expect(report.counts.clients).toEqual({ created: 0, updated: 1, unchanged: 0 });
    expect(await rowsOf(temp.db, 'clients')).toEqual([
      expect.objectContaining({ id: apiClientId, ref: 'kim' }),
    ]);
  });

  it('reads time off from or to a midnight the clocks skip as the start of that day', async () => {
    // Santiago's clocks go from 00:00 to 01:00 on Sunday 6 September 2026: that day starts at 01:00
    // (-03:00). A day off written from midnight to midnight is the usual way to write one.
    const catalogue = minimalCatalogue();
    catalogue.locations[0].timezone = 'America/Santiago';
    catalogue.staff[0].time_off = [
      { start: '2026-09-05T00:00', end: '2026-09-06T00:00', reason: 'Saturday off' },
      { start: '2026-09-06T00:00', end: '2026-09-07T00:00', reason: 'Sunday off' },
    ];
    await importCatalogue(temp.db, catalogue, T0);
    const rows = await rowsOf(temp.db, 'staff_time_off');
    const byReason = (reason: string) => rows.find((row) => row.reason === reason);
    expect(byReason('Saturday off')).toMatchObject({
      starts_at: Date.parse('2026-09-05T00:00:00-04:00'),
      ends_at: Date.parse('2026-09-06T01:00:00-03:00'),
    });
    expect(byReason('Sunday off')).toMatchObject({
      starts_at: Date.parse('2026-09-06T01:00:00-03:00'),
      ends_at: Date.parse('2026-09-07T00:00:00-03:00'),
    });
  });

  it('reads time off at a midnight that happens twice as the first, where the day starts', async () => {
    // Havana's clocks go back from 01:00 to 00:00 on Sunday 1 November 2026: Sunday starts at 00:00
    // -04:00 (04:00Z), and 00:00 -05:00 (05:00Z) is an hour into it.
    const catalogue = minimalCatalogue();
    catalogue.locations[0].timezone = 'America/Havana';
    catalogue.staff[0].time_off = [
      { start: '2026-10-31T00:00', end: '2026-11-01T00:00', reason: 'Saturday off' },
      { start: '2026-11-01T00:00', end: '2026-11-02T00:00', reason: 'Sunday off' },
    ];
    await importCatalogue(temp.db, catalogue, T0);
    const rows = await rowsOf(temp.db, 'staff_time_off');
    const byReason = (reason: string) => rows.find((row) => row.reason === reason);
    expect(byReason('Saturday off')).toMatchObject({ ends_at: Date.parse('2026-11-01T00:00:00-04:00') });
    expect(byReason('Sunday off')).toMatchObject({ starts_at: Date.parse('2026-11-01T00:00:00-04:00') });
  });

  it('refuses a __proto__ key, which the schema would drop without a word', async () => {
    const catalogue = minimalCatalogue();
    catalogue.staff[0].working_hours = JSON.parse('{"__proto__": {"mon": [["09:00", "17:00"]]}}');
    await expect(importCatalogue(temp.db, catalogue, T0)).rejects.toMatchObject({
      problems: [
        { path: '$.staff[0].working_hours.__proto__', message: 'is not a key a catalogue can have' },
      ],
    });
  });
});

import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { ManualClock } from '../../src/app/clock.ts';
import { createAppDeps } from '../../src/app/deps.ts';
import { openDatabase } from '../../src/data/database.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The fixture (London, GMT in November): Ana works Mon/Tue 09:00-17:00 at Soho and delivers cut
 * (45 min + 15 buffer), colour (90) and the in-person patch test; Bo works Wed at Soho and Thu at
 * Kings Cross and delivers cuts; Cy is inactive. Soho: 15-minute grid, 60 minutes' notice, 60 days ahead.
 * The clock starts Monday 2026-11-23 09:00.
 */
let t: TestApp;
let ids: {
  org: string;
  soho: string;
  jo: string;
  ana: string;
  bo: string;
  cy: string;
  cut: string;
  colour: string;
  patch: string;
};
beforeAll(async () => {
  t = await startTestApp();
  const { organisation, locations, staff, services, jo } = await catalogueIds(t.database.db);
  ids = {
    org: organisation,
    soho: locations.soho!,
    jo,
    ana: staff.ana!,
    bo: staff.bo!,
    cy: staff.cy!,
    cut: services.cut!,
    colour: services.colour!,
    patch: services['patch-test']!,
  };
});
afterAll(async () => {
  await t.close();
});

async function availability(query: string, slug = 'soho') {
  return t.request({ method: 'GET', url: `/v1/locations/${slug}/availability?${query}`, key: t.keys.read });
}

async function slotsOf(query: string, slug = 'soho') {
  const response = await availability(query, slug);
  expect(response.statusCode).toBe(200);
  return response.json().data;
}

const times = (slots: { starts_at: string }[]) => slots.map((s) => s.starts_at.slice(11, 16));

describe('GET /locations/{slug}/availability', () => {
  it('offers the grid inside working hours, after the notice period, with the result shape', async () => {
    const data = await slotsOf(`service_ids=${ids.cut}&date=2026-11-23`);
    expect(data).toMatchObject({
      location_slug: 'soho',
      timezone: 'Europe/London',
      service_ids: [ids.cut],
      duration: { minutes: 45, display: '45 minutes' },
    });
    // Now 09:00 + 60 min notice; a 45-minute cut must end by 17:00.
    expect(times(data.slots)[0]).toBe('10:00');
    expect(times(data.slots).at(-1)).toBe('16:15');
    expect(data.slots).toHaveLength(26);
    expect(data.slots[0]).toEqual({
      starts_at: '2026-11-23T10:00:00+00:00',
      ends_at: '2026-11-23T10:45:00+00:00',
      staff_id: ids.ana,
    });
  });

  it('keeps clear of a live booking and its buffer, and of the new slot’s own buffer', async () => {
    const at = (hhmm: string) => Date.parse(`2026-11-24T${hhmm}:00Z`);
    await t.database.db
      .insertInto('bookings')
      .values(
        bookingRow(
          {
            organisationId: ids.org,
            locationId: ids.soho,
            staffId: ids.ana,
            clientId: ids.jo,
            startsAt: at('11:00'),
            endsAt: at('11:45'),
            blockedUntil: at('12:00'),
          },
          { reference: 'AC-BKNG01' },
        ),
      )
      .execute();
    const slots = times((await slotsOf(`service_ids=${ids.cut}&date=2026-11-24`)).slots);
    // A cut at 10:15 would end at 11:00 but its buffer would run to 11:15: refused. 10:00 ends its block at 11:00.
    expect(slots).toContain('10:00');
    for (const blocked of ['10:15', '10:30', '11:00', '11:45']) expect(slots).not.toContain(blocked);
    expect(slots).toContain('12:00');
  });

  it('runs several services back to back with one staff member who delivers them all', async () => {
    const data = await slotsOf(`service_ids=${ids.colour},${ids.cut}&date=2026-11-23`);
    expect(data.duration).toEqual({ minutes: 135, display: '2 hours 15 minutes' });
    expect(data.service_ids).toEqual([ids.colour, ids.cut]);
    expect(new Set(data.slots.map((s: { staff_id: string }) => s.staff_id))).toEqual(new Set([ids.ana]));
    expect(times(data.slots).at(-1)).toBe('14:45');
  });

  it('searches up to 14 days and filters by staff member', async () => {
    const data = await slotsOf(`service_ids=${ids.cut}&date=2026-11-23&days=14`);
    const dates = new Set(data.slots.map((s: { starts_at: string }) => s.starts_at.slice(0, 10)));
    // Mondays and Tuesdays (Ana) and Wednesdays (Bo at Soho) of two weeks.
    expect([...dates]).toEqual([
      '2026-11-23',
      '2026-11-24',
      '2026-11-25',
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
    ]);
    const bo = await slotsOf(`service_ids=${ids.cut}&date=2026-11-23&days=14&staff_id=${ids.bo}`);
    expect(new Set(bo.slots.map((s: { starts_at: string }) => s.starts_at.slice(0, 10)))).toEqual(
      new Set(['2026-11-25', '2026-12-02']),
    );
    expect(new Set(bo.slots.map((s: { staff_id: string }) => s.staff_id))).toEqual(new Set([ids.bo]));
  });

  it('answers 200 with no slots beyond max advance, and carries the offset in force', async () => {
    expect((await slotsOf(`service_ids=${ids.cut}&date=2027-01-25`)).slots).toEqual([]);
    const summer = await startTestApp({ now: '2027-03-26T12:00:00Z' });
    try {
      const cut = (await catalogueIds(summer.database.db)).services.cut;
      const response = await summer.request({
        method: 'GET',
        url: `/v1/locations/soho/availability?service_ids=${cut}&date=2027-03-29`,
      });
      expect(response.json().data.slots[0].starts_at).toBe('2027-03-29T09:00:00+01:00');
    } finally {
      await summer.close();
    }
  });

  it.each([
    ['', 'service_ids'],
    ['service_ids=abc&date=2026-11-23', 'service_ids'],
    ['service_ids=&date=2026-11-23', 'service_ids'],
    [
      `service_ids=${Array.from({ length: 11 }, () => randomUUID()).join(',')}&date=2026-11-23`,
      'service_ids',
    ],
    ['service_ids=CUT,CUT&date=2026-11-23', 'service_ids'],
    ['service_ids=CUT', 'date'],
    ['service_ids=CUT&date=2026-02-30', 'date'],
    ['service_ids=CUT&date=23/11/2026', 'date'],
    ['service_ids=CUT&date=2026-11-23&days=0', 'days'],
    ['service_ids=CUT&date=2026-11-23&days=15', 'days'],
    ['service_ids=CUT&date=2026-11-23&days=1.5', 'days'],
    // Number() would read each of these as 2.
    ['service_ids=CUT&date=2026-11-23&days=%2B2', 'days'],
    ['service_ids=CUT&date=2026-11-23&days=2e0', 'days'],
    ['service_ids=CUT&date=2026-11-23&days=0x2', 'days'],
    ['service_ids=CUT&date=2026-11-23&days=%202', 'days'],
    ['service_ids=CUT&date=2026-11-23&staff_id=ana', 'staff_id'],
    ['service_ids=CUT&date=2026-11-23&staff=x', 'staff'],
    ['service_ids=CUT&date=9999-12-31&days=2', 'days'],
    ['service_ids=CUT&date=9999-12-20&days=14', 'days'],
  ])('refuses %s naming %s', async (query, param) => {
    const response = await availability(query.replaceAll('CUT', ids.cut));
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param });
  });

  it('says of eleven service ids that ten is the most, not how many characters the list may have', async () => {
    const eleven = Array.from({ length: 11 }, () => randomUUID()).join(',');
    const response = await availability(`service_ids=${eleven}&date=2026-11-23`);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'service_ids' });
    expect(response.json().error.message).toMatch(/at most 10 service ids/);
    expect(response.json().error.message).not.toMatch(/characters/);
  });

  it('says of an id that is no UUID the form ids take, naming the list, not a place inside it', async () => {
    const response = await availability(`service_ids=${ids.cut},abc&date=2026-11-23&days=1&days=2`);
    expect(response.json().error).toEqual({
      code: 'invalid_request',
      message: 'service_ids: each id must be a UUID. days is given 2 times; give it once.',
      param: 'service_ids',
    });
  });

  it('takes every date written with four digits, the years 0 to 99 and the last days of 9999 too', async () => {
    for (const [date, days] of [
      ['0001-01-01', 1],
      ['0099-12-31', 2],
      ['9999-12-18', 14],
      ['9999-12-31', 1],
    ] as const) {
      const found = await slotsOf(`service_ids=${ids.cut}&date=${date}&days=${days}`);
      expect(found.slots).toEqual([]);
      for (const closed of found.closed_days ?? []) expect(closed.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('refuses services not offered or not bookable online there, and ineligible staff', async () => {
    const cases: [string, string, string][] = [
      [`service_ids=${ids.colour}&date=2026-11-26`, 'kings-cross', 'service_ids'],
      [`service_ids=${ids.patch}&date=2026-11-23`, 'soho', 'service_ids'],
      [`service_ids=${randomUUID()}&date=2026-11-23`, 'soho', 'service_ids'],
      [`service_ids=${ids.cut}&date=2026-11-23&staff_id=${ids.cy}`, 'soho', 'staff_id'],
      [`service_ids=${ids.colour}&date=2026-11-23&staff_id=${ids.bo}`, 'soho', 'staff_id'],
      [`service_ids=${ids.cut}&date=2026-11-23&staff_id=${ids.ana}`, 'kings-cross', 'staff_id'],
    ];
    for (const [query, slug, param] of cases) {
      const response = await availability(query, slug);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'invalid_request', param });
    }
  });

  it('refuses services that together would keep a staff member for more than a day', async () => {
    const catalogue = smallCatalogue();
    const colour = catalogue.services.find((s) => s.ref === 'colour')!;
    colour.duration_minutes = 1400; // bookable alone; with a cut (45 + 15 buffer), 1460 minutes
    const long = await startTestApp({ catalogues: [catalogue] });
    try {
      const alone = await long.request({
        method: 'GET',
        url: `/v1/locations/soho/availability?service_ids=${ids.colour}&date=2026-11-30`,
      });
      expect(alone.statusCode).toBe(200);
      const together = await long.request({
        method: 'GET',
        url: `/v1/locations/soho/availability?service_ids=${ids.colour},${ids.cut}&date=2026-11-30`,
      });
      expect(together.statusCode).toBe(400);
      expect(together.json().error).toMatchObject({
        code: 'invalid_request',
        param: 'service_ids',
        message: expect.stringMatching(/longer than 24 hours/),
      });
    } finally {
      await long.close();
    }
  });

  it('answers 404 for an unknown location', async () => {
    const response = await availability(`service_ids=${ids.cut}&date=2026-11-23`, 'nowhere');
    expect(response.statusCode).toBe(404);
  });
});

describe('loading', () => {
  it('uses the same number of queries for one staff member and one day as for many over 14 days', async () => {
    const catalogue = smallCatalogue();
    for (let i = 0; i < 12; i++) {
      catalogue.staff.push({
        ref: `extra-${i}`,
        name: `Extra ${i}`,
        services: ['cut'],
        working_hours: { soho: { mon: [['09:00', '17:00']], thu: [['09:00', '17:00']] } },
      } as never);
    }
    const sqls: string[] = [];
    const first = openDatabase(t.database.url.replace('booking.sqlite', 'queries.sqlite'), {
      onQuery: (sql) => sqls.push(sql),
    });
    try {
      const { migrateToLatest } = await import('../../src/data/migrate.ts');
      await migrateToLatest(first.db);
      const report = await importCatalogue(first.db, catalogue, t.clock.nowMs());
      const { createApiKey } = await import('../../src/app/api-key-service.ts');
      const key = (
        await createApiKey(
          first.db,
          { organisationSlug: report.organisation.slug, label: 'q', scope: 'read' },
          t.clock.nowMs(),
        )
      ).key;
      const app = await buildApp(
        createAppDeps({
          db: first.db,
          clock: new ManualClock('2026-11-23T09:00:00Z'),
          secret: 's',
        }),
      );
      const { services, staff } = await catalogueIds(first.db);
      const cut = services.cut;
      const ana = staff.ana;
      const count = async (query: string) => {
        sqls.length = 0;
        const response = await app.inject({
          method: 'GET',
          url: `/v1/locations/soho/availability?${query}`,
          headers: { authorization: `Bearer ${key}` },
        });
        expect(response.statusCode).toBe(200);
        return { queries: sqls.length, slots: response.json().data.slots.length };
      };
      /** What the triggers do on a change of the catalogue or of a booking: a version no answer has. */
      const bump = (version: 'catalogue_version' | 'bookings_version') =>
        sql`update organisations set ${sql.ref(version)} = ${sql.ref(version)} + 1`.execute(first.db);
      await count(`service_ids=${cut}&date=2026-11-23`); // the key's first use also records last_used_at
      // Loaded from scratch (the catalogue changed, so no catalogue read is reused either); then with
      // only the bookings changed, the key (with both versions) and the bookings, whatever the size;
      // then with nothing changed, nothing at all on SQLite (the key and its versions once on
      // PostgreSQL): the key's row is kept while nothing commits
      // (src/data/change-mark.ts) and the answer is cached.
      const smallQuery = `service_ids=${cut}&date=2026-11-23&staff_id=${ana}`;
      await bump('catalogue_version');
      const small = await count(smallQuery);
      await bump('bookings_version');
      expect(await count(smallQuery)).toEqual({ ...small, queries: 2 });
      expect(await count(smallQuery)).toEqual({ ...small, queries: onPostgres ? 1 : 0 });
      const largeQuery = `service_ids=${cut}&date=2026-11-23&days=14`;
      await bump('catalogue_version');
      const large = await count(largeQuery);
      await bump('bookings_version');
      expect(await count(largeQuery)).toEqual({ ...large, queries: 2 });
      expect(large.slots).toBeGreaterThan(small.slots * 4);
      expect(large.queries).toBe(small.queries);
      expect(large.queries).toBeLessThanOrEqual(10);
      await app.close();
    } finally {
      await first.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const get = async (url: string) => {
  const response = await t.request({ method: 'GET', url, key: t.keys.read });
  expect(response.statusCode).toBe(200);
  return response.json().data;
};

describe('GET /locations', () => {
  it('lists active locations with every contract field', async () => {
    const locations = await get('/v1/locations');
    expect(locations.map((l: { slug: string }) => l.slug)).toEqual(['kings-cross', 'soho']);
    expect(locations[1]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      slug: 'soho',
      name: 'Soho',
      timezone: 'Europe/London',
      street_address: '1 Dean Street',
      city: 'London',
      postal_code: 'W1D 3RB',
      country: 'GB',
      phone: '+442071234567',
      booking_protection_policy: {
        applies: false,
        late_cancellation_fee_percentage: null,
        no_show_fee_percentage: null,
      },
    });
    // Absent address fields are left out; phone is always there (null when unknown).
    expect(locations[0]).toEqual({
      id: expect.any(String),
      slug: 'kings-cross',
      name: 'Kings Cross',
      timezone: 'Europe/London',
      phone: null,
      booking_protection_policy: {
        applies: true,
        late_cancellation_fee_percentage: 50,
        no_show_fee_percentage: 100,
      },
    });
  });
});

describe('GET /locations/{slug}/services', () => {
  it('lists the services offered there, not-online-bookable ones included, with their staff', async () => {
    const services = await get('/v1/locations/soho/services');
    const staffIds = Object.fromEntries(
      (await get('/v1/locations/soho/staff')).map((s: { name: string; id: string }) => [s.name, s.id]),
    );
    expect(services).toEqual([
      {
        id: expect.any(String),
        name: 'Colour',
        aliases: [],
        duration_minutes: 90,
        price: { amount: 9000, currency: 'GBP' },
        deposit: { amount: 2000, currency: 'GBP' },
        category: 'Colour',
        online_bookable: true,
        staff: [{ id: staffIds.Ana, name: 'Ana' }],
      },
      {
        id: expect.any(String),
        name: 'Cut',
        aliases: ['Haircut', 'trim'],
        duration_minutes: 45,
        price: { amount: 4000, currency: 'GBP' },
        deposit: null,
        category: 'Hair',
        online_bookable: true,
        // Cy delivers cuts at Soho but is inactive.
        staff: [
          { id: staffIds.Ana, name: 'Ana' },
          { id: staffIds.Bo, name: 'Bo' },
        ],
      },
      {
        id: expect.any(String),
        name: 'Patch test',
        aliases: [],
        duration_minutes: 10,
        price: { amount: 0, currency: 'GBP' },
        deposit: null,
        category: null,
        online_bookable: false,
        staff: [{ id: staffIds.Ana, name: 'Ana' }],
      },
    ]);
  });

  it('applies per-location overrides and lists only the staff working there', async () => {
    const services = await get('/v1/locations/kings-cross/services');
    expect(services).toHaveLength(1);
    expect(services[0]).toMatchObject({
      name: 'Cut',
      duration_minutes: 60,
      price: { amount: 4500, currency: 'GBP' },
      staff: [{ name: 'Bo' }],
    });
  });

  it('answers 404 for an unknown or inactive location', async () => {
    for (const slug of ['nowhere', 'closed-branch']) {
      const response = await t.request({ method: 'GET', url: `/v1/locations/${slug}/services` });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('not_found');
    }
  });
});

describe('GET /locations/{slug}/staff', () => {
  it('lists active staff with working hours there and the services they deliver there', async () => {
    const services = Object.fromEntries(
      (await get('/v1/locations/soho/services')).map((s: { name: string; id: string }) => [s.name, s.id]),
    );
    expect(await get('/v1/locations/soho/staff')).toEqual([
      {
        id: expect.any(String),
        name: 'Ana',
        aliases: ['Annie'],
        service_ids: [services.Colour, services.Cut, services['Patch test']],
      },
      { id: expect.any(String), name: 'Bo', aliases: [], service_ids: [services.Cut] },
    ]);
    const kingsCross = await get('/v1/locations/kings-cross/staff');
    expect(kingsCross.map((s: { name: string }) => s.name)).toEqual(['Bo']);
  });

  it('answers 404 for an unknown location', async () => {
    expect((await t.request({ method: 'GET', url: '/v1/locations/nowhere/staff' })).statusCode).toBe(404);
  });
});

describe('listing cache', () => {
  it('serves the current catalogue after a change made by another process', async () => {
    const before = await get('/v1/locations/soho/services');
    expect(before.find((s: { name: string }) => s.name === 'Cut').price.amount).toBe(4000);
    expect(await get('/v1/locations/soho/services')).toEqual(before);

    // A second connection to the same file stands in for another process (or `booking import`).
    const other = openDatabase(t.database.url);
    try {
      await other.db.updateTable('services').set({ price_minor: 4200 }).where('name', '=', 'Cut').execute();
      const after = await get('/v1/locations/soho/services');
      expect(after.find((s: { name: string }) => s.name === 'Cut').price.amount).toBe(4200);

      await other.db.updateTable('staff').set({ active: 0 }).where('name', '=', 'Bo').execute();
      const cut = (await get('/v1/locations/soho/services')).find((s: { name: string }) => s.name === 'Cut');
      expect(cut.staff.map((s: { name: string }) => s.name)).toEqual(['Ana']);
      expect((await get('/v1/locations/soho/staff')).map((s: { name: string }) => s.name)).toEqual(['Ana']);

      await other.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'kings-cross').execute();
      expect((await get('/v1/locations')).map((l: { slug: string }) => l.slug)).toEqual(['soho']);
    } finally {
      await other.close();
    }
  });

  it('bumps the catalogue version only when the catalogue changes', async () => {
    const version = async () =>
      (
        await t.database.db
          .selectFrom('organisations')
          .select('catalogue_version')
          .where('slug', '=', 'acme-hair')
          .executeTakeFirstOrThrow()
      ).catalogue_version;
    const start = await version();
    await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'A', last_name: 'B', email: 'cache@example.com' },
    });
    expect(await version()).toBe(start);
    await t.database.db
      .updateTable('staff_working_hours')
      .set({ end_minute: 1000 })
      .where('weekday', '=', 1)
      .execute();
    expect(await version()).toBeGreaterThan(start);
  });
});

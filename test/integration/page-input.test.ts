import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a browser would never send, sent to the server-rendered pages (the customer's, the checkout,
 * the console), as a fuzzing session did: names repeated in a query or a form, JSON whose values are
 * not text, a NUL (which PostgreSQL cannot store), dates that are none, notes and reasons longer than
 * the database keeps, an action named after Object's prototype. Every one is a page saying what is
 * wrong (400 or 404), never a fault, and the server keeps serving. On both databases: PostgreSQL is
 * where a NUL or a NaN used to become a 500, or end the process.
 */
const ORIGIN = 'http://localhost:80';
const PASSWORD = 'correct horse battery';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN };
let t: TestApp;
let ids: CatalogueIds;
let cookie: string;
let csrf: string;
let reference: string;

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoCatalogue()],
    now: '2026-11-23T09:00:00Z',
    limits: { requestsPerMinute: 100_000 },
  });
  ids = await catalogueIds(t.database.db);
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'owner@northside.test', role: 'owner', password: PASSWORD },
    t.clock.nowMs(),
  );
  const signedIn = await t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: FORM,
    payload: new URLSearchParams({
      organisation: 'northside-hair',
      email: 'owner@northside.test',
      password: PASSWORD,
    }).toString(),
  });
  expect(signedIn.statusCode, signedIn.body).toBe(303);
  cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
  csrf = /name="_csrf" value="([^"]+)"/.exec((await get('/console/clients')).body)![1]!;
  const booked = await postBooking(t, {
    location_slug: 'camden',
    service_ids: [ids.services.cut],
    client_id: ids.jo,
    starts_at: '2026-11-24T10:00:00+00:00',
    notes: 'Prefers Amara\u202e 07911 123456',
  });
  expect(booked.statusCode, booked.body).toBe(201);
  reference = booked.json().data.reference;
});
afterAll(async () => {
  await t.close();
});

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers: { ...FORM, cookie, ...headers }, payload });
const form = (fields: Record<string, string>) => new URLSearchParams({ _csrf: csrf, ...fields }).toString();

/** The answer is a page with this status, and no fault was logged. */
async function refusedPage(
  answer: Promise<{ statusCode: number; body: string; headers: object }>,
  status: number,
) {
  const response = await answer;
  expect(response.statusCode, response.body).toBe(status);
  expect(response.body).toMatch(/^<!doctype html>/);
  expect(response.body).not.toContain('Something went wrong');
  return response;
}

describe('query strings', () => {
  it('refuses a date that is none, on every page that reads one', async () => {
    const cut = ids.services.cut;
    for (const url of [
      `/console/book?location=camden&service_id=${cut}&date=x`,
      `/console/book?location=camden&service_id=${cut}&date=2026-12-01&date=2026-12-02`,
      `/console/bookings/${reference}/reschedule?date=nope`,
      `/console/bookings/${reference}/reschedule?date=2026-02-30`,
      `/console/diary?location=camden&date=2026-13-45`,
    ]) {
      const response = await refusedPage(get(url), 400);
      expect(response.body, url).toMatch(/not a date|YYYY-MM-DD/);
    }
    await refusedPage(
      t.app.inject({ method: 'GET', url: `/p/northside-hair?location=camden&services=${cut}&date=a&date=b` }),
      400,
    );
    // Still serving (an unawaited query on PostgreSQL used to end the process here).
    expect((await get('/console/diary?location=camden')).statusCode).toBe(200);
  });

  it('reads a name given twice as no value it may be, and a list given twice as the list', async () => {
    await refusedPage(get('/console/diary?location=camden&location=camden'), 404);
    const stamp = await get('/console/diary/stamp?location=a&location=b');
    expect(stamp.statusCode, stamp.body).toBe(404);
    await refusedPage(get('/console/book?location=camden&location=camden'), 404);
    await refusedPage(
      t.app.inject({ method: 'GET', url: '/p/northside-hair?location=camden&location=camden' }),
      404,
    );
    expect((await get('/console/clients?q=jo&q=bloggs')).statusCode).toBe(200);
    // Two return addresses are one with a line break in it, which no return address may hold.
    await refusedPage(
      t.app.inject({ method: 'GET', url: '/console/sign-in?next=/console/a&next=/console/b' }),
      400,
    );
    // Two services ticked: both chosen, on the console and on the public page.
    const both = `service_id=${ids.services.cut}&service_id=${ids.services.beard}`;
    const desk = await get(`/console/book?location=camden&date=2026-11-24&${both}`);
    expect(desk.statusCode, desk.body).toBe(200);
    expect(desk.body.match(/<option value="[^"]+" selected>/g)).toHaveLength(3);
    expect(desk.body.match(/name="service_id" value=/g)).toHaveLength(2);
    const services = `services=${ids.services.cut}&services=${ids.services.beard}`;
    const customer = await t.app.inject({
      method: 'GET',
      url: `/p/northside-hair?location=camden&date=2026-11-24&${services}`,
    });
    expect(customer.statusCode, customer.body).toBe(200);
    expect(customer.body.match(/ checked/g)).toHaveLength(2);
  });
});

describe('forms', () => {
  it('refuses a NUL in any field, signed in or not', async () => {
    const nul = (fields: Record<string, string>) => form(fields).replace('NUL', '%00');
    await refusedPage(
      post('/console/sign-in', 'organisation=northside-hair%00&email=o%40x.test&password=x'),
      400,
    );
    await refusedPage(post('/console/keys', nul({ label: 'desk NUL', scope: 'read' })), 400);
    await refusedPage(post(`/console/bookings/${reference}/cancel`, nul({ reason: 'ill NUL' })), 400);
    await refusedPage(
      post(
        '/p/northside-hair/book',
        'location=camden&services=x&starts_at=2026-11-24T11:00:00Z&first_name=A&last_name=B&phone=07911123456&notes=a%00b',
      ),
      400,
    );
    const still = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(still.json().data.status).toBe('confirmed');
  });

  it('refuses a form over its pages’ limit naming that limit, not the API’s 64 KiB', async () => {
    const notes = `notes=${'x'.repeat(5000)}`;
    const booking = await refusedPage(post('/p/northside-hair/book', notes), 413);
    expect(booking.body).toContain('larger than 4 KiB');
    expect(booking.body).not.toContain('64 KiB');
    const console = await refusedPage(post('/console/keys', `${form({})}&${'x'.repeat(17_000)}`), 413);
    expect(console.body).toContain('larger than 16 KiB');
    // The API keeps its own limit.
    const api = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: { notes: 'x'.repeat(70_000) },
    });
    expect(api.statusCode).toBe(413);
    expect(api.json().error.message).toBe('The request body is larger than 64 KiB.');
  });

  it('answers a sign-in with a 4,000-character e-mail as any wrong one (its counter is a hash)', async () => {
    const response = await post(
      '/console/sign-in',
      new URLSearchParams({
        organisation: 'northside-hair',
        email: `${'e'.repeat(4000)}@x.test`,
        password: 'x',
      }).toString(),
    );
    expect(response.statusCode, response.body).toBe(401);
  });

  it('refuses JSON whose values are not text, before the CSRF token is even compared', async () => {
    const json = (url: string, body: unknown) =>
      post(url, JSON.stringify(body), { 'content-type': 'application/json' });
    await refusedPage(json('/console/keys', { _csrf: 12345 }), 400);
    await refusedPage(json('/console/keys', { _csrf: csrf, label: {} }), 400);
    await refusedPage(json('/p/northside-hair/book', { services: 5 }), 400);
    // null is a field not given, as a form would leave it out: the refusal is about what is missing.
    const missing = await refusedPage(
      json('/p/northside-hair/book', { location: 'camden', notes: null }),
      400,
    );
    expect(missing.body).toContain('Choose one of the free times.');
  });

  it('refuses notes and reasons longer than the database keeps, as the API does', async () => {
    const long = 'n'.repeat(1001);
    const slot = (await get(`/console/book?location=camden&date=2026-11-25&service_id=${ids.services.cut}`))
      .body;
    const [, value] = /<select id="slot" name="slot" required><option value="([^"]+)"/.exec(slot)!;
    const desk = await refusedPage(
      post(
        '/console/book',
        form({
          location: 'camden',
          service_id: ids.services.cut!,
          slot: value!,
          first_name: 'Long',
          last_name: 'Notes',
          phone: '07911 555123',
          notes: long,
        }),
      ),
      400,
    );
    expect(desk.body).toContain('notes is at most 1000 characters');
    await refusedPage(post(`/console/bookings/${reference}/cancel`, form({ reason: long })), 400);
    const customer = await refusedPage(
      post(
        '/p/northside-hair/book',
        new URLSearchParams({
          location: 'camden',
          services: ids.services.cut!,
          starts_at: '2026-11-25T11:00:00Z',
          first_name: 'Long',
          last_name: 'Notes',
          phone: '07911 555124',
          notes: long,
        }).toString(),
      ),
      400,
    );
    expect(customer.body).toContain('notes is at most 1000 characters');
  });

  it('refuses a time no date can be written for (year 275760), on every page that takes a time', async () => {
    const far = '+275760-09-13T00:00:00.000Z';
    const page = await t.database.db
      .selectFrom('booking_pages')
      .innerJoin('bookings', 'bookings.id', 'booking_pages.booking_id')
      .select('booking_pages.token')
      .where('bookings.reference', '=', reference)
      .executeTakeFirstOrThrow();
    const manage = `/p/manage/${page.token}`;
    for (const starts_at of [far, '-271821-04-20T00:00:00.000Z']) {
      const customer = await refusedPage(
        post(
          '/p/northside-hair/book',
          new URLSearchParams({
            location: 'camden',
            services: ids.services.cut!,
            starts_at,
            first_name: 'Far',
            last_name: 'Future',
            phone: '07911 555125',
          }).toString(),
        ),
        400,
      );
      expect(customer.body).toContain('Choose one of the free times.');
    }
    await refusedPage(get(`${manage}/reschedule?starts_at=${encodeURIComponent(far)}`), 400);
    await refusedPage(post(`${manage}/reschedule`, new URLSearchParams({ starts_at: far }).toString()), 400);
    await refusedPage(post(`/console/bookings/${reference}/reschedule`, form({ starts_at: far })), 400);
    await refusedPage(
      post(
        '/console/book',
        form({
          location: 'camden',
          service_id: ids.services.cut!,
          slot: `${far}|${ids.staff.amara}`,
          first_name: 'Far',
          last_name: 'Future',
          phone: '07911 555126',
        }),
      ),
      400,
    );
  });

  it('reads a national number the desk types in the location’s country, as the public page does', async () => {
    const slots = (await get(`/console/book?location=camden&date=2026-11-26&service_id=${ids.services.cut}`))
      .body;
    const [, slot] = /<select id="slot" name="slot" required><option value="([^"]+)"/.exec(slots)!;
    const booked = await post(
      '/console/book',
      form({
        location: 'camden',
        service_id: ids.services.cut!,
        slot: slot!,
        first_name: 'Nat',
        last_name: 'Ional',
        phone: '07911 123 777',
      }),
    );
    expect(booked.statusCode, booked.body).toBe(303);
    const client = await t.request({
      method: 'GET',
      url: `/v1/clients?phone=${encodeURIComponent('+447911123777')}`,
    });
    expect(client.json().data).toMatchObject({ first_name: 'Nat', phone: '+447911123777' });
  });

  it('knows no action named after an object property', async () => {
    for (const action of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const response = await refusedPage(
        post(`/console/bookings/${reference}/action`, form({ action })),
        400,
      );
      expect(response.body).toContain('This action does not exist.');
    }
  });
});

describe('text shown on a page', () => {
  it('leaves out direction controls, so a note cannot turn the text after it backwards', async () => {
    const page = await get(`/console/bookings/${reference}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Prefers Amara 07911 123456');
    expect(page.body).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });
});

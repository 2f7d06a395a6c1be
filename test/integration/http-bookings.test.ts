import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UPCOMING_BOOKINGS_LIMIT } from '../../src/app/booking-service.ts';
import { createAppDeps } from '../../src/app/deps.ts';
import { buildApp } from '../../src/http/build-app.ts';
import {
  type CatalogueIds,
  catalogueIds,
  countBookings,
  getBooking,
  offeredStarts,
  postBooking,
} from '../helpers/booking-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * The small catalogue (London, GMT): Ana works Mon/Tue 09:00-17:00 at Soho (cut 45+15 min, colour
 * 90 min with a £20 deposit); Kings Cross has Booking Protection. The clock starts Monday 2026-11-23
 * 09:00Z and is put back after every test (which revives lapsed holds), so each test books slots of
 * its own that no other test touches.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp({ limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
});
afterEach(() => t.clock.set(TEST_START));
afterAll(async () => {
  await t.close();
});

const tue = (hhmm: string) => `2026-11-24T${hhmm}:00+00:00`;
const cut = (startsAt: string, extra: Record<string, unknown> = {}) => ({
  location_slug: 'soho',
  service_ids: [ids.services.cut],
  client_id: ids.jo,
  starts_at: startsAt,
  ...extra,
});
const REFERENCE = /^AC-[2-9A-HJKMNP-Z]{6}$/;
const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('POST /bookings', () => {
  it('confirms a booking without deposit, assigns staff by the any-staff rule, takes the slot', async () => {
    const response = await postBooking(t, cut(tue('10:00'), { notes: 'Fringe only' }));
    expect(response.statusCode).toBe(201);
    const booking = response.json().data;
    expect(booking).toEqual({
      reference: expect.stringMatching(REFERENCE),
      status: 'confirmed',
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
      ends_at: '2026-11-24T10:45:00+00:00',
      notes: 'Fringe only',
      created_at: '2026-11-23T09:00:00Z',
      updated_at: expect.stringMatching(UTC),
      pending_confirmation: null,
      late_cancellation_fee: null,
      no_show_fee: null,
      booking_protection: { applies: false },
      total_price: { amount: 4000, currency: 'GBP' },
      deposit: null,
      deposit_status: null,
      payment_url: null,
      booking_page_url: expect.stringMatching(/^http:\/\/localhost:80\/p\/manage\/[A-Za-z0-9_-]{43}$/),
      hold_expires_at: null,
      series_id: null,
    });
    const spelled = [
      booking.reference,
      booking.reference.toLowerCase(),
      ` ${booking.reference.replace('-', ' - ')} `,
    ];
    for (const reference of spelled) {
      const found = await getBooking(t, reference);
      expect(found.statusCode, reference).toBe(200);
      expect(found.json().data).toEqual(booking);
    }
    const starts = await offeredStarts(t, { serviceId: ids.services.cut!, date: '2026-11-24' });
    expect(starts).not.toContain(tue('10:00'));
    expect(starts).toContain(tue('11:00'));
  });

  it('holds a deposit booking as pending_payment with a checkout link until the hold lapses', async () => {
    const colour = { ...cut(tue('12:00')), service_ids: [ids.services.colour] };
    const response = await postBooking(t, colour, { host: 'localhost:8443' });
    expect(response.statusCode).toBe(201);
    const booking = response.json().data;
    expect(booking).toMatchObject({
      status: 'pending_payment',
      ends_at: '2026-11-24T13:30:00+00:00',
      deposit: { amount: 2000, currency: 'GBP' },
      payment_url: expect.stringMatching(/^http:\/\/localhost:8443\/checkout\/\S+$/),
    });
    const offered = () => offeredStarts(t, { serviceId: ids.services.colour!, date: '2026-11-24' });
    expect(await offered()).not.toContain(tue('12:00'));

    // Read back, it still carries its payment link (for the caller to be sent it again) and its hold.
    expect((await getBooking(t, booking.reference)).json().data).toMatchObject({
      status: 'pending_payment',
      deposit: { amount: 2000, currency: 'GBP' },
      deposit_status: 'pending',
      payment_url: booking.payment_url.replace('localhost:8443', 'localhost:80'),
      hold_expires_at: '2026-11-23T09:30:00Z',
    });
    t.clock.advance({ minutes: 29, seconds: 59 });
    expect((await getBooking(t, booking.reference)).json().data.status).toBe('pending_payment');
    t.clock.advance({ seconds: 1 });
    expect((await getBooking(t, booking.reference)).json().data).toMatchObject({
      status: 'expired',
      pending_confirmation: null,
      payment_url: null,
      hold_expires_at: null,
    });
    expect(await offered()).toContain(tue('12:00'));
  });

  it('writes exactly one event for a new booking, from nothing to confirmed, naming the key', async () => {
    const response = await postBooking(t, cut(tue('16:00')));
    const key = await t.database.db
      .selectFrom('api_keys')
      .select('id')
      .where('scope', '=', 'read_write')
      .executeTakeFirstOrThrow();
    const events = await t.database.db
      .selectFrom('booking_events')
      .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
      .select(['seq', 'from_status', 'to_status', 'actor', 'occurred_at'])
      .where('bookings.reference', '=', response.json().data.reference)
      .execute();
    expect(events).toEqual([
      {
        seq: 1,
        from_status: null,
        to_status: 'confirmed',
        actor: `api_key:${key.id}`,
        occurred_at: Date.parse(TEST_START),
      },
    ]);
  });
});

describe('POST /bookings refusals (nothing is written)', () => {
  const refuses = async (
    payload: Record<string, unknown>,
    expected: { status: number; code: string; param?: string },
    options: Parameters<typeof postBooking>[2] = {},
  ) => {
    const before = await countBookings(t.database.db);
    const response = await postBooking(t, payload, options);
    expect(response.statusCode, response.body).toBe(expected.status);
    const { code, param } = expected;
    expect(response.json().error).toMatchObject(param === undefined ? { code } : { code, param });
    expect(await countBookings(t.database.db)).toBe(before);
  };
  const without = (field: string) => {
    const body: Record<string, unknown> = cut(tue('09:00'));
    delete body[field];
    return body;
  };

  const at9 = (extra: Record<string, unknown>) => cut(tue('09:00'), extra);
  it.each([
    ['location_slug missing', () => without('location_slug'), 'location_slug'],
    ['service_ids missing', () => without('service_ids'), 'service_ids'],
    ['client_id missing', () => without('client_id'), 'client_id'],
    ['starts_at missing', () => without('starts_at'), 'starts_at'],
    ['an unknown field', () => at9({ colour: 'red' }), 'colour'],
    ['starts_at without offset', () => cut('2026-11-24T09:00:00'), 'starts_at'],
    ['a bad client uuid', () => at9({ client_id: 'jo' }), 'client_id'],
    ['a bad staff uuid', () => at9({ staff_id: 'ana' }), 'staff_id'],
    [
      'duplicate service_ids',
      () => at9({ service_ids: [ids.services.cut, ids.services.cut] }),
      'service_ids',
    ],
    ['11 service_ids', () => at9({ service_ids: Array.from({ length: 11 }, randomUUID) }), 'service_ids'],
    ['no service_ids', () => at9({ service_ids: [] }), 'service_ids'],
    ['notes of 1001 chars', () => at9({ notes: 'x'.repeat(1001) }), 'notes'],
    ['a bad success URL', () => at9({ checkout_success_url: 'ftp://x.example/' }), 'checkout_success_url'],
    // No Content-Security-Policy can name it: the checkout's Pay would be stopped on its way there.
    [
      'a success URL whose host has an underscore',
      () => at9({ checkout_success_url: 'https://my_shop.example.com/thanks' }),
      'checkout_success_url',
    ],
    [
      'a cancel URL at an IPv6 address',
      () => at9({ checkout_cancel_url: 'https://[2001:db8::1]/again' }),
      'checkout_cancel_url',
    ],
    ['a bad cancel URL', () => at9({ checkout_cancel_url: 'not a url' }), 'checkout_cancel_url'],
    [
      'a service not bookable online',
      () => at9({ service_ids: [ids.services['patch-test']] }),
      'service_ids',
    ],
    [
      'Bo for a colour',
      () => at9({ staff_id: ids.staff.bo, service_ids: [ids.services.colour] }),
      'staff_id',
    ],
    ['an inactive staff member', () => at9({ staff_id: ids.staff.cy }), 'staff_id'],
  ])('400 invalid_request for %s', async (_, payload, param) => {
    await refuses(payload(), { status: 400, code: 'invalid_request', param });
  });

  it('400 for an Idempotency-Key that is too long', async () => {
    const expected = { status: 400, code: 'invalid_request', param: 'Idempotency-Key' };
    await refuses(cut(tue('09:00')), expected, { idempotencyKey: 'k'.repeat(300) });
  });

  it('404 not_found naming location_slug for an unknown location', async () => {
    const body = cut(tue('09:00'), { location_slug: 'nowhere' });
    await refuses(body, { status: 404, code: 'not_found', param: 'location_slug' });
  });

  it('404 not_found for an unknown service or client', async () => {
    const service = cut(tue('09:00'), { service_ids: [randomUUID()] });
    await refuses(service, { status: 404, code: 'not_found', param: 'service_ids' });
    const client = cut(tue('09:00'), { client_id: randomUUID() });
    await refuses(client, { status: 404, code: 'not_found', param: 'client_id' });
  });

  it('names an unknown client before any other refusal, though the client is read with the bookings', async () => {
    const unknown = { status: 404, code: 'not_found', param: 'client_id' };
    // Refusals found before the bookings are read: an unknown service, a time off the grid.
    await refuses(cut(tue('09:00'), { client_id: randomUUID(), service_ids: [randomUUID()] }), unknown);
    await refuses(cut('2026-11-24T10:05:00+00:00', { client_id: randomUUID() }), unknown);
    // A refusal found with them: the slot is taken.
    const later = '2026-12-01T16:00:00+00:00';
    expect((await postBooking(t, cut(later))).statusCode).toBe(201);
    await refuses(cut(later, { client_id: randomUUID() }), unknown);
  });

  it.each([
    ['off the grid', '2026-11-24T10:05:00+00:00'],
    ['outside working hours', '2026-11-24T17:30:00+00:00'],
    ['before the minimum notice', '2026-11-23T09:45:00+00:00'],
  ])('409 conflict for a time %s', async (_, startsAt) => {
    await refuses(cut(startsAt), { status: 409, code: 'conflict', param: 'starts_at' });
  });

  it('409 conflict for a slot already booked', async () => {
    expect((await postBooking(t, cut(tue('14:00')))).statusCode).toBe(201);
    await refuses(cut(tue('14:00')), { status: 409, code: 'conflict', param: 'starts_at' });
    await refuses(cut(tue('14:30')), { status: 409, code: 'conflict', param: 'starts_at' });
  });

  it('409 booking_protection_required at a protected location', async () => {
    const body = cut('2026-11-26T10:00:00+00:00', { location_slug: 'kings-cross' });
    await refuses(body, { status: 409, code: 'booking_protection_required' });
  });

  it('403 insufficient_scope for a read key and 401 without a key', async () => {
    const scope = { status: 403, code: 'insufficient_scope', param: 'Authorization' };
    await refuses(cut(tue('09:00')), scope, { key: t.keys.read });
    const missing = { status: 401, code: 'missing_api_key', param: 'Authorization' };
    await refuses(cut(tue('09:00')), missing, { key: null });
  });
});

describe('Idempotency-Key', () => {
  it('replays the stored 201 for the same body in any key order, without a second booking', async () => {
    const key = randomUUID();
    const first = await postBooking(t, cut(tue('15:00')), { idempotencyKey: key });
    expect(first.statusCode).toBe(201);
    const before = await countBookings(t.database.db);
    t.clock.advance({ minutes: 5 });
    const reordered = Object.fromEntries(Object.entries(cut(tue('15:00'))).reverse());
    const again = await postBooking(t, reordered, { idempotencyKey: key });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await countBookings(t.database.db)).toBe(before);
  });

  it('takes any printable key, spaces inside it too ("any sufficiently unique string")', async () => {
    const key = `order 1234 / ${randomUUID()}`;
    const first = await postBooking(t, cut('2026-11-25T15:00:00+00:00'), { idempotencyKey: key });
    expect(first.statusCode, first.body).toBe(201);
    const again = await postBooking(t, cut('2026-11-25T15:00:00+00:00'), { idempotencyKey: key });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });

  it('refuses the same key with another body: 409 idempotency_key_reused', async () => {
    const key = randomUUID();
    expect((await postBooking(t, cut(tue('11:00')), { idempotencyKey: key })).statusCode).toBe(201);
    const other = await postBooking(t, cut(tue('11:00'), { notes: 'changed' }), { idempotencyKey: key });
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
  });

  it('stores a body the contract refuses (400): replayed for the same body, another body is reused', async () => {
    const key = randomUUID();
    const wrong = cut(tue('16:00'), { colour: 'blue' });
    const refused = await postBooking(t, wrong, { idempotencyKey: key });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'invalid_request', param: 'colour' });
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    const replay = await postBooking(t, wrong, { idempotencyKey: key });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual(refused.json());
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const before = await countBookings(t.database.db);
    const mended = await postBooking(t, cut(tue('16:00')), { idempotencyKey: key });
    expect(mended.statusCode).toBe(409);
    expect(mended.json().error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    expect(await countBookings(t.database.db)).toBe(before);
    // Another refused body under the key is another request too.
    const otherWrong = await postBooking(t, cut(tue('16:00'), { colour: 'red' }), { idempotencyKey: key });
    expect(otherWrong.json().error.code).toBe('idempotency_key_reused');
  });

  it('stores a refused body nested thousands deep like any other, in the envelope, not as a fault', async () => {
    const key = randomUUID();
    // Under 64 KiB: 20,000 arrays, one in another, where the body takes a string (written out, as
    // JSON.stringify would not go that deep either).
    const fields = JSON.stringify(cut(tue('16:30'))).slice(0, -1);
    const deep = `${fields},"notes":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const post = () =>
      t.request({
        method: 'POST',
        url: '/v1/bookings',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        payload: deep,
      });
    const refused = await post();
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'invalid_request', param: 'notes' });
    const replay = await post();
    expect(replay.statusCode).toBe(400);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('takes a refused body with an optional field sent null as the same body without it', async () => {
    const key = randomUUID();
    const withNulls = cut(tue('16:15'), { colour: 'blue', notes: null, staff_id: null, repeat: null });
    const refused = await postBooking(t, withNulls, { idempotencyKey: key });
    expect(refused.json().error).toMatchObject({ code: 'invalid_request', param: 'colour' });
    const without = await postBooking(t, cut(tue('16:15'), { colour: 'blue' }), { idempotencyKey: key });
    expect(without.statusCode, without.body).toBe(400);
    expect(without.json()).toEqual(refused.json());
    expect(without.headers['idempotent-replayed']).toBe('true');
    // A null where the field is required is no omission: another body.
    const nullSlug = await postBooking(t, cut(tue('16:15'), { colour: 'blue', location_slug: null }), {
      idempotencyKey: key,
    });
    expect(nullSlug.json().error.code).toBe('idempotency_key_reused');
  });

  it('stores no refusal of what is not the body: a query, a body that is not JSON, a bad key', async () => {
    const headers = (key: string) => ({
      authorization: `Bearer ${t.keys.readWrite}`,
      'idempotency-key': key,
      'content-type': 'application/json',
    });
    const body = JSON.stringify(cut('2026-12-07T16:00:00+00:00'));
    const post = (url: string, key: string, payload: string) =>
      t.app.inject({ method: 'POST', url, headers: headers(key), payload });
    const queried = await post('/v1/bookings?dry_run=1', 'not-stored-1', body);
    expect(queried.json().error).toMatchObject({ code: 'invalid_request', param: 'dry_run' });
    const notJson = await post('/v1/bookings', 'not-stored-2', '{"location_slug": ');
    expect(notJson.json().error).toMatchObject({ code: 'invalid_request', param: 'body' });
    expect((await post('/v1/bookings', 'not-stored-1', body)).statusCode).toBe(201);
    const later = await post(
      '/v1/bookings',
      'not-stored-2',
      JSON.stringify(cut('2026-12-08T16:00:00+00:00')),
    );
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    const badKey = await post(
      '/v1/bookings',
      ' ',
      JSON.stringify({ ...cut('2026-12-07T16:00:00+00:00'), colour: 1 }),
    );
    expect(badKey.json().error).toMatchObject({ code: 'invalid_request', param: 'colour' });
  });

  it('replays a stored 409 even after the slot has become free', async () => {
    const monday = '2026-11-23T13:00:00+00:00';
    const colour = { ...cut(monday), service_ids: [ids.services.colour] };
    expect((await postBooking(t, colour)).json().data.status).toBe('pending_payment');
    const key = randomUUID();
    const refused = await postBooking(t, cut(monday), { idempotencyKey: key });
    expect(refused.statusCode).toBe(409);
    t.clock.advance({ minutes: 31 }); // the colour's hold lapses: the slot is free again
    const replay = await postBooking(t, cut(monday), { idempotencyKey: key });
    expect(replay.statusCode).toBe(409);
    expect(replay.json()).toEqual(refused.json());
    expect((await postBooking(t, cut(monday), { idempotencyKey: randomUUID() })).statusCode).toBe(201);
  });

  it('replays the stored 201 though the same body would now be refused before its slot is read', async () => {
    // The record is read with the location's bookings: a request refused before that reads it then.
    const own = await startTestApp();
    try {
      const ownIds = await catalogueIds(own.database.db);
      const body = { ...cut(tue('10:00')), service_ids: [ownIds.services.cut], client_id: ownIds.jo };
      const first = await postBooking(own, body, { idempotencyKey: 'before-slot-1' });
      expect(first.statusCode).toBe(201);
      await own.database.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'soho').execute();
      const refused = await postBooking(own, body, { idempotencyKey: 'before-slot-2' });
      expect(refused.statusCode).toBe(404);
      expect(refused.json().error).toMatchObject({ code: 'not_found', param: 'location_slug' });
      const again = await postBooking(own, body, { idempotencyKey: 'before-slot-1' });
      expect(again.statusCode).toBe(201);
      expect(again.json()).toEqual(first.json());
      expect(again.headers['idempotent-replayed']).toBe('true');
      const other = await postBooking(
        own,
        { ...body, notes: 'changed' },
        { idempotencyKey: 'before-slot-1' },
      );
      expect(other.statusCode).toBe(409);
      expect(other.json().error.code).toBe('idempotency_key_reused');
      // The refusal was stored under its own key, and replayed.
      expect((await postBooking(own, body, { idempotencyKey: 'before-slot-2' })).json()).toEqual(
        refused.json(),
      );
      expect(await countBookings(own.database.db)).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('frees the key after 24 hours', async () => {
    const key = randomUUID();
    const first = await postBooking(t, cut('2026-11-23T10:00:00+00:00'), { idempotencyKey: key });
    expect(first.statusCode).toBe(201);
    t.clock.advance({ hours: 24, milliseconds: 1 });
    const later = await postBooking(t, cut('2026-11-30T12:00:00+00:00'), { idempotencyKey: key });
    expect(later.statusCode).toBe(201);
    expect(later.json().data.reference).not.toBe(first.json().data.reference);
  });

  it('replays the stored response after a restart on the same database file', async () => {
    const r = await startTestApp();
    const rIds = await catalogueIds(r.database.db);
    const body = { ...cut(tue('10:00')), service_ids: [rIds.services.cut], client_id: rIds.jo };
    const headers = { authorization: `Bearer ${r.keys.readWrite}`, 'idempotency-key': 'restart-1' };
    const first = await r.app.inject({ method: 'POST', url: '/v1/bookings', payload: body, headers });
    expect(first.statusCode).toBe(201);
    await r.app.close();
    await r.database.close();

    // A new process: new connections, and dependencies (caches, rate-limit store) built afresh on them.
    const reopened = r.database.reopen();
    const app = await buildApp(createAppDeps({ db: reopened.db, clock: r.clock, secret: 'test-secret' }));
    try {
      const again = await app.inject({ method: 'POST', url: '/v1/bookings', payload: body, headers });
      expect(again.statusCode).toBe(201);
      expect(again.json()).toEqual(first.json());
      expect(await countBookings(reopened.db)).toBe(1);
    } finally {
      await app.close();
      await reopened.close();
      await r.database.dispose();
    }
  });
});

describe('GET /clients/{client_id}/bookings', () => {
  it("lists the client's upcoming live bookings, soonest first, without past, cancelled or lapsed ones", async () => {
    const r = await startTestApp();
    try {
      const rIds = await catalogueIds(r.database.db);
      const book = async (startsAt: string, services = [rIds.services.cut]) => {
        const response = await postBooking(r, {
          location_slug: 'soho',
          service_ids: services,
          client_id: rIds.jo,
          starts_at: startsAt,
          staff_id: rIds.staff.ana,
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json().data.reference as string;
      };
      const later = await book('2026-11-30T14:00:00+00:00');
      const soon = await book(tue('11:00'));
      const cancelled = await book(tue('13:00'));
      await r.request({ method: 'POST', url: `/v1/bookings/${cancelled}/cancel` });
      // A deposit hold (colour) that lapses before anyone pays it.
      const lapsing = await book('2026-11-30T10:00:00+00:00', [rIds.services.colour]);

      const list = async () => {
        const response = await r.request({
          method: 'GET',
          url: `/v1/clients/${rIds.jo.toUpperCase()}/bookings`,
          key: r.keys.read,
        });
        expect(response.statusCode).toBe(200);
        return response.json().data.map((b: { reference: string }) => b.reference);
      };
      expect(await list()).toEqual([soon, lapsing, later]);
      r.clock.advance({ minutes: 31 });
      expect(await list()).toEqual([soon, later]);
      r.clock.set('2026-11-24T11:01:00Z');
      expect(await list()).toEqual([later]);

      const unknown = await r.request({ method: 'GET', url: `/v1/clients/${randomUUID()}/bookings` });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toMatchObject({ code: 'not_found', param: 'client_id' });
      const bad = await r.request({ method: 'GET', url: '/v1/clients/not-a-uuid/bookings' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toMatchObject({ code: 'invalid_request', param: 'client_id' });
    } finally {
      await r.close();
    }
  });
});

describe('GET /clients/{client_id}/bookings, past lapsed holds', () => {
  it('lists as many live bookings as it may, holds that lapsed unswept leaving no gap', async () => {
    const r = await startTestApp({ limits: { requestsPerMinute: 100_000 } });
    try {
      const rIds = await catalogueIds(r.database.db);
      const book = async (startsAt: string, services = [rIds.services.cut]) => {
        const response = await postBooking(r, {
          location_slug: 'soho',
          service_ids: services,
          client_id: rIds.jo,
          starts_at: startsAt,
          staff_id: rIds.staff.ana,
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json().data.reference as string;
      };
      // Two deposit holds (colour), soonest of all, that lapse before anyone pays them.
      await book(tue('09:00'), [rIds.services.colour]);
      await book(tue('11:00'), [rIds.services.colour]);
      const cuts: string[] = [];
      for (const day of ['2026-11-30', '2026-12-01', '2026-12-07']) {
        for (const hour of ['09', '10', '11', '12', '13', '14', '15', '16']) {
          cuts.push(await book(`${day}T${hour}:00:00+00:00`));
        }
      }
      r.clock.advance({ minutes: 31 });
      const response = await r.request({ method: 'GET', url: `/v1/clients/${rIds.jo}/bookings` });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data.map((b: { reference: string }) => b.reference)).toEqual(
        cuts.slice(0, UPCOMING_BOOKINGS_LIMIT),
      );
    } finally {
      await r.close();
    }
  });
});

describe('payment links', () => {
  let own: TestApp | undefined;
  afterEach(async () => {
    await own?.close();
    own = undefined;
  });
  /** Colour at a start no other test here books. */
  const colourAt = (startsAt: string) => ({ ...cut(startsAt), service_ids: [ids.services.colour] });
  const linkOf = (response: { statusCode: number; json(): { data: { payment_url: string } } }) => {
    expect(response.statusCode).toBe(201);
    return response.json().data.payment_url;
  };

  it('never name a host the server does not serve, whatever the Host header says', async () => {
    for (const [host, at] of [
      ['evil.example/phish?x=', '2026-11-23T11:00:00+00:00'],
      ['evil.example', '2026-11-23T14:30:00+00:00'],
      ['localhost@evil.example', '2026-11-30T15:00:00+00:00'],
    ] as const) {
      const link = new URL(linkOf(await postBooking(t, colourAt(at), { host })));
      expect(link.hostname, host).toBe('localhost');
      expect(link.pathname, host).toMatch(/^\/checkout\/[0-9a-f-]{36}$/);
      expect(link.search, host).toBe('');
    }
  });

  it('name a host the server serves (ALLOWED_HOSTS) as the request reached it', async () => {
    own = await startTestApp({ http: { allowedHosts: ['localhost', 'salon.example'] } });
    const ownIds = await catalogueIds(own.database.db);
    const body = { ...cut(tue('12:00')), client_id: ownIds.jo, service_ids: [ownIds.services.colour] };
    expect(linkOf(await postBooking(own, body, { host: 'salon.example:8443' }))).toMatch(
      /^http:\/\/salon\.example:8443\/checkout\/[0-9a-f-]{36}$/,
    );
  });

  it('start with PUBLIC_BASE_URL when it is set, stored so with the idempotent answer', async () => {
    own = await startTestApp({ http: { publicBaseUrl: 'https://book.salon.example/shop' } });
    const ownIds = await catalogueIds(own.database.db);
    const body = { ...cut(tue('12:00')), client_id: ownIds.jo, service_ids: [ownIds.services.colour] };
    const first = linkOf(await postBooking(own, body, { host: 'evil.example', idempotencyKey: 'links-1' }));
    expect(first).toMatch(/^https:\/\/book\.salon\.example\/shop\/checkout\/[0-9a-f-]{36}$/);
    const replay = linkOf(await postBooking(own, body, { host: 'localhost', idempotencyKey: 'links-1' }));
    expect(replay).toBe(first);
  });

  it('go only to a key that may change bookings: a read key reads every booking without them', async () => {
    const [free] = await offeredStarts(t, { serviceId: ids.services.colour!, date: '2026-12-01' });
    const made = await postBooking(t, colourAt(free!));
    expect(made.statusCode, made.body).toBe(201);
    const { reference } = made.json().data;
    const asWriter = (await getBooking(t, reference)).json().data;
    expect(asWriter).toMatchObject({
      status: 'pending_payment',
      payment_url: expect.stringMatching(/\/checkout\//),
      booking_page_url: expect.stringMatching(/\/p\/manage\//),
    });
    const read = await t.request({ method: 'GET', url: `/v1/bookings/${reference}`, key: t.keys.read });
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual({ ...asWriter, payment_url: null, booking_page_url: null });

    const listed = (key?: string) =>
      t.request({ method: 'GET', url: `/v1/clients/${ids.jo}/bookings`, ...(key && { key }) });
    const forWriter = (await listed())
      .json()
      .data.find((b: { reference: string }) => b.reference === reference);
    expect(forWriter).toMatchObject({
      payment_url: asWriter.payment_url,
      booking_page_url: asWriter.booking_page_url,
    });
    const forReader = await listed(t.keys.read);
    expect(forReader.json().data.length).toBeGreaterThan(0);
    for (const booking of forReader.json().data) {
      expect(booking).toMatchObject({ payment_url: null, booking_page_url: null });
    }
    for (const body of [read.body, forReader.body]) {
      expect(body).not.toContain('/checkout/');
      expect(body).not.toContain('/p/manage/');
    }
  });
});

describe('deposits without a payment provider', () => {
  it('are refused with 503 payments_unavailable and nothing written; bookings without one go through', async () => {
    const own = await startTestApp({ payments: null });
    try {
      const ownIds = await catalogueIds(own.database.db);
      const body = { ...cut(tue('12:00')), client_id: ownIds.jo, service_ids: [ownIds.services.colour] };
      const refused = await postBooking(own, body, { idempotencyKey: 'no-provider-1' });
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({
        error: { code: 'payments_unavailable', message: expect.stringContaining('deposit') },
      });
      expect(await countBookings(own.database.db)).toBe(0);
      const sessions = await own.database.db.selectFrom('checkout_sessions').select('id').execute();
      expect(sessions).toEqual([]);
      // Not stored as the key's answer (a 5xx): once a provider is there, the same request can book.
      const stored = await own.database.db
        .selectFrom('idempotency_records')
        .select('idempotency_key')
        .execute();
      expect(stored).toEqual([]);

      const cutOnly = { ...cut(tue('12:00')), client_id: ownIds.jo };
      expect((await postBooking(own, cutOnly)).json().data.status).toBe('confirmed');

      // A key that made a booking, sent with a body refused as this one: the key's reuse is what is said.
      const cutLater = { ...cut(tue('14:00')), client_id: ownIds.jo };
      expect((await postBooking(own, cutLater, { idempotencyKey: 'no-provider-2' })).statusCode).toBe(201);
      const reused = await postBooking(own, body, { idempotencyKey: 'no-provider-2' });
      expect(reused.statusCode).toBe(409);
      expect(reused.json().error.code).toBe('idempotency_key_reused');
    } finally {
      await own.close();
    }
  });
});

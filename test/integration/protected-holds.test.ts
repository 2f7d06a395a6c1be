import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { type CatalogueIds, catalogueIds, countBookings, postBooking } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { deliver } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * POST /v1/bookings/protected-holds (an addition to v1): Booking Protection's pending_confirmation hold
 * made through REST, what MCP `book` uses over `booking mcp --base-url`, while POST /v1/bookings keeps
 * the contract's 409 booking_protection_required. The demo catalogue: Islington has Booking Protection
 * (a 15-minute hold), Camden does not; Ben and Chloé work at Islington on Wednesdays. The clock stands
 * at Monday 23 November 2026, 09:00 in London, and is put back after every test.
 */
const NOW = '2026-11-23T09:00:00Z';
const HOLDS = '/v1/bookings/protected-holds';
const UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

let t: TestApp;
let ids: CatalogueIds;
let client: string;
beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
  const registered = await t.request({
    method: 'POST',
    url: '/v1/clients',
    payload: { first_name: 'Ana', last_name: 'Lee', phone: '+447911778899', email: 'ana@example.com' },
  });
  client = registered.json().data.id;
});
afterEach(() => t.clock.set(NOW));
afterAll(async () => {
  await t.close();
});

const wed = (hhmm: string) => `2026-11-25T${hhmm}:00+00:00`;
const at = (location: string, startsAt: string, service = 'cut') => ({
  location_slug: location,
  service_ids: [ids.services[service]],
  client_id: client,
  starts_at: startsAt,
});

function hold(
  payload: Record<string, unknown>,
  options: { idempotencyKey?: string; key?: string | null } = {},
) {
  return t.request({
    method: 'POST',
    url: HOLDS,
    payload,
    headers: options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey },
    ...(options.key !== undefined && { key: options.key }),
  });
}

async function messagesOf(reference: string) {
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
}

describe('POST /v1/bookings/protected-holds at a Booking Protection location', () => {
  it('holds the slot as pending_confirmation, with the booking page, and queues its link', async () => {
    const response = await hold(at('islington', wed('14:00')));
    expect(response.statusCode, response.body).toBe(201);
    const booking = response.json().data;
    expect(booking).toMatchObject({
      status: 'pending_confirmation',
      location_slug: 'islington',
      starts_at: wed('14:00'),
      client_id: client,
      pending_confirmation: { requirements: ['protection_setup'], expires_at: '2026-11-23T09:15:00Z' },
      hold_expires_at: '2026-11-23T09:15:00Z',
      booking_page_url: expect.stringMatching(/^http:\/\/localhost:80\/p\/manage\/[A-Za-z0-9_-]{43}$/),
      booking_protection: {
        applies: true,
        policy: { late_cancellation_fee_percentage: 50, no_show_fee_percentage: 100 },
        setup: { status: 'pending', payment_method_saved: false, completed_at: null },
      },
      deposit: null,
      payment_url: null,
      created_at: expect.stringMatching(UTC),
    });
    // The customer is sent the booking page by SMS and e-mail, as MCP book's hold is.
    const queued = await messagesOf(booking.reference);
    expect(queued.map((m) => `${m.kind}:${m.channel}:${m.to}:${m.status}`).sort()).toEqual([
      'booking_page_link:email:ana@example.com:pending',
      'booking_page_link:sms:+447911778899:pending',
    ]);
    // It reads back the same, and its source and event name the key, as POST /v1/bookings does.
    const read = await t.request({ method: 'GET', url: `/v1/bookings/${booking.reference}` });
    expect(read.json().data).toEqual(booking);
    const row = await t.database.db
      .selectFrom('bookings')
      .innerJoin('booking_events', 'booking_events.booking_id', 'bookings.id')
      .select(['bookings.source', 'booking_events.to_status', 'booking_events.actor'])
      .where('bookings.reference', '=', booking.reference)
      .execute();
    expect(row).toEqual([
      { source: 'api', to_status: 'pending_confirmation', actor: expect.stringMatching(/^api_key:/) },
    ]);
    // The hold lapses like MCP's.
    t.clock.advance({ minutes: 15 });
    const lapsed = await t.request({ method: 'GET', url: `/v1/bookings/${booking.reference}` });
    expect(lapsed.json().data).toMatchObject({ status: 'expired', pending_confirmation: null });
  });

  it('owes no late-cancellation fee while its card was never saved: cancelled late, as if it lapsed', async () => {
    // Tuesday 15:00: the hold for Wednesday 14:00 is inside Islington's window from the start.
    t.clock.set('2026-11-24T15:00:00Z');
    const held = await hold(at('islington', wed('14:00')));
    expect(held.statusCode, held.body).toBe(201);
    const { reference } = held.json().data;
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', change: { late: true, fee: null } });
    // No fee recorded for staff to charge.
    const fees = await t.database.db
      .selectFrom('booking_fees')
      .innerJoin('bookings', 'bookings.id', 'booking_fees.booking_id')
      .select('booking_fees.kind')
      .where('bookings.reference', '=', reference)
      .execute();
    expect(fees).toEqual([]);
    await deliver(t);
    const told = (await messagesOf(reference)).filter((m) => m.kind === 'cancelled');
    expect(told.length).toBeGreaterThan(0);
    for (const message of told) expect(message.body).not.toContain('fee');
  });

  it('asks for the deposit too when the services carry one', async () => {
    const response = await hold(at('islington', wed('10:00'), 'colour'));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['protection_setup', 'deposit'] },
      deposit: { amount: 2000, currency: 'GBP' },
      deposit_status: 'pending',
    });
  });

  it('replays the stored 201 for the same Idempotency-Key and body, without a second hold', async () => {
    const key = randomUUID();
    const first = await hold(at('islington', wed('15:00')), { idempotencyKey: key });
    expect(first.statusCode, first.body).toBe(201);
    const before = await countBookings(t.database.db);
    t.clock.advance({ minutes: 2 });
    const again = await hold(at('islington', wed('15:00')), { idempotencyKey: key });
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await countBookings(t.database.db)).toBe(before);
    expect((await messagesOf(first.json().data.reference)).length).toBe(2);
    // Another body, or the same key on POST /v1/bookings: the key is bound to what it was first sent with.
    const other = await hold(at('islington', wed('15:30')), { idempotencyKey: key });
    expect(other.statusCode).toBe(409);
    expect(other.json().error).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const elsewhere = await postBooking(t, at('islington', wed('15:00')), { idempotencyKey: key });
    expect(elsewhere.statusCode).toBe(409);
    // The same body at the other endpoint: said as another request, not as another body.
    expect(elsewhere.json().error).toMatchObject({
      code: 'idempotency_key_reused',
      message:
        'This Idempotency-Key was used in the last 24 hours for another request (another body or another endpoint); give this request a key of its own.',
    });
  });

  it('stores a body the contract refuses (400) under its key, as POST /v1/bookings does', async () => {
    const key = randomUUID();
    const wrong = { ...at('islington', wed('16:00')), colour: 'blue' };
    const refused = await hold(wrong, { idempotencyKey: key });
    expect(refused.json().error).toMatchObject({ code: 'invalid_request', param: 'colour' });
    const replay = await hold(wrong, { idempotencyKey: key });
    expect(replay.json()).toEqual(refused.json());
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const mended = await hold(at('islington', wed('16:00')), { idempotencyKey: key });
    expect(mended.json().error.code).toBe('idempotency_key_reused');
  });

  it('takes a key whose POST /v1/bookings answer was the 409 only as reused, never replaying that 409', async () => {
    const key = randomUUID();
    const friday = at('islington', '2026-11-27T10:00:00+00:00');
    const refused = await postBooking(t, friday, { idempotencyKey: key });
    expect(refused.json().error.code).toBe('booking_protection_required');
    const held = await hold(friday, { idempotencyKey: key });
    expect(held.statusCode).toBe(409);
    expect(held.json().error.code).toBe('idempotency_key_reused');
    const fresh = await hold(friday, { idempotencyKey: randomUUID() });
    expect(fresh.statusCode, fresh.body).toBe(201);
  });

  it('refuses a slot already held, as POST /v1/bookings does: 409 conflict slot_unavailable', async () => {
    // Thursdays only Chloé works at Islington.
    const thursday = at('islington', '2026-11-26T10:00:00+00:00');
    expect((await hold(thursday)).statusCode).toBe(201);
    const second = await hold({ ...thursday, client_id: ids.jo });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toMatchObject({
      code: 'conflict',
      reason: 'slot_unavailable',
      param: 'starts_at',
    });
  });
});

describe('POST /v1/bookings/protected-holds refusals (nothing is written)', () => {
  it('409 conflict naming location_slug at a location without Booking Protection, stored for its key', async () => {
    const before = await countBookings(t.database.db);
    const key = randomUUID();
    const response = await hold(at('camden', '2026-11-24T14:00:00+00:00'), { idempotencyKey: key });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({
      error: {
        code: 'conflict',
        message: expect.stringContaining('POST /v1/bookings'),
        param: 'location_slug',
      },
    });
    const replayed = await hold(at('camden', '2026-11-24T14:00:00+00:00'), { idempotencyKey: key });
    expect(replayed.statusCode).toBe(409);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await countBookings(t.database.db)).toBe(before);
    // There, POST /v1/bookings books.
    const booked = await postBooking(t, at('camden', '2026-11-24T14:00:00+00:00'));
    expect(booked.statusCode, booked.body).toBe(201);
    expect(booked.json().data.status).toBe('confirmed');
  });

  it('403 insufficient_scope for a read key, 401 without a key, 404 for an unknown location', async () => {
    const before = await countBookings(t.database.db);
    const read = await hold(at('islington', wed('12:00')), { key: t.keys.read });
    expect(read.statusCode).toBe(403);
    expect(read.json().error).toMatchObject({ code: 'insufficient_scope', param: 'Authorization' });
    const missing = await hold(at('islington', wed('12:00')), { key: null });
    expect(missing.statusCode).toBe(401);
    const unknown = await hold(at('nowhere', wed('12:00')));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'not_found', param: 'location_slug' });
    expect(await countBookings(t.database.db)).toBe(before);
  });

  it("counts against the key's rate limit: 429 rate_limited once its window is used up", async () => {
    const key = await t.keyFor('northside-hair', 'read_write', 1);
    const first = await hold(at('camden', '2026-11-24T15:00:00+00:00'), { key });
    expect(first.statusCode).toBe(409);
    expect(first.headers['x-ratelimit-limit']).toBe('1');
    const limited = await hold(at('islington', wed('12:30')), { key });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('leaves POST /v1/bookings to the contract: 409 booking_protection_required at Islington', async () => {
    const response = await postBooking(t, at('islington', wed('13:00')));
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('booking_protection_required');
  });
});

describe('POST /v1/bookings/protected-holds without a payment provider', () => {
  it('is 503 payments_unavailable: nobody could take the card', async () => {
    const own = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, payments: null });
    try {
      const ownIds = await catalogueIds(own.database.db);
      const response = await own.request({
        method: 'POST',
        url: HOLDS,
        payload: {
          location_slug: 'islington',
          service_ids: [ownIds.services.cut],
          client_id: ownIds.jo,
          starts_at: wed('14:00'),
        },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json().error.code).toBe('payments_unavailable');
      expect(await countBookings(own.database.db)).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe('POST /v1/bookings/protected-holds with repeat: one card for the series', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' };
  const form = (url: string) => t.app.inject({ method: 'POST', url, headers: FORM, payload: '' });

  /** The booking page's "Save a card", through the local provider's card page. */
  async function saveCardOn(pageUrl: string): Promise<void> {
    const path = new URL(pageUrl).pathname;
    const setup = await form(`${path}/setup`);
    expect(setup.statusCode, setup.body).toBe(303);
    const saved = await form(new URL(setup.headers.location as string).pathname);
    expect(saved.statusCode, saved.body).toBe(303);
  }

  const deliveriesOf = (reference: string) =>
    t.database.db
      .selectFrom('webhook_deliveries')
      .innerJoin('bookings', 'bookings.id', 'webhook_deliveries.ordering_key')
      .select('event_type')
      .where('bookings.reference', '=', reference)
      .where('event_type', '=', 'booking.confirmed')
      .execute();

  it('saving the card on one visit confirms every visit, with one confirmation and an event per visit', async () => {
    const endpoint = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: 'https://hooks.example.com/series', events: ['booking.confirmed'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const response = await hold({ ...at('islington', wed('11:00')), repeat: { every_weeks: 1, count: 3 } });
    expect(response.statusCode, response.body).toBe(201);
    const visits = response.json().data.series.occurrences as {
      reference: string;
      booking_page_url: string;
    }[];
    expect(visits).toHaveLength(3);
    // Minutes later (within the hold), the customer saves a card on the second visit's page.
    t.clock.advance({ minutes: 5 });
    await saveCardOn(visits[1]!.booking_page_url);
    for (const visit of visits) {
      const read = (await t.request({ method: 'GET', url: `/v1/bookings/${visit.reference}` })).json().data;
      expect(read, visit.reference).toMatchObject({
        status: 'confirmed',
        pending_confirmation: null,
        booking_protection: { setup: { status: 'succeeded', payment_method_saved: true } },
      });
      expect(await deliveriesOf(visit.reference)).toEqual([{ event_type: 'booking.confirmed' }]);
    }
    // The customer hears one confirmation (by SMS and e-mail), and each visit keeps its reminder.
    const confirmations = [];
    for (const visit of visits) {
      const messages = await messagesOf(visit.reference);
      confirmations.push(...messages.filter((m) => m.kind === 'confirmed'));
      expect(messages.filter((m) => m.kind === 'reminder')).toHaveLength(2);
      expect(messages.filter((m) => m.kind === 'booking_page_link' && m.status === 'pending')).toEqual([]);
    }
    // The first visit's, though the card was saved on the second's page, naming the two after it.
    expect(confirmations.map((m) => `${m.reference}:${m.channel}`).sort()).toEqual([
      `${visits[0]!.reference}:email`,
      `${visits[0]!.reference}:sms`,
    ]);
    await deliver(t);
    const sms = (await messagesOf(visits[0]!.reference)).find(
      (m) => m.kind === 'confirmed' && m.channel === 'sms',
    );
    expect(JSON.parse(sms!.body!).text).toContain(
      'Also booked: the 2 visits after it, every week, the last on',
    );
    // Past the hold's 15 minutes, nothing lapses.
    t.clock.advance({ minutes: 15 });
    for (const visit of visits) {
      const read = (await t.request({ method: 'GET', url: `/v1/bookings/${visit.reference}` })).json().data;
      expect(read.status).toBe('confirmed');
    }
  });

  it("saving the card ends the client's waiting entry the held time gives what it waits for", async () => {
    const joined = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: {
        location_slug: 'islington',
        service_ids: [ids.services.cut],
        client_id: client,
        from_date: '2026-12-09',
        to_date: '2026-12-09',
      },
    });
    expect(joined.statusCode, joined.body).toBe(201);
    const entry = async () =>
      (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.json().data.id}` })).json().data;
    const response = await hold(at('islington', '2026-12-09T10:00:00+00:00'));
    expect(response.statusCode, response.body).toBe(201);
    const booking = response.json().data;
    // Held, the time may yet lapse: the client keeps their place.
    expect(await entry()).toMatchObject({ status: 'waiting' });
    await saveCardOn(booking.booking_page_url);
    expect(await entry()).toMatchObject({ status: 'booked', booking_reference: booking.reference });
  });

  it('leaves a visit still owing its deposit waiting for that alone, its page link sent', async () => {
    const response = await hold({
      ...at('islington', '2026-12-30T14:00:00+00:00', 'colour'),
      repeat: { every_weeks: 1, count: 2 },
    });
    expect(response.statusCode, response.body).toBe(201);
    const visits = response.json().data.series.occurrences as {
      reference: string;
      booking_page_url: string;
    }[];
    await saveCardOn(visits[0]!.booking_page_url);
    for (const visit of visits) {
      const read = (await t.request({ method: 'GET', url: `/v1/bookings/${visit.reference}` })).json().data;
      expect(read, visit.reference).toMatchObject({
        status: 'pending_confirmation',
        pending_confirmation: { requirements: ['deposit'] },
        booking_protection: { setup: { status: 'succeeded', payment_method_saved: true } },
      });
    }
    const links = (await messagesOf(visits[1]!.reference)).filter((m) => m.kind === 'booking_page_link');
    expect(links.filter((m) => m.status === 'pending')).toHaveLength(2);
  });
});

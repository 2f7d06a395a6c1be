import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import { HttpBookingApi } from '../../src/mcp/http-api.ts';
import { InProcessBookingApi, principalOfKey } from '../../src/mcp/in-process-api.ts';
import { type CatalogueIds, catalogueIds, countBookings } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * HttpBookingApi against a real listening server on a real SQLite file (the small catalogue; the
 * clock stands at Monday 2026-11-23 09:00Z; Ana works Tuesdays 09:00-17:00 at Soho), compared with
 * InProcessBookingApi over the same app.
 */

interface Served {
  t: TestApp;
  /** http://127.0.0.1:port */
  origin: string;
  /** The requests made through `fetch`, method and URL. */
  requests: { method: string; url: string; headers: Headers }[];
  /** A fetch that records every request, then passes it on. */
  fetch: typeof fetch;
  http(options?: { apiKey?: string; now?: () => number; catalogueTtlMs?: number }): HttpBookingApi;
  inProcess(): Promise<InProcessBookingApi>;
}

async function serve(options: Parameters<typeof startTestApp>[0] = {}): Promise<Served> {
  const t = await startTestApp({ limits: { requestsPerMinute: 100_000 }, ...options });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const requests: Served['requests'] = [];
  const recording: typeof fetch = (input, init) => {
    requests.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: new Headers(init?.headers),
    });
    return fetch(input, init);
  };
  return {
    t,
    origin,
    requests,
    fetch: recording,
    http: (o = {}) =>
      new HttpBookingApi({
        baseUrl: `${origin}/v1`,
        apiKey: o.apiKey ?? t.keys.readWrite,
        fetch: recording,
        ...(o.now && { now: o.now }),
        ...(o.catalogueTtlMs !== undefined && { catalogueTtlMs: o.catalogueTtlMs }),
      }),
    inProcess: async () =>
      InProcessBookingApi.forToolCall(t.deps, await principalOfKey(t.deps, t.keys.readWrite), {
        publicBaseUrl: origin,
      }),
  };
}

/** The AppError a promise rejects with (fails the test when it resolves or throws something else). */
async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const tue = (hhmm: string) => `2026-11-24T${hhmm}:00+00:00`;

describe('HttpBookingApi against a listening server', () => {
  let s: Served;
  let ids: CatalogueIds;
  beforeAll(async () => {
    s = await serve();
    ids = await catalogueIds(s.t.database.db);
  });
  afterAll(async () => {
    await s.t.close();
  });

  it('answers the reads exactly as the in-process implementation does', async () => {
    const http = s.http();
    const local = await s.inProcess();
    const locations = await http.listLocations();
    expect(locations.map((l) => l.slug)).toEqual(['kings-cross', 'soho']);
    expect(locations).toEqual(await local.listLocations());

    const services = await http.listServices('soho');
    expect(services.length).toBe(3);
    expect(services).toEqual(await local.listServices('soho'));

    const staff = await http.listStaff('soho');
    expect(staff.map((m) => m.name)).toEqual(['Ana', 'Bo']);
    expect(staff).toEqual(await local.listStaff('soho'));

    const request = { serviceIds: [ids.services.cut!], date: '2026-11-24', days: 2 };
    const slots = await http.availability('soho', request);
    expect(slots.slots.length).toBeGreaterThan(10);
    expect(slots).toEqual(await local.availability('soho', request));
    const ana = { ...request, staffId: ids.staff.ana! };
    expect(await http.availability('soho', ana)).toEqual(await local.availability('soho', ana));

    const jo = await http.findClient({ phone: '+447911123456' });
    expect(jo).toMatchObject({ id: ids.jo, first_name: 'Jo' });
    expect(jo).toEqual(await local.findClient({ phone: '+447911123456' }));
    expect(await http.findClient({ email: 'jo@example.com' })).toEqual(jo);
  });

  it('sends the key, Accept and (with a body) Content-Type; encodes the query', async () => {
    const http = s.http();
    s.requests.length = 0;
    await http.availability('soho', { serviceIds: [ids.services.cut!], date: '2026-11-24', days: 1 });
    await http.findClient({ phone: '+447911123456' });
    await http.registerClient({ first_name: 'Jo', last_name: 'Bloggs', phone: '+447911123456' });
    const [availability, find, register] = s.requests;
    expect(availability!.url).toBe(
      `${s.origin}/v1/locations/soho/availability?service_ids=${ids.services.cut}&date=2026-11-24&days=1`,
    );
    expect(find!.url).toBe(`${s.origin}/v1/clients?phone=%2B447911123456`);
    for (const request of s.requests) {
      expect(request.headers.get('authorization')).toBe(`Bearer ${s.t.keys.readWrite}`);
      expect(request.headers.get('accept')).toBe('application/json');
    }
    expect(find!.headers.get('content-type')).toBeNull();
    expect(register!.method).toBe('POST');
    expect(register!.headers.get('content-type')).toBe('application/json');
  });

  it('registers, books idempotently, finds, moves and cancels a booking over HTTP', async () => {
    const http = s.http();
    const sam = { first_name: 'Sam', last_name: 'Lee', phone: '+447400123456' };
    const first = await http.registerClient(sam);
    expect(first).toMatchObject({ created: true, client: { first_name: 'Sam', phone: '+447400123456' } });
    const again = await http.registerClient(sam);
    expect(again).toEqual({ created: false, client: first.client });

    const before = await countBookings(s.t.database.db);
    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut!],
      client_id: first.client.id,
      starts_at: tue('10:00'),
    };
    const key = randomUUID();
    const { booking: created, replayed: firstReplayed } = await http.createBooking(body, key);
    expect(created).toMatchObject({ status: 'confirmed', starts_at: tue('10:00'), staff_id: ids.staff.ana });
    expect(firstReplayed).toBe(false);
    const replay = await http.createBooking(body, key);
    expect(replay).toMatchObject({ booking: { reference: created.reference }, replayed: true });
    expect(await countBookings(s.t.database.db)).toBe(before + 1);
    const posts = s.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/v1/bookings'));
    expect(posts.at(-1)!.headers.get('idempotency-key')).toBe(key);

    const found = await http.getBooking(created.reference.toLowerCase());
    expect(found).toMatchObject({
      reference: created.reference,
      status: 'confirmed',
      client_id: first.client.id,
    });
    expect(await http.upcomingBookings(first.client.id)).toEqual([found]);

    const moved = await http.rescheduleBooking(created.reference, { starts_at: tue('11:00') });
    expect(moved).toMatchObject({
      reference: created.reference,
      starts_at: tue('11:00'),
      ends_at: tue('11:45'),
    });
    const { change, following, ...after } = moved;
    expect(change).toEqual({ dry_run: false, late: false, deposit_refunded: null, fee: null });
    expect(following).toEqual([]);
    expect(await http.getBooking(created.reference)).toEqual(after);

    const cancelled = await http.cancelBooking(created.reference, { reason: 'Client called' });
    expect(cancelled).toMatchObject({ reference: created.reference, status: 'cancelled' });
    expect((await http.getBooking(created.reference)).status).toBe('cancelled');
    expect(await http.upcomingBookings(first.client.id)).toEqual([]);
  });

  it('cancels without a reason by sending an empty object', async () => {
    const http = s.http();
    const { booking } = await http.createBooking(
      { location_slug: 'soho', service_ids: [ids.services.cut!], client_id: ids.jo, starts_at: tue('15:00') },
      randomUUID(),
    );
    s.requests.length = 0;
    expect(await http.cancelBooking(booking.reference)).toMatchObject({ status: 'cancelled' });
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.url).toBe(`${s.origin}/v1/bookings/${booking.reference}/cancel`);
  });

  it('maps the contract error envelope to AppErrors with code, param and reason', async () => {
    const http = s.http();
    const unknown = await failure(http.listServices('nowhere'));
    expect(unknown).toMatchObject({ code: 'not_found', param: 'slug' });
    expect(unknown.message).toContain('nowhere');

    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut!],
      client_id: ids.jo,
      starts_at: tue('14:00'),
    };
    await http.createBooking(body, randomUUID());
    const taken = await failure(http.createBooking(body, randomUUID()));
    expect(taken).toMatchObject({ code: 'conflict', param: 'starts_at' });
    expect(taken.reason).toBe('slot_unavailable');

    const missing = await failure(http.getBooking('AC-2222XX'));
    expect(missing).toMatchObject({ code: 'not_found', param: 'reference' });
    expect(await failure(http.getBooking('..'))).toMatchObject({ code: 'not_found', param: 'reference' });
    const invalid = await failure(
      http.availability('soho', { serviceIds: ['cut'], date: '2026-11-24', days: 1 }),
    );
    expect(invalid).toMatchObject({ code: 'invalid_request', param: 'service_ids' });

    expect(await http.findClient({ phone: '+447400999888' })).toBeNull();
    expect(await http.findClient({ email: 'nobody@example.com' })).toBeNull();
    expect(await (await s.inProcess()).findClient({ phone: '+447400999888' })).toBeNull();
  });

  it('passes on the key errors: read-only scope, a bad key', async () => {
    const readOnly = s.http({ apiKey: s.t.keys.read });
    expect((await readOnly.listLocations()).length).toBe(2);
    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut!],
      client_id: ids.jo,
      starts_at: tue('16:00'),
    };
    const before = await countBookings(s.t.database.db);
    const scope = await failure(readOnly.createBooking(body, randomUUID()));
    expect(scope).toMatchObject({ code: 'insufficient_scope', param: 'Authorization' });
    expect(await countBookings(s.t.database.db)).toBe(before);

    const bad = s.http({ apiKey: 'bk_not_a_real_key' });
    expect(await failure(bad.listLocations())).toMatchObject({ code: 'invalid_api_key' });
  });

  it('passes on rate limiting with retryAfterSeconds from Retry-After', async () => {
    const limited = s.http({ apiKey: await s.t.keyFor('acme-hair', 'read_write', 2) });
    await limited.findClient({ phone: '+447911123456' });
    await limited.getBooking('AC-2222XX').catch(() => undefined);
    const refused = await failure(limited.findClient({ phone: '+447911123456' }));
    expect(refused.code).toBe('rate_limited');
    expect(refused.details?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // The test clock stands at 09:00:00, the start of a minute's window.
    expect(refused.details?.retryAfterSeconds).toBe(60);
  });
});

describe('HttpBookingApi at a Booking Protection location (POST /v1/bookings/protected-holds)', () => {
  let s: Served;
  let ids: CatalogueIds;
  beforeAll(async () => {
    s = await serve();
    ids = await catalogueIds(s.t.database.db);
  });
  afterAll(async () => {
    await s.t.close();
  });

  // Bo works at Kings Cross (Booking Protection) on Thursdays, 10:00 to 18:00.
  const thu = (hhmm: string) => `2026-11-26T${hhmm}:00+00:00`;
  const at = (location: string, startsAt: string) => ({
    location_slug: location,
    service_ids: [ids.services.cut!],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  const posts = () =>
    s.requests
      .filter((r) => r.method === 'POST')
      .map((r) => `${new URL(r.url).pathname} ${r.headers.get('idempotency-key')}`);
  /** A fetch that says Booking Protection applies (or not) at every location, as a stale listing would. */
  const listingSays =
    (applies: boolean): typeof fetch =>
    async (input, init) => {
      const response = await s.fetch(input, init);
      if (new URL(String(input)).pathname !== '/v1/locations') return response;
      const body = (await response.json()) as { data: { booking_protection_policy: { applies: boolean } }[] };
      for (const location of body.data) location.booking_protection_policy.applies = applies;
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
  const httpWith = (fetcher: typeof fetch) =>
    new HttpBookingApi({ baseUrl: `${s.origin}/v1`, apiKey: s.t.keys.readWrite, fetch: fetcher });

  it('makes the pending_confirmation hold, as the in-process implementation does, and replays it', async () => {
    const http = s.http();
    const key = randomUUID();
    s.requests.length = 0;
    const { booking, replayed } = await http.createBooking(at('kings-cross', thu('10:00')), key);
    expect(replayed).toBe(false);
    expect(booking).toMatchObject({
      status: 'pending_confirmation',
      pending_confirmation: { requirements: ['protection_setup'] },
      hold_expires_at: '2026-11-23T09:15:00Z',
      booking_page_url: expect.stringMatching(/\/p\/manage\/[A-Za-z0-9_-]{43}$/),
      deposit: null,
      payment_url: null,
    });
    expect(posts()).toEqual([`/v1/bookings/protected-holds ${key}`]);
    const again = await http.createBooking(at('kings-cross', thu('10:00')), key);
    expect(again).toEqual({ booking, replayed: true });

    // In process (MCP book's hostedFlow) the same request makes the same kind of booking.
    const local = await s.inProcess();
    const { booking: held } = await local.createBooking(at('kings-cross', thu('12:00')), randomUUID());
    const shape = (b: Record<string, unknown>) => Object.keys(b).sort();
    expect(shape(booking)).toEqual(shape(held));
    const { reference: _r, starts_at: _s, ends_at: _e, booking_page_url: _u, ...rest } = booking;
    expect(held).toMatchObject({ ...rest, created_at: held.created_at, updated_at: held.updated_at });
    expect(await http.getBooking(booking.reference)).toEqual(await local.getBooking(booking.reference));
  });

  it('asks the hold endpoint when POST /v1/bookings says Booking Protection applies (a stale listing)', async () => {
    const http = httpWith(listingSays(false));
    const key = randomUUID();
    s.requests.length = 0;
    const { booking } = await http.createBooking(at('kings-cross', thu('14:00')), key);
    expect(booking.status).toBe('pending_confirmation');
    const [first, second] = posts();
    expect(first).toBe(`/v1/bookings ${key}`);
    expect(second).toMatch(/^\/v1\/bookings\/protected-holds switched-[0-9a-f]{64}$/);
    // A retry meets the same answers: the stored 409, then the stored hold.
    const before = await countBookings(s.t.database.db);
    expect(await http.createBooking(at('kings-cross', thu('14:00')), key)).toEqual({
      booking,
      replayed: true,
    });
    expect(posts().slice(2)).toEqual([first, second]);
    expect(await countBookings(s.t.database.db)).toBe(before);
  });

  it('books with POST /v1/bookings when the hold endpoint says protection does not apply', async () => {
    const http = httpWith(listingSays(true));
    const key = randomUUID();
    s.requests.length = 0;
    const { booking } = await http.createBooking(at('soho', '2026-11-24T10:00:00+00:00'), key);
    expect(booking.status).toBe('confirmed');
    const [first, second] = posts();
    expect(first).toBe(`/v1/bookings/protected-holds ${key}`);
    expect(second).toMatch(/^\/v1\/bookings switched-[0-9a-f]{64}$/);
  });

  it('meets an instance from before the endpoint (405) with POST /v1/bookings and its 409, as before', async () => {
    // The path of the hold endpoint with another method: 405, as POST is on an instance without it.
    const older: typeof fetch = (input, init) =>
      s.fetch(input, String(input).endsWith('/protected-holds') ? { ...init, method: 'PUT' } : init);
    const http = httpWith(older);
    const key = randomUUID();
    s.requests.length = 0;
    const refused = await failure(http.createBooking(at('kings-cross', thu('16:00')), key));
    expect(refused.code).toBe('booking_protection_required');
    expect(posts()).toEqual([`/v1/bookings ${key}`]);
  });
});

describe('HttpBookingApi pagination', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ catalogues: [smallCatalogue({ extraServices: 130 })] });
  });
  afterAll(async () => {
    await s.t.close();
  });

  it('follows next_cursor through every page, 100 at a time', async () => {
    const services = await s.http().listServices('soho');
    expect(services).toHaveLength(133);
    expect(new Set(services.map((service) => service.id)).size).toBe(133);
    expect(services).toEqual(await (await s.inProcess()).listServices('soho'));
    expect(s.requests.map((r) => new URL(r.url).searchParams.get('limit'))).toEqual(['100', '100']);
    expect(new URL(s.requests[1]!.url).searchParams.get('cursor')).toBeTruthy();
  });
});

describe('HttpBookingApi catalogue cache', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s.t.close();
  });
  const count = (path: string) => s.requests.filter((r) => new URL(r.url).pathname === path).length;

  it('keeps the listings for the TTL by the injected clock, then asks again', async () => {
    let now = 1_000_000;
    const http = s.http({ now: () => now });
    expect(http.now()).toBe(1_000_000);
    const first = await http.listLocations();
    now += 59_999;
    expect(await http.listLocations()).toEqual(first);
    expect(count('/v1/locations')).toBe(1);
    now += 1;
    expect(await http.listLocations()).toEqual(first);
    expect(count('/v1/locations')).toBe(2);
  });

  it('keeps services and staff per location, shares in-flight requests, keeps no failure', async () => {
    const now = 5_000;
    const http = s.http({ now: () => now, catalogueTtlMs: 30_000 });
    await Promise.all([http.listServices('soho'), http.listServices('soho'), http.listStaff('soho')]);
    await http.listServices('kings-cross');
    await http.listServices('soho');
    expect(count('/v1/locations/soho/services')).toBe(1);
    expect(count('/v1/locations/soho/staff')).toBe(1);
    expect(count('/v1/locations/kings-cross/services')).toBe(1);

    await failure(http.listServices('nowhere'));
    await failure(http.listServices('nowhere'));
    expect(count('/v1/locations/nowhere/services')).toBe(2);
  });

  it('hands out copies, and never caches bookings, clients or availability', async () => {
    const http = s.http();
    const services = await http.listServices('soho');
    services.length = 0;
    expect(await http.listServices('soho')).toHaveLength(3);
    await http.findClient({ phone: '+447911123456' });
    await http.findClient({ phone: '+447911123456' });
    expect(count('/v1/clients')).toBe(2);
    const cut = (await http.listServices('soho')).find((service) => service.name === 'Cut')!;
    const request = { serviceIds: [cut.id], date: '2026-11-24', days: 1 };
    await http.availability('soho', request);
    await http.availability('soho', request);
    expect(count('/v1/locations/soho/availability')).toBe(2);
  });
});

describe('HttpBookingApi failures that are not the contract envelope', () => {
  const answering =
    (status: number, body: string, headers: Record<string, string> = {}): typeof fetch =>
    async () =>
      new Response(body, { status, headers });
  const api = (fetcher: typeof fetch) =>
    new HttpBookingApi({ baseUrl: 'https://salon.example/v1/', apiKey: 'bk_secret_key', fetch: fetcher });
  const SECRET = /bk_secret_key|447400999888|jo@example/;

  it('is server_error when nothing listens on the port', async () => {
    const port = await closedPort();
    const http = new HttpBookingApi({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'bk_secret_key' });
    const error = await failure(http.findClient({ phone: '+447400999888' }));
    expect(error.code).toBe('server_error');
    expect(error.message).not.toMatch(SECRET);
  });

  it('is server_error on a timeout, and every request carries a timeout signal', async () => {
    let signal: AbortSignal | null | undefined;
    const timingOut: typeof fetch = async (_input, init) => {
      signal = init?.signal;
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    };
    const error = await failure(api(timingOut).findClient({ email: 'jo@example.com' }));
    expect(error.code).toBe('server_error');
    expect(error.message).toMatch(/10 seconds/);
    expect(error.message).not.toMatch(SECRET);
    expect(signal).toBeInstanceOf(AbortSignal);
  });

  it('is server_error for an unknown code, a body that is not the envelope, or a redirect', async () => {
    const newer = JSON.stringify({ error: { code: 'payment_required', message: 'Pay first.' } });
    const unknown = await failure(api(answering(402, newer)).getBooking('AC-2222XX'));
    expect(unknown.code).toBe('server_error');
    expect(unknown.message).toContain('payment_required');

    const html = await failure(api(answering(502, '<html>Bad gateway</html>')).listLocations());
    expect(html.code).toBe('server_error');
    const redirect = answering(301, '', { location: 'https://elsewhere.example/' });
    expect((await failure(api(redirect).listLocations())).code).toBe('server_error');
    const noData = await failure(api(answering(200, '{"items":[]}')).listLocations());
    expect(noData.code).toBe('server_error');
  });

  it('defaults retryAfterSeconds to 1 when Retry-After is missing or not seconds', async () => {
    const envelope = JSON.stringify({ error: { code: 'rate_limited', message: 'Slow down.' } });
    const unusable: Record<string, string>[] = [
      {},
      { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' },
      { 'retry-after': 'soon' },
    ];
    for (const headers of unusable) {
      const error = await failure(api(answering(429, envelope, headers)).listLocations());
      expect(error).toMatchObject({ code: 'rate_limited', details: { retryAfterSeconds: 1 } });
    }
    const seven = await failure(api(answering(429, envelope, { 'retry-after': '7' })).listLocations());
    expect(seven.details).toEqual({ retryAfterSeconds: 7 });
  });

  it('refuses a base URL that would send the key in the clear to another machine', () => {
    expect(() => new HttpBookingApi({ baseUrl: 'http://salon.example/v1', apiKey: 'k' })).toThrow(TypeError);
    expect(() => new HttpBookingApi({ baseUrl: 'not a url', apiKey: 'k' })).toThrow(TypeError);
    expect(() => new HttpBookingApi({ baseUrl: 'http://localhost:8080/v1', apiKey: 'k' })).not.toThrow();
  });
});

/** A port nothing listens on: one the system just handed out and got back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

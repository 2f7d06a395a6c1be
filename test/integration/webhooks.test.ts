import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { registerClient } from '../../src/app/client-service.ts';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import {
  deliverAllDueWebhooks,
  pruneDeliveredWebhooks,
  startWebhookWorker,
  type WebhookDelivery,
} from '../../src/app/webhooks/delivery.ts';
import { httpSender } from '../../src/app/webhooks/sender.ts';
import { openDatabase } from '../../src/data/database.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Webhooks through their real interfaces (design.md 9.2): endpoints managed over REST, events
 * written by the changes themselves, delivered over HTTP to a local receiver that verifies each
 * signature, on the retry schedule of an injected clock.
 */
const LOOPBACK_ALLOWED = { allowInsecure: true, allowPrivateNetworks: false };

let t: TestApp;
let ids: CatalogueIds;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const sender = httpSender(LOOPBACK_ALLOWED, 2_000);

beforeAll(async () => {
  t = await startTestApp({ webhookDestinations: LOOPBACK_ALLOWED });
  ids = await catalogueIds(t.database.db);
  receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
});
afterAll(async () => {
  sender.close();
  await receiver.close();
  await t.close();
});

const delivery = (): WebhookDelivery => ({ db: t.database.db, clock: t.clock, sender });
const deliver = () => deliverAllDueWebhooks(delivery());

async function subscribe(events: string[], url = receiver.url) {
  const response = await t.request({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    payload: { url, events },
  });
  expect(response.statusCode, response.body).toBe(201);
  const endpoint = response.json().data;
  receiver.state.secret = endpoint.secret;
  return endpoint as { id: string; secret: string; status: string };
}

async function unsubscribeAll() {
  const list = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
  for (const endpoint of list.json().data) {
    await t.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${endpoint.id}` });
  }
}

async function book(startsAt: string, service = 'cut'): Promise<string> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services[service]],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

beforeEach(() => {
  t.clock.set(TEST_START);
  receiver.received.length = 0;
  receiver.state.answers = [];
  receiver.state.fallback = 200;
});
afterEach(unsubscribeAll);

describe('endpoints over REST', () => {
  it('shows the secret once, lists and deletes, and needs a read_write key even to read', async () => {
    const created = await subscribe(['booking.created']);
    expect(created.secret).toMatch(/^whsec_/);
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${created.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json().data).not.toHaveProperty('secret');
    expect(got.json().data).toMatchObject({
      url: receiver.url,
      events: ['booking.created'],
      status: 'enabled',
    });
    const readOnly = await t.request({ method: 'GET', url: '/v1/webhook-endpoints', key: t.keys.read });
    expect(readOnly.statusCode).toBe(403);
    const deleted = await t.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${created.id}` });
    expect(deleted.statusCode).toBe(204);
    const gone = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${created.id}` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBe('not_found');
  });

  it.each([
    ['plain http to a public host', 'http://hooks.example.com/in'],
    ['a private address', 'https://10.1.2.3/in'],
    ['a link-local address', 'https://[fe80::1]/in'],
    ['the cloud metadata address', 'https://169.254.169.254/latest'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/in'],
    ['a private address through NAT64', 'https://[64:ff9b::10.1.2.3]/in'],
    ['the cloud metadata address through NAT64', 'https://[64:ff9b::a9fe:a9fe]/latest'],
    ['a 6to4 address of a private one', 'https://[2002:c0a8:101::1]/in'],
    ['credentials in the URL', 'https://user:pass@hooks.example.com/in'],
    ['not a URL', 'hooks.example.com', 'url is not a valid URL.'],
    ['port 0', 'https://hooks.example.com:0/in', 'url port must be between 1 and 65535.'],
    [
      'no host (read by the parser as the host "in")',
      'https:///in',
      'url must be written out as https://host/path.',
    ],
    ['no slashes', 'https:hooks.example.com/in', 'url must be written out as https://host/path.'],
    ['back slashes', 'https:\\\\hooks.example.com\\in', 'url must be written out as https://host/path.'],
  ])('refuses %s with a reason naming url', async (_what, url, message?: string) => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url, events: ['booking.created'] },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'url' });
    if (message) expect(response.json().error.message).toBe(message);
  });

  it('pages the endpoints as every list is paged (limit, cursor), the newest first', async () => {
    // A minute of its own: the key's 120 requests a minute are shared with the tests around.
    t.clock.advance({ minutes: 2 });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.unshift((await subscribe(['booking.created'], `${receiver.url}/${i}`)).id);
      t.clock.advance({ seconds: i % 2 }); // two made at the same instant, too
    }
    const all = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).not.toHaveProperty('next_cursor');
    const newestFirst = all.json().data.map((e: { id: string }) => e.id);
    expect(newestFirst).toHaveLength(5);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const query = cursor ? `limit=2&cursor=${encodeURIComponent(cursor)}` : 'limit=2';
      const page = await t.request({ method: 'GET', url: `/v1/webhook-endpoints?${query}` });
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json().data.length).toBeLessThanOrEqual(2);
      paged.push(...page.json().data.map((e: { id: string }) => e.id));
      cursor = page.json().next_cursor;
    } while (cursor);
    expect(paged).toEqual(newestFirst);
    expect(new Set(paged)).toEqual(new Set(made));
    const bad = await t.request({ method: 'GET', url: '/v1/webhook-endpoints?cursor=nonsense' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  });

  it('answers an address given without a path as it was given, and delivers to it', async () => {
    const origin = new URL(receiver.url).origin;
    const endpoint = await subscribe(['booking.created'], origin);
    expect((endpoint as unknown as { url: string }).url).toBe(origin);
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
    expect(got.json().data.url).toBe(origin);
    const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(await deliver()).toMatchObject({ succeeded: 1, retried: 0, failed: 0 });
    expect(receiver.received.map((r) => [r.json.type, r.signed])).toEqual([['webhook.test', true]]);
    // Written out as the parser does (a host in lower case, no default port), still with no `/` added.
    const port = new URL(receiver.url).port;
    for (const [given, kept] of [
      [`http://LOCALHOST:${port}`, `http://localhost:${port}`],
      ['https://Hooks.Example.com:443', 'https://hooks.example.com'],
      ['https://hooks.example.com/', 'https://hooks.example.com/'],
    ]) {
      expect(((await subscribe(['booking.created'], given)) as unknown as { url: string }).url).toBe(kept);
    }
  });

  it('refuses a URL longer than 2,000 characters once written out, rather than failing with a 500', async () => {
    // 400 characters as typed, each é written out as %C3%A9: 2,400 in the URL that would be saved.
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: `${receiver.url}/${'é'.repeat(400)}`, events: ['booking.created'] },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'url' });
  });

  it('never lets simultaneous subscriptions past the 20 endpoints an organisation may have', async () => {
    for (let i = 0; i < 19; i++) await subscribe(['booking.created']);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.request({
          method: 'POST',
          url: '/v1/webhook-endpoints',
          payload: { url: receiver.url, events: ['booking.created'] },
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409, 409]);
    const list = await t.request({ method: 'GET', url: '/v1/webhook-endpoints' });
    expect(list.json().data).toHaveLength(20);
  });

  it('refuses an unknown event type', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: receiver.url, events: ['booking.updated'] },
    });
    expect(response.statusCode).toBe(400);
  });

  it('refuses an event named twice, saying so once', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: receiver.url, events: ['booking.created', 'booking.created'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toEqual({
      code: 'invalid_request',
      message: 'events: must not name an event twice.',
      param: 'events',
    });
  });
});

describe('delivery', () => {
  it('POSTs the full Booking after each change, signed, with the contract headers, in order', async () => {
    await subscribe(['booking.created', 'booking.cancelled', 'booking.rescheduled']);
    const reference = await book('2026-11-24T10:00:00+00:00');
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-24T11:00:00+00:00' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await deliver()).toMatchObject({ succeeded: 3, retried: 0, failed: 0 });

    expect(receiver.received.map((r) => r.json.type)).toEqual([
      'booking.created',
      'booking.rescheduled',
      'booking.cancelled',
    ]);
    const [created, rescheduled, gone] = receiver.received;
    for (const r of receiver.received) {
      expect(r.signed).toBe(true);
      expect(r.headers['booking-event-id']).toBe(r.json.id);
      expect(r.headers['booking-event-type']).toBe(r.json.type);
      expect(r.headers['booking-delivery-attempt']).toBe('1');
      expect(r.json.organisation).toBe('acme-hair');
      expect(r.json.data.reference).toBe(reference);
    }
    expect(created!.json.data).toMatchObject({ status: 'confirmed', starts_at: '2026-11-24T10:00:00+00:00' });
    expect(rescheduled!.json.data).toMatchObject({ starts_at: '2026-11-24T11:00:00+00:00' });
    expect(gone!.json.data).toMatchObject({ status: 'cancelled' });
    // The data is the REST resource as a read_write key reads it, capability links aside.
    const read = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(gone!.json.data).toEqual({ ...read.json().data, booking_page_url: null, payment_url: null });
    expect(new Set(receiver.received.map((r) => r.json.id)).size).toBe(3);
  });

  it('fans one event out to each endpoint that subscribes to it, and to no other', async () => {
    const other = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
    try {
      const first = await subscribe(['booking.created']);
      await subscribe(['booking.cancelled']);
      const second = await subscribe(['booking.created', 'booking.cancelled'], other.url);
      receiver.state.secret = first.secret;
      other.state.secret = second.secret;
      const reference = await book('2026-11-25T12:00:00+00:00');
      expect(await deliver()).toMatchObject({ succeeded: 2, retried: 0, failed: 0 });

      const [mine, theirs] = [receiver.received, other.received];
      expect(mine).toHaveLength(1);
      expect(theirs).toHaveLength(1);
      expect(mine[0]!.signed && theirs[0]!.signed).toBe(true);
      // One event, its body the same bytes at each endpoint, signed with each one's own secret.
      expect(theirs[0]!.json.id).toBe(mine[0]!.json.id);
      expect(theirs[0]!.body).toBe(mine[0]!.body);
      expect(mine[0]!.json).toMatchObject({ type: 'booking.created', data: { reference } });
    } finally {
      await other.close();
    }
  });

  it('gives each of a burst of events its own 10 s from when it is sent, not from when it waited for a connection', async () => {
    const endpoint = await subscribe(['client.created']);
    // Within the sender's 2 s, but a burst larger than its connections to one receiver waits for one
    // to come free: that wait is not the receiver's answer being slow.
    receiver.state.delayMs = 1_200;
    try {
      // Registered as POST /v1/clients does, without spending the suite's requests a minute.
      for (let n = 0; n < 40; n++) {
        const client = { firstName: 'Burst', lastName: `Client ${n}`, email: `burst.${n}@example.com` };
        await registerClient(t.database.db, ids.organisation, client, t.clock.nowMs());
      }
      expect(await deliver()).toEqual({ succeeded: 40, retried: 0, failed: 0 });

      // A receiver slower than that is still cut off, and the event tried again.
      receiver.state.delayMs = 2_500;
      const slow = { firstName: 'Slow', lastName: 'Client', email: 'slow.client@example.com' };
      await registerClient(t.database.db, ids.organisation, slow, t.clock.nowMs());
      expect(await deliver()).toEqual({ succeeded: 0, retried: 1, failed: 0 });
      const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
      expect(log.json().data[0]).toMatchObject({ status: 'pending', error: 'no answer within 2 s' });
      // Its late answer comes in before the next test listens.
      await vi.waitFor(() => expect(receiver.received).toHaveLength(41), { timeout: 2_000 });
    } finally {
      receiver.state.delayMs = 0;
    }
  });

  it('logs an attempt under way as made when it was sent, with nothing yet of how it went', async () => {
    const endpoint = await subscribe(['client.created']);
    receiver.state.answers = [500];
    const client = { firstName: 'Under', lastName: 'Way', email: 'under.way@example.com' };
    await registerClient(t.database.db, ids.organisation, client, t.clock.nowMs());
    expect(await deliver()).toMatchObject({ retried: 1 });
    const latest = async () =>
      (await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` })).json()
        .data[0];
    expect(await latest()).toMatchObject({
      attempt: 1,
      response_code: 500,
      error: 'the endpoint answered 500',
    });

    t.clock.advance({ minutes: 1, seconds: 5 });
    const sentAt = new Date(t.clock.nowMs()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    receiver.state.delayMs = 1_000;
    try {
      const second = deliver();
      // Attempt 2 is out (its answer a second away): not attempt 1's answer, time and error under
      // attempt 2's number.
      await vi.waitFor(async () => expect(await latest()).toMatchObject({ attempt: 2 }), { timeout: 900 });
      expect(await latest()).toMatchObject({
        status: 'pending',
        attempt: 2,
        attempted_at: sentAt,
        response_code: null,
        error: null,
      });
      t.clock.advance({ seconds: 7 });
      expect(await second).toMatchObject({ succeeded: 1 });
    } finally {
      receiver.state.delayMs = 0;
    }
    // Answered 7 s on: attempted when it was sent, delivered when it was answered.
    expect(await latest()).toMatchObject({
      status: 'succeeded',
      attempt: 2,
      attempted_at: sentAt,
      error: null,
    });
  });

  it('sends again at once on another connection when a kept-alive one was dropped while idle', async () => {
    // A receiver behind a load balancer or NAT that forgets idle connections: the next request on
    // one is answered with a reset, before the receiver sees it.
    const answered: string[] = [];
    const dropping = createServer((socket) => {
      let served = false;
      let pending = '';
      socket.on('error', () => {});
      socket.on('data', (chunk: Buffer) => {
        if (served) {
          socket.resetAndDestroy();
          return;
        }
        pending += chunk.toString('utf8');
        const head = pending.indexOf('\r\n\r\n');
        const length = Number(/content-length: *(\d+)/i.exec(pending)?.[1] ?? Number.NaN);
        if (head < 0 || Buffer.byteLength(pending.slice(head + 4)) < length) return;
        served = true;
        answered.push(JSON.parse(pending.slice(head + 4)).type);
        socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = dropping.address() as AddressInfo;
      await subscribe(['client.created'], `http://127.0.0.1:${port}/hooks`);
      for (const n of [1, 2]) {
        const client = { firstName: 'Idle', lastName: `Client ${n}`, email: `idle.${n}@example.com` };
        await registerClient(t.database.db, ids.organisation, client, t.clock.nowMs());
        expect(await deliver()).toEqual({ succeeded: 1, retried: 0, failed: 0 });
      }
      expect(answered).toEqual(['client.created', 'client.created']);
    } finally {
      dropping.close();
    }
  });

  it('writes nothing for an event nobody subscribes to', async () => {
    await subscribe(['booking.cancelled']);
    await book('2026-11-24T13:00:00+00:00');
    expect(await deliver()).toMatchObject({ succeeded: 0 });
    expect(receiver.received).toEqual([]);
  });

  it('retries a failure after 1, 2, 4 minutes, holding the booking’s later events back meanwhile', async () => {
    const endpoint = await subscribe(['booking.created', 'booking.cancelled']);
    receiver.state.answers = [500, 503];
    const reference = await book('2026-11-24T14:00:00+00:00');
    await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
    expect(await deliver()).toMatchObject({ succeeded: 0, retried: 1 });
    // The cancellation waits behind the creation it follows.
    expect(receiver.received.map((r) => r.json.type)).toEqual(['booking.created']);
    t.clock.advance({ seconds: 59 });
    expect(await deliver()).toMatchObject({ succeeded: 0, retried: 0 });
    t.clock.advance({ seconds: 1 });
    expect(await deliver()).toMatchObject({ retried: 1 });
    t.clock.advance({ minutes: 2 });
    expect(await deliver()).toMatchObject({ succeeded: 2 });
    expect(
      receiver.received.map((r) => `${r.json.type}#${r.headers['booking-delivery-attempt']}:${r.answered}`),
    ).toEqual([
      'booking.created#1:500',
      'booking.created#2:503',
      'booking.created#3:200',
      'booking.cancelled#1:200',
    ]);
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    expect(log.statusCode).toBe(200);
    expect(
      log
        .json()
        .data.map((d: { event_type: string; status: string; attempt: number; response_code: number }) => [
          d.event_type,
          d.status,
          d.attempt,
          d.response_code,
        ]),
    ).toEqual([
      ['booking.cancelled', 'succeeded', 1, 200],
      ['booking.created', 'succeeded', 3, 200],
    ]);
  });

  it('logs an event held back behind its booking’s failing one as tried next when that one is, not at a time gone by', async () => {
    const endpoint = await subscribe(['booking.created', 'booking.rescheduled', 'booking.cancelled']);
    receiver.state.fallback = 500;
    const reference = await book('2026-11-24T14:00:00+00:00');
    await deliver();
    t.clock.advance({ seconds: 10 });
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: '2026-11-24T15:00:00+00:00' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
    // Six failures: the creation is tried next 32 minutes after the last, the others wait for it.
    for (let failed = 1; failed < 6; failed++) {
      t.clock.advance({ minutes: 2 ** (failed - 1) });
      await deliver();
    }
    expect(receiver.received.map((r) => r.json.type)).toEqual(Array(6).fill('booking.created'));
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    const rows = log.json().data as { event_type: string; status: string; next_attempt_at: string }[];
    const creation = rows.find((d) => d.event_type === 'booking.created')!;
    expect(creation).toMatchObject({ status: 'pending', attempt: 6 });
    expect(Date.parse(creation.next_attempt_at)).toBe(t.clock.nowMs() + 32 * 60_000);
    // Neither is sent before the creation's next try: the log says so, not the times they were made.
    for (const type of ['booking.rescheduled', 'booking.cancelled']) {
      expect(rows.find((d) => d.event_type === type)).toMatchObject({
        status: 'pending',
        attempt: 0,
        next_attempt_at: creation.next_attempt_at,
      });
    }
    receiver.state.fallback = 200;
    t.clock.advance({ minutes: 32 });
    expect(await deliver()).toMatchObject({ succeeded: 3 });
  });

  it('disables an endpoint that answers 410 Gone at once', async () => {
    const endpoint = await subscribe(['booking.created']);
    receiver.state.fallback = 410;
    await book('2026-11-24T15:00:00+00:00');
    expect(await deliver()).toMatchObject({ failed: 1 });
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
    expect(got.json().data).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    await book('2026-11-24T16:00:00+00:00');
    expect(await deliver()).toMatchObject({ succeeded: 0, failed: 0 });
    expect(receiver.received).toHaveLength(1);
  });

  it('ends as failed a delivery that failed while another one’s 410 Gone disabled its endpoint', async () => {
    const endpoint = await subscribe(['booking.created']);
    // Two bookings' events, sent at once: the first to arrive is answered 410 Gone, the other 500, and
    // that one's outcome is recorded after the endpoint was disabled under it.
    receiver.state.answers = [410, 500];
    await book('2026-11-25T14:00:00+00:00');
    await book('2026-11-25T15:00:00+00:00');
    const slowFailures: WebhookDelivery['sender'] = {
      async post(url, headers, body) {
        const result = await sender.post(url, headers, body);
        if ('status' in result && result.status === 500) await new Promise((r) => setTimeout(r, 300));
        return result;
      },
      close() {},
    };
    expect(await deliverAllDueWebhooks({ ...delivery(), sender: slowFailures })).toEqual({
      succeeded: 0,
      retried: 0,
      failed: 2,
    });
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
    expect(got.json().data).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    expect(
      log
        .json()
        .data.map((d: Record<string, unknown>) => [d.status, d.response_code, d.error, d.next_attempt_at]),
    ).toEqual(
      expect.arrayContaining([
        ['failed', 410, 'the endpoint answered 410', null],
        ['failed', 500, 'endpoint disabled (gone)', null],
      ]),
    );
    expect(receiver.received).toHaveLength(2);
  });

  it('gives up after 72 hours, and disables an endpoint failing for 3 days', async () => {
    const endpoint = await subscribe(['booking.created']);
    receiver.state.fallback = 500;
    await book('2026-11-25T10:00:00+00:00');
    const created = t.clock.nowMs();
    const tried: number[] = [];
    // Each attempt at the time the log names: 0, 1, 3, 7, 15, 31, 63 minutes, then hourly within 72 hours.
    for (;;) {
      const counts = await deliver();
      expect(counts.retried + counts.failed).toBe(1);
      tried.push((t.clock.nowMs() - created) / 60_000);
      if (counts.failed > 0) break;
      const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
      t.clock.set(log.json().data[0].next_attempt_at);
      if (tried.length <= 7) {
        // Not a moment before.
        t.clock.advance({ milliseconds: -1 });
        expect(await deliver()).toMatchObject({ retried: 0, failed: 0 });
        t.clock.advance({ milliseconds: 1 });
      }
    }
    expect(tried.slice(0, 8)).toEqual([0, 1, 3, 7, 15, 31, 63, 123]);
    expect(tried).toHaveLength(7 + Math.floor((72 * 60 - 63) / 60));
    expect(tried[tried.length - 1]).toBeLessThanOrEqual(72 * 60);
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    expect(log.json().data[0]).toMatchObject({ status: 'failed', response_code: 500, next_attempt_at: null });
    const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
    expect(got.json().data).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
  });

  it.each([
    ['a moment after it happened (the next pass of the worker)', { milliseconds: 300 }, '2026-11-25'],
    ['an hour after it happened (the worker was down)', { minutes: 61 }, '2026-12-09'],
  ])(
    'disables an endpoint whose one event failed every attempt of its 72 hours, tried first %s',
    async (_, late, day) => {
      const endpoint = await subscribe(['booking.created']);
      receiver.state.fallback = 500;
      // A Wednesday still ahead on the clock the tests before moved on.
      await book(`${day}T11:00:00+00:00`);
      t.clock.advance(late);
      for (;;) {
        const counts = await deliver();
        if (counts.failed > 0) break;
        const log = await t.request({
          method: 'GET',
          url: `/v1/webhook-endpoints/${endpoint.id}/deliveries`,
        });
        expect(log.statusCode, log.body).toBe(200);
        // The log names the second; the worker's next pass comes within one.
        t.clock.set(log.json().data[0].next_attempt_at);
        t.clock.advance({ milliseconds: 1_000 });
      }
      const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
      expect(got.json().data).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
    },
  );

  it('keeps enabled an endpoint that answers every other event, when one booking’s events are all refused', async () => {
    const endpoint = await subscribe(['booking.created', 'booking.rescheduled', 'booking.cancelled']);
    // The receiver refuses this booking's move and cancellation (its own bug, say), and takes the rest.
    receiver.state.answerFor = ({ headers }) =>
      ['booking.rescheduled', 'booking.cancelled'].includes(String(headers['booking-event-type']))
        ? 500
        : 200;
    try {
      const reference = await book('2026-12-02T10:00:00+00:00');
      const moved = await t.request({
        method: 'PATCH',
        url: `/v1/bookings/${reference}`,
        payload: { starts_at: '2026-12-02T11:00:00+00:00' },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
      // The move is tried for 72 hours, the cancellation waiting behind it (one booking's events go in
      // order); the endpoint answers a test event every hour or so meanwhile (not between the
      // cancellation's first tries, minutes apart).
      const log = async () =>
        (
          await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100` })
        ).json().data as { event_type: string; status: string; next_attempt_at: string | null }[];
      let pinged = Number.NEGATIVE_INFINITY;
      for (;;) {
        if (t.clock.nowMs() - pinged >= 3_600_000) {
          pinged = t.clock.nowMs();
          const ping = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
          expect(ping.statusCode, ping.body).toBe(202);
        }
        await deliver();
        const pending = (await log()).filter((d) => d.status === 'pending');
        if (pending.length === 0) break;
        const due = pending.map((d) => d.next_attempt_at).filter((at) => at !== null);
        if (due.length > 0) t.clock.set(due.sort()[0]!);
      }
      const given = (await log()).filter((d) => d.event_type !== 'webhook.test' && d.status === 'failed');
      expect(given.map((d) => d.event_type).sort()).toEqual(['booking.cancelled', 'booking.rescheduled']);
      // The cancellation had moments left of its 72 hours: failing for moments is no 3 days of failures.
      const got = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}` });
      expect(got.json().data).toMatchObject({ status: 'enabled', disabled_reason: null });
    } finally {
      receiver.state.answerFor = undefined;
    }
  });

  it('sends a test event on request, to that endpoint alone', async () => {
    const endpoint = await subscribe(['booking.no_show']);
    const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
    expect(sent.statusCode, sent.body).toBe(202);
    await deliver();
    expect(receiver.received.map((r) => [r.json.type, r.json.id, r.signed])).toEqual([
      ['webhook.test', sent.json().data.event_id, true],
    ]);
  });

  it('sends a new test event at once, whatever became of the one before', async () => {
    const endpoint = await subscribe(['booking.no_show']);
    const test = async () => {
      const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
      expect(sent.statusCode, sent.body).toBe(202);
      return sent.json().data.event_id as string;
    };
    receiver.state.answers = [500];
    const refused = await test();
    await deliver();
    // The receiver mended, the next test goes now, not behind the refused one's retry a minute on.
    const next = await test();
    await deliver();
    expect(receiver.received.map((r) => [r.json.id, r.answered])).toEqual([
      [refused, 500],
      [next, 200],
    ]);
    t.clock.advance({ minutes: 1 });
    await deliver();
    expect(receiver.received.map((r) => r.json.id)).toEqual([refused, next, refused]);
  });

  it('says in words why an https address failed its TLS handshake, not a bare error code', async () => {
    // The receiver speaks plain HTTP: an https URL to it fails in the handshake.
    const endpoint = await subscribe(['booking.created'], receiver.url.replace('http:', 'https:'));
    const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(await deliver()).toMatchObject({ succeeded: 0, retried: 1 });
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    expect(log.json().data[0].error).toBe(
      'the TLS handshake failed (does the address speak https on that port?)',
    );
  });

  it('says a self-signed certificate is why an https receiver was refused', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-webhook-tls-'));
    const pem = (name: string) => path.join(dir, name);
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
        ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', pem('key.pem'), '-out', pem('cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    const tls = createHttpsServer(
      { cert: readFileSync(pem('cert.pem')), key: readFileSync(pem('key.pem')) },
      (_request, response) => response.end(),
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = tls.address() as AddressInfo;
      const endpoint = await subscribe(['booking.created'], `https://127.0.0.1:${port}/hooks`);
      await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
      expect(await deliver()).toMatchObject({ succeeded: 0, retried: 1 });
      const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
      expect(log.json().data[0].error).toBe('the TLS certificate is self-signed');
    } finally {
      tls.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reaches a receiver on localhost whether it listens on 127.0.0.1 or on ::1', async () => {
    // Where `listen(port, 'localhost')` binds depends on the system (many resolve localhost to ::1
    // first): a receiver bound to ::1 alone is this machine too.
    const onIpv6 = await startWebhookReceiver({
      host: '::1',
      nowSeconds: () => Math.floor(t.clock.nowMs() / 1000),
    });
    try {
      for (const url of [
        `http://localhost:${onIpv6.port}/hooks`,
        receiver.url.replace('127.0.0.1', 'localhost'),
      ]) {
        const endpoint = await subscribe(['booking.created'], url);
        onIpv6.state.secret = endpoint.secret;
        const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/test` });
        expect(sent.statusCode, sent.body).toBe(202);
        expect(await deliver()).toMatchObject({ succeeded: 1, retried: 0, failed: 0 });
      }
      expect(onIpv6.received.map((r) => [r.json.type, r.signed])).toEqual([['webhook.test', true]]);
      expect(receiver.received.map((r) => [r.json.type, r.signed])).toEqual([['webhook.test', true]]);
    } finally {
      await onIpv6.close();
    }
  });

  it('keeps the deliveries log for 30 days, then forgets what ended (never what is still to go)', async () => {
    const endpoint = await subscribe(['booking.created']);
    await book('2026-11-24T09:00:00+00:00');
    await deliver();
    receiver.state.fallback = 500;
    await book('2026-11-24T12:00:00+00:00');
    t.clock.advance({ days: 29 });
    expect(await pruneDeliveredWebhooks(t.database.db, t.clock.nowMs())).toBe(0);
    t.clock.advance({ days: 2 });
    expect(await pruneDeliveredWebhooks(t.database.db, t.clock.nowMs())).toBe(1);
    const log = await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}/deliveries` });
    expect(log.json().data.map((d: { status: string }) => d.status)).toEqual(['pending']);
  });

  it('tells of a hold the sweeper expired', async () => {
    await subscribe(['booking.created', 'booking.expired']);
    const reference = await book('2026-11-30T10:00:00+00:00', 'colour');
    t.clock.advance({ hours: 2 });
    await expireLapsedHolds(t.database.db, t.clock.nowMs());
    await deliver();
    expect(receiver.received.map((r) => [r.json.type, r.json.data.status])).toEqual([
      ['booking.created', 'pending_payment'],
      ['booking.expired', 'expired'],
    ]);
    expect(receiver.received[1]!.json.data.reference).toBe(reference);
  });

  it('tells of a booking an import moved to another time: booking.rescheduled', async () => {
    await subscribe(['booking.created', 'booking.rescheduled']);
    const catalogue = smallCatalogue() as { bookings?: Record<string, unknown>[] };
    const imported = {
      reference: 'AC-MMMMMM',
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-12-08T10:00',
      status: 'confirmed',
    };
    catalogue.bookings = [imported];
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    catalogue.bookings = [{ ...imported, starts_at: '2026-12-08T11:00' }];
    t.clock.advance({ minutes: 5 });
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    await deliver();
    expect(receiver.received.map((r) => [r.json.type, r.json.data.starts_at])).toEqual([
      ['booking.created', '2026-12-08T10:00:00+00:00'],
      ['booking.rescheduled', '2026-12-08T11:00:00+00:00'],
    ]);
    const read = await t.request({ method: 'GET', url: '/v1/bookings/AC-MMMMMM' });
    expect(receiver.received[1]!.json.data).toEqual({
      ...read.json().data,
      booking_page_url: null,
      payment_url: null,
    });
  });

  it('tells of the clients an import put on file (client.created), as POST /v1/clients does, and of none it updated', async () => {
    await subscribe(['client.created']);
    // On file over REST first (its client.created sent then); the import adopts it by phone.
    const registered = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Ria', last_name: 'Patel', phone: '+447911000201' },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const catalogue = smallCatalogue() as { clients: Record<string, unknown>[] };
    const ria = { ref: 'ria', first_name: 'Ria', last_name: 'Patel', phone: '+447911000201', email: null };
    const sam = { ref: 'sam', first_name: 'Sam', last_name: 'Okafor', phone: null, email: 'sam@example.com' };
    catalogue.clients.push({ ...ria, marketing_consent: false }, { ...sam, marketing_consent: true });
    t.clock.advance({ minutes: 5 });
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    // Again, with Sam renamed: an update, which no event names.
    catalogue.clients[2] = { ...catalogue.clients[2], first_name: 'Samuel' };
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    await deliver();
    expect(receiver.received.map((r) => [r.json.type, r.json.data.first_name])).toEqual([
      ['client.created', 'Ria'],
      ['client.created', 'Sam'],
    ]);
    // The Client as it was put on file (the rename came later), as GET /v1/clients/{id} reads it.
    const read = await t.request({ method: 'GET', url: `/v1/clients/${receiver.received[1]!.json.data.id}` });
    expect(receiver.received[1]!.json.data).toEqual({ ...read.json().data, first_name: 'Sam' });
  });
});

describe('the running worker', () => {
  /** The claim's UPDATE: a write (on SQLite the database's one write lock) whether or not it claims. */
  const isClaim = (statement: string) => /^update "webhook_deliveries" set "claimed_by"/i.test(statement);

  it('runs no claim while what is due waits behind a failing delivery, yet sends new events and the retry when due', async () => {
    await subscribe(['booking.created', 'booking.cancelled']);
    receiver.state.answers = [500];
    const reference = await book('2026-12-01T10:00:00+00:00');
    await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
    // The creation failed (its retry a minute away, on a clock that stands still); the cancellation,
    // due, waits behind it.
    expect(await deliver()).toMatchObject({ retried: 1 });
    // The worker on a connection of its own: the events below are written as another instance would.
    const statements: string[] = [];
    const handle = openDatabase(t.database.url, { onQuery: (statement) => statements.push(statement) });
    const errors: unknown[] = [];
    const stop = startWebhookWorker(
      { db: handle.db, clock: t.clock, sender: httpSender(LOOPBACK_ALLOWED, 2_000) },
      (error) => errors.push(error),
    );
    try {
      await sleep(2_000);
      expect(statements.filter(isClaim)).toHaveLength(0);
      // Another booking's event goes out at once, the failing one no obstacle.
      await book('2026-12-01T12:30:00+00:00');
      await vi.waitFor(() => expect(receiver.received).toHaveLength(2), { timeout: 1_500 });
      t.clock.advance({ minutes: 1 });
      await vi.waitFor(() => expect(receiver.received).toHaveLength(4), { timeout: 1_500 });
    } finally {
      await stop();
      await handle.close();
    }
    expect(errors).toEqual([]);
    expect(receiver.received.map((r) => `${r.json.type}#${r.headers['booking-delivery-attempt']}`)).toEqual([
      'booking.created#1',
      'booking.created#1',
      'booking.created#2',
      'booking.cancelled#1',
    ]);
  });

  it('keeps sending to other endpoints while some hang, and gives each at most a quarter of its places', async () => {
    // A receiver that takes requests and never answers, as one behind a dead proxy: two endpoints on it.
    const hanging = createHttpServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    let hangingRequests = 0;
    hanging.on('request', () => hangingRequests++);
    await subscribe(['booking.created'], `${hangingUrl}/one`);
    await subscribe(['booking.created'], `${hangingUrl}/two`);
    await subscribe(['booking.created']);
    const errors: unknown[] = [];
    // Eight places: at most two for each hanging endpoint; attempts wait 10 s for an answer, as deployed.
    const stop = startWebhookWorker(
      { db: t.database.db, clock: t.clock, sender: httpSender(LOOPBACK_ALLOWED, 10_000), batchSize: 8 },
      (error) => errors.push(error),
    );
    try {
      for (const at of ['09:00', '10:00', '11:00', '12:00', '13:00']) await book(`2026-12-07T${at}:00+00:00`);
      // All five reach the answering receiver long before the hanging attempts' 10 s are up.
      await vi.waitFor(() => expect(receiver.received).toHaveLength(5), { timeout: 3_000 });
      expect(hangingRequests).toBe(4);
      // A booking made while the hanging endpoints hold their share goes out within the worker's poll.
      await book('2026-12-07T14:00:00+00:00');
      await vi.waitFor(() => expect(receiver.received).toHaveLength(6), { timeout: 1_500 });
      expect(hangingRequests).toBe(4);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
      await stop();
    }
    expect(errors).toEqual([]);
  });

  it('gives endpoints failing now two places each and a quarter of them in all, however many there are', async () => {
    const hanging = createHttpServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    let hangingRequests = 0;
    hanging.on('request', () => hangingRequests++);
    for (const path of ['one', 'two', 'three', 'four'])
      await subscribe(['booking.created'], `${hangingUrl}/${path}`);
    await subscribe(['booking.created']);
    const errors: unknown[] = [];
    try {
      // Each hanging endpoint's first attempt fails (no answer within 300 ms): they are failing now.
      await book('2026-12-21T09:00:00+00:00');
      expect(
        await deliverAllDueWebhooks({ ...delivery(), sender: httpSender(LOOPBACK_ALLOWED, 300) }),
      ).toMatchObject({ succeeded: 1, retried: 4 });
      t.clock.advance({ minutes: 1 });
      hangingRequests = 0;
      // Eight places: a quarter of them (2) for the failing endpoints together, four of them with
      // retries due and new events; attempts wait 10 s for an answer, as deployed.
      const stop = startWebhookWorker(
        { db: t.database.db, clock: t.clock, sender: httpSender(LOOPBACK_ALLOWED, 10_000), batchSize: 8 },
        (error) => errors.push(error),
      );
      try {
        for (const at of ['10:00', '11:00', '12:00', '13:00', '14:00'])
          await book(`2026-12-21T${at}:00+00:00`);
        await vi.waitFor(() => expect(receiver.received).toHaveLength(6), { timeout: 3_000 });
        expect(hangingRequests).toBe(2);
      } finally {
        hanging.closeAllConnections();
        await stop();
      }
    } finally {
      hanging.close();
    }
    expect(errors).toEqual([]);
  });

  it('works through one endpoint’s backlog at its share without waiting for the next poll', async () => {
    await subscribe(['booking.created']);
    for (const at of ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00'])
      await book(`2026-12-14T${at}:00+00:00`);
    const errors: unknown[] = [];
    // Four places, one for the endpoint; a poll every 2 s (the first within 1 to 3 s).
    const stop = startWebhookWorker(
      { db: t.database.db, clock: t.clock, sender: httpSender(LOOPBACK_ALLOWED, 2_000), batchSize: 4 },
      (error) => errors.push(error),
      2_000,
    );
    try {
      await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThan(0), { timeout: 4_000 });
      // The other five follow one by one as each place frees, not one a poll (10 s).
      await vi.waitFor(() => expect(receiver.received).toHaveLength(6), { timeout: 1_500 });
    } finally {
      await stop();
    }
    expect(errors).toEqual([]);
  });
});

describe('between organisations', () => {
  it('shows an organisation nothing that counts another’s deliveries: no shared number in ids or cursors', async () => {
    const two = await startTestApp({
      catalogues: [smallCatalogue(), smallCatalogue({ slug: 'other-salon', prefix: 'OS' })],
      webhookDestinations: LOOPBACK_ALLOWED,
    });
    try {
      const other = await two.keyFor('other-salon');
      const endpointOf = async (key?: string) => {
        const response = await two.request({
          method: 'POST',
          url: '/v1/webhook-endpoints',
          payload: { url: receiver.url, events: ['booking.created'] },
          ...(key && { key }),
        });
        expect(response.statusCode, response.body).toBe(201);
        return response.json().data.id as string;
      };
      const test = (id: string, key?: string) =>
        two.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, ...(key && { key }) });
      const mine = await endpointOf();
      const theirs = await endpointOf(other);
      await test(mine);
      for (let i = 0; i < 30; i++) await test(theirs, other);
      await test(mine);

      const log = await two.request({
        method: 'GET',
        url: `/v1/webhook-endpoints/${mine}/deliveries?limit=1`,
      });
      expect(log.statusCode, log.body).toBe(200);
      const { data, next_cursor: cursor } = log.json() as { data: { id: string }[]; next_cursor: string };
      // The shared sequence that keys the deliveries of every organisation (1 and 32 here).
      const seqs = (
        await two.database.db
          .selectFrom('webhook_deliveries')
          .select('seq')
          .where('endpoint_id', '=', mine)
          .execute()
      ).map((row) => String(row.seq));
      expect(seqs).toHaveLength(2);
      // Ids are opaque UUIDs, as every other id of the API.
      expect(data[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // The cursor's position is not the sequence number either, even once its signed body is read.
      const position = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).k;
      expect(seqs).not.toContain(String(position));
      expect(String(position)).not.toMatch(/^\d+$/);

      const older = await two.request({
        method: 'GET',
        url: `/v1/webhook-endpoints/${mine}/deliveries?limit=1&cursor=${cursor}`,
      });
      expect(older.json().data).toHaveLength(1);
      expect(older.json().data[0].id).not.toBe(data[0]!.id);
      expect(older.json()).not.toHaveProperty('next_cursor');
    } finally {
      await two.close();
    }
  });
});

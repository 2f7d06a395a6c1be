import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.ts';
import { type RunningServer, startServer } from '../helpers/cli.ts';
import {
  type ApiClient,
  apiClient,
  bookingRequests,
  CRASH_LOCATION,
  CRASH_ORGANISATION,
  crashCatalogue,
} from '../helpers/crash-scenario.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';
import { type Received, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Webhook delivery by real `booking serve` processes (design.md 9.2), on one SQLite file or one
 * PostgreSQL database as the run gives: two servers taking changes and delivering at once send every
 * event, each attempt once (no two workers make the same attempt), a booking's events in the order of
 * its changes whichever server made them; and a server killed with SIGKILL right after answering a
 * booking loses nothing: the server started in its place delivers the event the booking committed.
 * The retry schedule's minute is shortened (WEBHOOK_RETRY_UNIT_MS) so retries come within moments.
 */
const RETRY_UNIT_MS = 100;
const served = eachTestServes('booking-webhook-processes-');
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.state.answers = [];
  receiver.state.answerFor = undefined;
  receiver.state.fallback = 200;
  receiver.state.delayMs = 0;
});

function serverEnv(): Record<string, string> {
  return { ...served.env, WEBHOOK_ALLOW_INSECURE: '1', WEBHOOK_RETRY_UNIT_MS: String(RETRY_UNIT_MS) };
}

/** The crash catalogue (staff working every day, 15-minute services) and a key without a practical limit. */
async function prepare(): Promise<string> {
  const [key] = await prepareDatabase(served.env.DATABASE_URL!, {
    catalogues: [crashCatalogue(6)],
    keys: [{ organisation: CRASH_ORGANISATION, rateLimitPerMinute: 1_000_000 }],
  });
  return key!;
}

async function ok<T>(api: ApiClient, method: string, url: string, body: unknown, status: number): Promise<T> {
  const answer = await api.request(method, url, JSON.stringify(body));
  expect(answer.status, `${method} ${url}: ${answer.text}`).toBe(status);
  return JSON.parse(answer.text).data as T;
}

async function subscribe(api: ApiClient, events: readonly string[]): Promise<void> {
  const endpoint = await ok<{ secret: string }>(
    api,
    'POST',
    '/webhook-endpoints',
    { url: receiver.url, events },
    201,
  );
  receiver.state.secret = endpoint.secret;
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Until nothing new has arrived for `quietMs`: any late or duplicate attempt would have by then. */
async function quiet(quietMs: number): Promise<void> {
  let seen = -1;
  while (seen !== receiver.received.length) {
    seen = receiver.received.length;
    await new Promise((resolve) => setTimeout(resolve, quietMs));
  }
}

const attemptOf = (r: Received) => Number(r.headers['booking-delivery-attempt']);

/** The failed attempts a server logged (event id and attempt, never the data), from its log lines. */
function failedAttemptsLogged(server: RunningServer): string[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"webhook delivery failed"'))
    .map((line) => JSON.parse(line) as { event_id: string; attempt: number })
    .map((entry) => `${entry.event_id}#${entry.attempt}`);
}

async function inLanes<T>(items: T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('webhooks delivered by server processes', () => {
  it('two servers on one database send every event, each attempt once, each booking’s in order', async () => {
    const key = await prepare();
    const servers: RunningServer[] = [];
    try {
      const starting = [startServer(['--port', '0'], serverEnv()), startServer(['--port', '0'], serverEnv())];
      for (const started of await Promise.allSettled(starting)) {
        if (started.status === 'fulfilled') servers.push(started.value);
      }
      expect(servers).toHaveLength(2);
      const apis = servers.map((server) => apiClient(server.url, key));
      await subscribe(apis[0]!, WEBHOOK_EVENT_TYPES);
      // Every event's first attempt fails, so each booking's next change waits behind a retry.
      receiver.state.answerFor = ({ headers }) => (headers['booking-delivery-attempt'] === '1' ? 500 : 200);
      // Each answer takes a while: the other server's worker polls while deliveries are in flight.
      receiver.state.delayMs = 100;

      const clients: string[] = [];
      for (let i = 0; i < 4; i++) {
        const body = { first_name: 'Hook', last_name: `Customer ${i}`, email: `hook-${i}@example.com` };
        clients.push((await ok<{ id: string }>(apis[i % 2]!, 'POST', '/clients', body, 201)).id);
      }
      const BOOKINGS = 50;
      const pool = await bookingRequests(apis[0]!, BOOKINGS * 2);
      const spare = pool.slice(BOOKINGS);
      /** What each booking went through, in order, by reference. */
      const changes = new Map<string, string[]>();
      // Each booking is made on one server and changed on the other: a third are then cancelled, a
      // third moved and then cancelled back on the first, a third left as they are.
      await inLanes(
        pool.slice(0, BOOKINGS).map((request, i) => ({ request, i })),
        8,
        async ({ request, i }) => {
          const [made, other] = [apis[i % 2]!, apis[(i + 1) % 2]!];
          const booking = await ok<{ reference: string }>(
            made,
            'POST',
            '/bookings',
            {
              location_slug: CRASH_LOCATION,
              service_ids: request.serviceIds,
              staff_id: request.slot.staff_id,
              client_id: clients[i % clients.length],
              starts_at: request.slot.starts_at,
            },
            201,
          );
          const path = `/bookings/${booking.reference}`;
          const done = ['booking.created'];
          changes.set(booking.reference, done);
          if (i % 3 === 1) {
            // Another free time for the same services, with whichever staff member it is free with.
            const at = spare.findIndex((s) => s.serviceIds.join() === request.serviceIds.join());
            expect(at).toBeGreaterThanOrEqual(0);
            const [moveTo] = spare.splice(at, 1);
            const { starts_at, staff_id } = moveTo!.slot;
            await ok(other, 'PATCH', path, { starts_at, staff_id }, 200);
            done.push('booking.rescheduled');
          }
          if (i % 3 !== 2) {
            await ok(i % 3 === 0 ? other : made, 'POST', `${path}/cancel`, {}, 200);
            done.push('booking.cancelled');
          }
        },
      );
      const expected = clients.length + [...changes.values()].reduce((n, done) => n + done.length, 0);
      expect(expected).toBe(4 + 50 + 17 + 17 * 2);
      const succeeded = () => receiver.received.filter((r) => r.answered === 200).length;
      const lastChange = Date.now();
      await until(`${expected} events delivered`, () => succeeded() >= expected, 20_000);
      const deliveredMs = Date.now() - lastChange;
      await quiet(4 * RETRY_UNIT_MS + 400);

      // Each event arrived twice: attempt 1, answered 500, then attempt 2, answered 200; nothing else.
      const received = receiver.received;
      expect(received.every((r) => r.signed)).toBe(true);
      const attempts = new Map<string, string[]>();
      for (const r of received) {
        expect(r.headers['booking-event-id']).toBe(r.json.id);
        attempts.set(r.json.id, [...(attempts.get(r.json.id) ?? []), `${attemptOf(r)}:${r.answered}`]);
      }
      for (const [id, seen] of attempts) expect(seen, id).toEqual(['1:500', '2:200']);
      expect(attempts.size).toBe(expected);
      expect(received).toHaveLength(expected * 2);
      const types = received.filter((r) => r.answered === 200).map((r) => r.json.type);
      const count = (type: string) => types.filter((t) => t === type).length;
      expect([
        count('client.created'),
        count('booking.created'),
        count('booking.rescheduled'),
        count('booking.cancelled'),
      ]).toEqual([4, 50, 17, 34]);

      // Each booking's events came in the order of its changes: the next one not even tried until
      // the one before it was received.
      await inLanes([...changes], 8, async ([reference, done]) => {
        const its = received.filter((r) => r.json.data.reference === reference);
        expect(
          its.map((r) => `${r.json.type}#${attemptOf(r)}`),
          reference,
        ).toEqual(done.flatMap((type) => [`${type}#1`, `${type}#2`]));
        // The last event carries the booking as it now is.
        const last = its[its.length - 1]!.json.data;
        const now = JSON.parse((await apis[1]!.request('GET', `/bookings/${reference}`)).text).data;
        expect(last).toEqual({ ...now, booking_page_url: null, payment_url: null });
      });

      // The database agrees: every event written was delivered on its second attempt.
      const probe = openDatabase(served.env.DATABASE_URL!);
      try {
        const events = await probe.db.selectFrom('webhook_events').select('id').execute();
        expect(new Set(events.map((e) => e.id))).toEqual(new Set(attempts.keys()));
        const deliveries = await probe.db
          .selectFrom('webhook_deliveries')
          .select(['status', 'attempts', 'response_code'])
          .execute();
        expect(deliveries).toHaveLength(expected);
        expect(deliveries.every((d) => d.status === 'succeeded' && d.attempts === 2)).toBe(true);
      } finally {
        await probe.close();
      }

      const [first, second] = servers;
      for (const server of servers.splice(0)) expect(await server.stop()).toBe(0);
      // Both servers delivered: each event's failed first attempt was made, and logged, by one of them.
      const [byFirst, bySecond] = [failedAttemptsLogged(first!), failedAttemptsLogged(second!)];
      expect([...byFirst, ...bySecond].sort()).toEqual([...attempts.keys()].map((id) => `${id}#1`).sort());
      expect(byFirst.length).toBeGreaterThan(0);
      expect(bySecond.length).toBeGreaterThan(0);
      console.info(
        `webhooks by two servers: ${expected} events, ${received.length} attempts, first attempts ${byFirst.length} + ${bySecond.length}, delivered within ${deliveredMs} ms of the last change`,
      );
    } finally {
      for (const server of servers) await server.stop('SIGKILL');
    }
  }, 90_000);
  it('loses nothing to kill -9 right after a booking: the server started in its place delivers it', async () => {
    const key = await prepare();
    const env = serverEnv();
    const first = await startServer(['--port', '0'], env);
    let reference: string;
    try {
      const api = apiClient(first.url, key);
      await subscribe(api, ['booking.created']);
      const body = { first_name: 'Kill', last_name: 'Nine', email: 'kill-nine@example.com' };
      const client = await ok<{ id: string }>(api, 'POST', '/clients', body, 201);
      const [request] = await bookingRequests(api, 1);
      const answer = await api.request(
        'POST',
        '/bookings',
        JSON.stringify({
          location_slug: CRASH_LOCATION,
          service_ids: request!.serviceIds,
          staff_id: request!.slot.staff_id,
          client_id: client.id,
          starts_at: request!.slot.starts_at,
        }),
      );
      // SIGKILL the moment the 201 is in: no shutdown handler runs, and the worker (polling every
      // 200 ms) has almost never had its turn at the event yet.
      const killed = first.stop('SIGKILL');
      expect(answer.status, answer.text).toBe(201);
      reference = JSON.parse(answer.text).data.reference;
      expect(await killed).toBeNull();
    } finally {
      if (first.process.exitCode === null && first.process.signalCode === null) await first.stop('SIGKILL');
    }
    const ofBooking = () => receiver.received.filter((r) => r.json.data.reference === reference);
    const sentBeforeKill = ofBooking().length;

    // The event was committed with the booking, before its 201: the dead server left it to deliver.
    const probe = openDatabase(served.env.DATABASE_URL!);
    let atKill: { status: string; attempts: number; claimed: boolean };
    try {
      const rows = await probe.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'attempts', 'lease_until', 'event_type'])
        .execute();
      expect(rows.map((row) => row.event_type)).toEqual(['booking.created']);
      const row = rows[0]!;
      atKill = { status: row.status, attempts: row.attempts, claimed: row.lease_until !== null };
    } finally {
      await probe.close();
    }

    const restarted = Date.now();
    const second = await startServer(['--port', '0'], env);
    let deliveredMs: number;
    try {
      // An attempt the dead server made just before the kill may have been answered 200 without its
      // outcome being written: the delivery is still due, and only an attempt after the restart settles it.
      await until(
        `the booking.created of ${reference}`,
        () =>
          ofBooking()
            .slice(sentBeforeKill)
            .some((r) => r.answered === 200),
        60_000,
      );
      deliveredMs = Date.now() - restarted;
    } finally {
      expect(await second.stop()).toBe(0);
    }
    const [delivered] = ofBooking()
      .slice(sentBeforeKill)
      .filter((r) => r.answered === 200);
    expect(delivered!.signed).toBe(true);
    expect(delivered!.json).toMatchObject({
      type: 'booking.created',
      organisation: CRASH_ORGANISATION,
      data: { reference, status: 'confirmed' },
    });
    const check = openDatabase(served.env.DATABASE_URL!);
    try {
      const rows = await check.db.selectFrom('webhook_deliveries').select(['status', 'event_id']).execute();
      expect(rows).toEqual([{ status: 'succeeded', event_id: delivered!.json.id }]);
    } finally {
      await check.close();
    }
    console.info(
      `webhooks through kill -9: ${sentBeforeKill} attempt(s) before the kill, delivery at the kill ${JSON.stringify(atKill)}, delivered ${deliveredMs} ms after the restart began`,
    );
  }, 120_000);
});

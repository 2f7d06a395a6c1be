import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { openDatabase } from '../../src/data/database.ts';
import { checkIntegrity } from '../../src/data/integrity-check.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { type RunningServer, startServer } from '../helpers/cli.ts';
import {
  type ApiClient,
  apiClient,
  bookingRequests,
  CRASH_LOCATION,
  CRASH_ORGANISATION,
  crashCatalogue,
} from '../helpers/crash-scenario.ts';
import { providerEnv, startSmtpSink, startTwilioStandIn } from '../helpers/message-sinks.ts';
import {
  HostAuth,
  type Person,
  rawToolsList,
  revokeRefreshToken,
  signInAndConnect,
} from '../helpers/oauth-flow.ts';
import { eachTestServes, type KeyRequest, prepareDatabase } from '../helpers/served-database.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * This round's features (the waitlist, recurring series) with two `booking serve` processes over one
 * PostgreSQL database, as docs/scaling-out.md deploys them: both run the waitlist worker and take
 * requests at once, and the guarantees hold across them. The servers run on the real clock: the day
 * used is a Tuesday one to two weeks ahead, where Ana (small catalogue) does Cuts at Soho 09:00-17:00
 * London, an hour each with the buffer.
 */
const served = eachTestServes('booking-instances-features-');
const ZONE = 'Europe/London';

interface Started {
  servers: RunningServer[];
  apis: ApiClient[];
  ids: { cut: string; ana: string; jo: string };
}

async function startTwo(
  options: { catalogue?: unknown; env?: Record<string, string>; keys?: KeyRequest[]; lookUp?: false } = {},
): Promise<Started & { keys: string[] }> {
  const [key, ...keys] = await prepareDatabase(served.env.DATABASE_URL!, {
    catalogues: [options.catalogue ?? smallCatalogue()],
    keys: [{ organisation: 'acme-hair', rateLimitPerMinute: 1_000_000 }, ...(options.keys ?? [])],
  });
  const env = { ...served.env, ...options.env };
  const servers: RunningServer[] = [];
  for (const started of await Promise.allSettled([
    startServer(['--port', '0'], env),
    startServer(['--port', '0'], env),
  ])) {
    if (started.status === 'fulfilled') servers.push(started.value);
  }
  expect(servers).toHaveLength(2);
  const apis = servers.map((server) => apiClient(server.url, key!));
  // Not even the look-ups, where the test counts the organisation's requests.
  if (options.lookUp === false) return { servers, apis, keys, ids: { cut: '', ana: '', jo: '' } };
  const services =
    await apis[0]!.get<{ id: string; name: string; staff: { id: string; name: string }[] }[]>(
      '/locations/soho/services',
    );
  const cut = services.find((s) => s.name === 'Cut')!;
  const jo = await apis[0]!.get<{ id: string }>('/clients?phone=%2B447911123456');
  return {
    servers,
    apis,
    keys,
    ids: { cut: cut.id, ana: cut.staff.find((s) => s.name === 'Ana')!.id, jo: jo.id },
  };
}

/** Stops both; neither logged a failure (a deadlock, a worker's pass that failed). */
async function stopAll(servers: RunningServer[]): Promise<void> {
  for (const server of servers) {
    expect(await server.stop(), server.stderr()).toBe(0);
    const failures = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{') && (JSON.parse(line) as { level: number }).level >= 50);
    expect(failures).toEqual([]);
  }
}

/** The Tuesday `weeks` weeks after the next one at least a week ahead. */
function tuesday(weeks = 0): string {
  const inAWeek = DateTime.now().setZone(ZONE).plus({ days: 7 });
  return inAWeek.plus({ days: (9 - inAWeek.weekday) % 7, weeks }).toISODate()!;
}

const at = (date: string, hour: number, minute = 0) =>
  DateTime.fromISO(date, { zone: ZONE }).set({ hour, minute }).toISO({ suppressMilliseconds: true })!;

async function ok<T>(api: ApiClient, method: string, url: string, body: unknown, status: number): Promise<T> {
  const answer = await api.request(method, url, body === undefined ? undefined : JSON.stringify(body));
  expect(answer.status, `${method} ${url}: ${answer.text}`).toBe(status);
  return JSON.parse(answer.text).data as T;
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withDatabase<T>(work: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>): Promise<T> {
  const handle = openDatabase(served.env.DATABASE_URL!);
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
}

async function noViolations(): Promise<void> {
  await withDatabase(async (db) => {
    const report = await checkIntegrity(db, Date.now());
    expect(report.findings.filter((f) => f.violations > 0)).toEqual([]);
  });
}

describe.skipIf(!onPostgres)('the waitlist with two instances', () => {
  it('offers each freed time to one entry, lapses each offer once, and books a claim sent to both once', async () => {
    const { servers, apis, ids } = await startTwo();
    try {
      const day = tuesday();
      // Ana's Tuesday full: eight hours, booked on both instances.
      const booked = new Map<number, string>();
      await Promise.all(
        [9, 10, 11, 12, 13, 14, 15, 16].map(async (hour, i) => {
          const body = {
            location_slug: 'soho',
            service_ids: [ids.cut],
            staff_id: ids.ana,
            client_id: ids.jo,
            starts_at: at(day, hour),
          };
          booked.set(
            hour,
            (await ok<{ reference: string }>(apis[i % 2]!, 'POST', '/bookings', body, 201)).reference,
          );
        }),
      );
      // Six people wait for a Cut with Ana that day, joined one after another on either instance.
      const entries: string[] = [];
      for (const [i, name] of ['Ada', 'Bea', 'Cy', 'Dot', 'Eve', 'Fay'].entries()) {
        const body = {
          location_slug: 'soho',
          service_ids: [ids.cut],
          staff_id: ids.ana,
          client: { first_name: name, last_name: 'Waiting', email: `${name.toLowerCase()}@example.com` },
          from_date: day,
          to_date: day,
        };
        entries.push((await ok<{ id: string }>(apis[i % 2]!, 'POST', '/waitlist', body, 201)).id);
      }

      /** The offers made so far: entry, booking, its status and start. */
      const offers = () =>
        withDatabase((db) =>
          db
            .selectFrom('waitlist_offers as o')
            .innerJoin('bookings as b', (join) =>
              join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
            )
            .select(['o.entry_id', 'b.id', 'b.reference', 'b.status', 'b.starts_at', 'b.hold_expires_at'])
            .orderBy('o.created_at')
            .execute(),
        );
      const held = async () => (await offers()).filter((o) => o.status === 'pending_confirmation');

      // Three hours freed at once, on both instances: three offers, one each to the first three.
      await Promise.all(
        [11, 13, 15].map((hour, i) =>
          ok(apis[i % 2]!, 'POST', `/bookings/${booked.get(hour)}/cancel`, {}, 200),
        ),
      );
      await until('three offers', async () => (await offers()).length >= 3);
      await pause(1_000);
      const first = await offers();
      expect(first.map((o) => o.entry_id)).toEqual(entries.slice(0, 3));
      expect(new Set(first.map((o) => o.starts_at)).size).toBe(3);

      // All three lapse at once: both workers sweep them. Each lapses once, and its time is offered
      // to one entry, never back to the one that let it go.
      await withDatabase((db) =>
        db
          .updateTable('bookings')
          .set({ hold_expires_at: Date.now() - 1 })
          .where(
            'id',
            'in',
            first.map((o) => o.id),
          )
          .execute(),
      );
      await until('three new offers', async () => (await held()).length >= 3);
      await pause(1_000);
      const after = await offers();
      const lapsedEvents = await withDatabase((db) =>
        db.selectFrom('booking_events').select(['booking_id']).where('to_status', '=', 'expired').execute(),
      );
      expect(lapsedEvents.map((e) => e.booking_id).sort()).toEqual(first.map((o) => o.id).sort());
      const live = after.filter((o) => o.status === 'pending_confirmation');
      expect(live).toHaveLength(3);
      expect(new Set(live.map((o) => o.starts_at))).toEqual(new Set(first.map((o) => o.starts_at)));
      expect(new Set(live.map((o) => o.entry_id)).size).toBe(3);
      for (const offer of live) {
        const before = first.find((o) => o.entry_id === offer.entry_id);
        if (before) expect(offer.starts_at).not.toBe(before.starts_at);
      }
      expect(after).toHaveLength(6);

      // Each is claimed from its link on both instances at once, three times each: one booking each.
      const tokens = await withDatabase((db) =>
        db
          .selectFrom('booking_pages')
          .select(['booking_id', 'token'])
          .where(
            'booking_id',
            'in',
            live.map((o) => o.id),
          )
          .execute(),
      );
      expect(tokens).toHaveLength(3);
      const claims = await Promise.all(
        tokens.flatMap(({ token }) =>
          Array.from({ length: 6 }, (_, i) => {
            const server = servers[i % 2]!;
            return fetch(`${server.url}/p/manage/${token}/claim`, {
              method: 'POST',
              redirect: 'manual',
              headers: {
                'content-type': 'application/x-www-form-urlencoded',
                origin: new URL(server.url).origin,
              },
              body: '',
            }).then((response) => response.status);
          }),
        ),
      );
      expect(claims).toEqual(Array(18).fill(303));
      await pause(600);
      const claimed = await withDatabase(async (db) => ({
        confirmations: await db
          .selectFrom('booking_events')
          .select('booking_id')
          .where('to_status', '=', 'confirmed')
          .where(
            'booking_id',
            'in',
            live.map((o) => o.id),
          )
          .execute(),
        statuses: await db
          .selectFrom('bookings')
          .select('status')
          .where(
            'id',
            'in',
            live.map((o) => o.id),
          )
          .execute(),
        booked: await db.selectFrom('waitlist_entries').select('id').where('status', '=', 'booked').execute(),
      }));
      expect(claimed.confirmations).toHaveLength(3);
      expect(claimed.statuses.map((s) => s.status)).toEqual(['confirmed', 'confirmed', 'confirmed']);
      expect(new Set(claimed.booked.map((e) => e.id))).toEqual(new Set(live.map((o) => o.entry_id)));
      // No further offer once every freed time is booked.
      expect(await offers()).toHaveLength(6);
      await noViolations();
    } finally {
      await stopAll(servers);
    }
  }, 60_000);
});

interface Visit {
  reference: string;
  starts_at: string;
  status: string;
  series_id: string | null;
}

describe.skipIf(!onPostgres)('recurring series with two instances', () => {
  it('books racing series all or nothing, never a visit twice, and keeps "this and the following" whole against single changes', async () => {
    const { servers, apis, ids } = await startTwo();
    try {
      const cutWithAna = (startsAt: string) => ({
        location_slug: 'soho',
        service_ids: [ids.cut],
        staff_id: ids.ana,
        client_id: ids.jo,
        starts_at: startsAt,
      });
      // Weekly series of three at 10:00 from four Tuesdays in a row, four of each, and single visits
      // at 10:00 on three of those Tuesdays, all at once on both instances: every two series starting
      // within two weeks of each other want a visit on the same Tuesday.
      const asks = [
        ...[0, 1, 2, 3].flatMap((week) =>
          Array.from({ length: 4 }, () => ({
            ...cutWithAna(at(tuesday(week), 10)),
            repeat: { every_weeks: 1, count: 3 },
          })),
        ),
        ...[1, 2, 4].map((week) => cutWithAna(at(tuesday(week), 10))),
      ];
      const answers = await Promise.all(
        asks.map((ask, i) => apis[i % 2]!.request('POST', '/bookings', JSON.stringify(ask))),
      );
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.every((s) => s === 201 || s === 409),
        JSON.stringify(answers.filter((a) => a.status !== 201 && a.status !== 409)),
      ).toBe(true);
      for (const [i, answer] of answers.entries()) {
        if (answer.status !== 409) continue;
        const { error } = JSON.parse(answer.text);
        expect(error.code).toBe('conflict');
        expect(error.reason).toBe('repeat' in asks[i]! ? 'series_clash' : 'slot_unavailable');
      }
      const won = answers.filter((a) => a.status === 201).map((a) => JSON.parse(a.text).data);
      const wonSeries = won.filter((b) => b.series);
      expect(wonSeries.length).toBeGreaterThan(0);
      // What the database holds at 10:00: the visits of the series that won, each whole, and the
      // single visits that won; one per Tuesday at most.
      const rows = await withDatabase((db) =>
        db.selectFrom('bookings').select(['starts_at', 'series_id', 'status']).execute(),
      );
      expect(rows.every((r) => r.status === 'confirmed')).toBe(true);
      expect(new Set(rows.map((r) => r.starts_at)).size).toBe(rows.length);
      expect(rows).toHaveLength(wonSeries.length * 3 + won.filter((b) => !b.series).length);
      for (const series of wonSeries) {
        expect(rows.filter((r) => r.series_id === series.series.id)).toHaveLength(3);
      }
      const seriesRows = await withDatabase((db) => db.selectFrom('booking_series').select('id').execute());
      expect(seriesRows).toHaveLength(wonSeries.length);

      // Two series of four at 12:00 and 14:00 from the Tuesday after those.
      const bookSeries = async (hour: number) => {
        const data = await ok<{ series: { occurrences: Visit[] } }>(
          apis[0]!,
          'POST',
          '/bookings',
          { ...cutWithAna(at(tuesday(6), hour)), repeat: { every_weeks: 1, count: 4 } },
          201,
        );
        return data.series.occurrences;
      };
      const [noon, two] = [await bookSeries(12), await bookSeries(14)];
      // At once: the noon series' second visit and those after it move to 13:00 on one instance while
      // its third is cancelled alone on the other; the 14:00 series' second visit and those after it
      // are cancelled on one while its third moves to 15:00 alone on the other.
      const [moveFollowing, cancelThird, cancelFollowing, moveThird] = await Promise.all([
        apis[0]!.request(
          'PATCH',
          `/bookings/${noon[1]!.reference}`,
          JSON.stringify({ starts_at: at(tuesday(7), 13), scope: 'following' }),
        ),
        apis[1]!.request('POST', `/bookings/${noon[2]!.reference}/cancel`, JSON.stringify({})),
        apis[0]!.request(
          'POST',
          `/bookings/${two[1]!.reference}/cancel`,
          JSON.stringify({ scope: 'following' }),
        ),
        apis[1]!.request(
          'PATCH',
          `/bookings/${two[2]!.reference}`,
          JSON.stringify({ starts_at: at(tuesday(8), 15) }),
        ),
      ]);
      expect(moveFollowing.status, moveFollowing.text).toBe(200);
      expect(cancelThird.status, cancelThird.text).toBe(200);
      expect(cancelFollowing.status, cancelFollowing.text).toBe(200);
      expect([200, 409], moveThird.text).toContain(moveThird.status);
      const now = async (visits: Visit[]) =>
        Promise.all(visits.map((v) => apis[1]!.get<Visit>(`/bookings/${v.reference}`)));
      // Whichever went first: the noon series' third visit is cancelled, every other from the second
      // on is at 13:00; the 14:00 series' visits from the second on are all cancelled.
      const noonNow = await now(noon);
      expect(noonNow.map((v) => v.status)).toEqual(['confirmed', 'confirmed', 'cancelled', 'confirmed']);
      expect(noonNow[0]!.starts_at).toBe(at(tuesday(6), 12).replace('Z', '+00:00'));
      for (const i of [1, 3]) {
        expect(DateTime.fromISO(noonNow[i]!.starts_at).setZone(ZONE).hour).toBe(13);
      }
      const twoNow = await now(two);
      expect(twoNow.map((v) => v.status)).toEqual(['confirmed', 'cancelled', 'cancelled', 'cancelled']);
      await noViolations();
    } finally {
      await stopAll(servers);
    }
  }, 60_000);
});

describe.skipIf(!onPostgres)('caps and budgets counted across two instances', () => {
  it('counts the public page’s caps and a code’s tries once between both instances, not once each', async () => {
    const catalogue = {
      ...smallCatalogue(),
      policies: {
        public_verification: 'code',
        public_holds_per_contact: 2,
        public_attempts_per_address_per_hour: 5,
        public_bookings_per_organisation_per_hour: 10,
      },
    };
    const { servers, apis, ids } = await startTwo({ catalogue, env: { TRUST_PROXY: 'loopback' } });
    try {
      // Ana's free Cuts a week and more ahead, an hour apart (45 minutes and 15 of buffer): one for
      // each form sent.
      const { slots } = await apis[0]!.get<{ slots: { starts_at: string }[] }>(
        `/locations/soho/availability?service_ids=${ids.cut}&date=${tuesday(-1)}&days=14&staff_id=${ids.ana}`,
      );
      const times: string[] = [];
      for (const { starts_at } of slots) {
        if (times.length === 0 || Date.parse(starts_at) >= Date.parse(times.at(-1)!) + 3_600_000)
          times.push(starts_at);
      }
      expect(times.length).toBeGreaterThanOrEqual(30);
      let next = 0;
      /** A form post as the balancer passes it on (TRUST_PROXY): the customer's address, over HTTPS. */
      const behindProxy = (server: RunningServer, address: string) => ({
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(server.url).origin.replace('http:', 'https:'),
        'x-forwarded-for': address,
        'x-forwarded-proto': 'https',
      });
      const send = (i: number, address: string, email: string) => {
        const server = servers[i % 2]!;
        return fetch(`${server.url}/p/acme-hair/book`, {
          method: 'POST',
          redirect: 'manual',
          headers: behindProxy(server, address),
          body: new URLSearchParams({
            location: 'soho',
            services: ids.cut,
            staff: ids.ana,
            starts_at: times[next++]!,
            first_name: 'Rosa',
            last_name: 'Parks',
            email,
          }).toString(),
        }).then(async (response) => ({
          status: response.status,
          location: response.headers.get('location'),
          text: await response.text(),
        }));
      };
      const tally = (answers: { status: number }[]) => {
        const counts: Record<number, number> = {};
        for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
        return counts;
      };

      // Nine forms at once from one address, each its own contact: five attempts an hour from it.
      const fromOne = await Promise.all(
        Array.from({ length: 9 }, (_, i) => send(i, '203.0.113.7', `one-${i}@example.com`)),
      );
      expect(tally(fromOne)).toEqual({ 303: 5, 429: 4 });
      for (const answer of fromOne.filter((a) => a.status === 429)) {
        expect(answer.text).toContain('Too many booking attempts from your connection this hour');
      }
      // Six at once with one e-mail, each from its own address: two holds waiting per contact.
      const oneContact = await Promise.all(
        Array.from({ length: 6 }, (_, i) => send(i, `198.51.100.${i + 1}`, 'same@example.com')),
      );
      expect(tally(oneContact)).toEqual({ 303: 2, 429: 4 });
      for (const answer of oneContact.filter((a) => a.status === 429)) {
        expect(answer.text).toContain('waiting to be confirmed');
      }
      // Eight more at once, each its own contact and address: three left of the salon's ten an hour.
      const many = await Promise.all(
        Array.from({ length: 8 }, (_, i) => send(i, `192.0.2.${i + 1}`, `many-${i}@example.com`)),
      );
      expect(tally(many)).toEqual({ 303: 3, 429: 5 });
      for (const answer of many.filter((a) => a.status === 429)) {
        expect(answer.text).toContain('bookings an hour on this page');
      }
      expect(
        await withDatabase(async (db) => (await db.selectFrom('bookings').select('id').execute()).length),
      ).toBe(10);

      // Ten wrong codes at once for one booking on both instances: five tries in all, then the code
      // is spent, and the right one is refused too.
      const page = fromOne.find((a) => a.status === 303)!.location!;
      const token = page.split('/').at(-1)!;
      const { right, bookingId } = await withDatabase(async (db) => {
        const booking = await db
          .selectFrom('booking_pages')
          .select('booking_id')
          .where('token', '=', token)
          .executeTakeFirstOrThrow();
        const message = await db
          .selectFrom('outbox')
          .select('body')
          .where('booking_id', '=', booking.booking_id)
          .where('kind', '=', 'verification_code')
          .executeTakeFirstOrThrow();
        return { right: /\b(\d{6})\b/.exec(message.body ?? '')![1]!, bookingId: booking.booking_id };
      });
      const wrong = (i: number) => String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0');
      const tryCode = (i: number, code: string) => {
        const server = servers[i % 2]!;
        return fetch(`${server.url}${page}/verify`, {
          method: 'POST',
          redirect: 'manual',
          headers: behindProxy(server, '203.0.113.7'),
          body: new URLSearchParams({ code }).toString(),
        }).then((response) => response.headers.get('location') ?? String(response.status));
      };
      const tries = await Promise.all(Array.from({ length: 10 }, (_, i) => tryCode(i, wrong(i))));
      const refusals = tries.map((location) => /refused=(\w+)/.exec(location)?.[1]);
      expect(refusals.filter((r) => r === 'wrong')).toHaveLength(4);
      expect(refusals.filter((r) => r === 'spent')).toHaveLength(6);
      expect(await tryCode(1, right)).toContain('refused=spent');
      const proof = await withDatabase((db) =>
        db
          .selectFrom('contact_proofs')
          .select(['tries', 'proven_at'])
          .where('booking_id', '=', bookingId)
          .executeTakeFirstOrThrow(),
      );
      expect(proof).toEqual({ tries: 5, proven_at: null });
    } finally {
      await stopAll(servers);
    }
  }, 60_000);

  it('counts an organisation’s requests to both instances, by all its keys, in one budget', async () => {
    const { servers, keys } = await startTwo({
      env: { ORGANISATION_REQUESTS_PER_MINUTE: '120' },
      lookUp: false,
      keys: [
        { organisation: 'acme-hair', rateLimitPerMinute: 100 },
        { organisation: 'acme-hair', rateLimitPerMinute: 100 },
      ],
    });
    try {
      // One minute's window for all of it.
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 50_000) await pause(60_500 - intoMinute);
      const answers = await Promise.all(
        Array.from({ length: 160 }, (_, i) =>
          fetch(`${servers[i % 2]!.url}/v1/locations`, {
            headers: { authorization: `Bearer ${keys[Math.floor(i / 2) % 2]}` },
          }).then(async (response) => ({ status: response.status, body: await response.text() })),
        ),
      );
      // Eighty by each key, under its own hundred: 120 between them, whichever instance answered.
      expect(answers.filter((a) => a.status === 200)).toHaveLength(120);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(40);
      for (const answer of refused) expect(answer.body).toContain('this organisation, across all its keys');
    } finally {
      await stopAll(servers);
    }
  }, 90_000);
});

/**
 * A load balancer in front of the instances: each request goes to the next of them in turn (Host
 * kept: the balancer's), or to the one `pinned` names. `served` lists which took each request.
 */
async function startBalancer(servers: RunningServer[]) {
  const ports = servers.map((server) => Number(new URL(server.url).port));
  const state = { next: 0, pinned: undefined as number | undefined };
  const served: number[] = [];
  const balancer = createServer((incoming, outgoing) => {
    const index = state.pinned ?? state.next++ % ports.length;
    served.push(index);
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: ports[index],
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`,
    served,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        balancer.closeAllConnections();
        balancer.close(() => resolve());
      }),
  };
}

describe.skipIf(!onPostgres)('MCP OAuth with two instances', () => {
  it('signs in with each step on either instance; the token works on both, and revoked on one, on neither', async () => {
    const { servers } = await startTwo({ lookUp: false });
    const person: Person = {
      organisation: 'acme-hair',
      email: 'owner@acme.example',
      password: 'correct horse battery',
    };
    await withDatabase((db) =>
      createUser(
        db,
        { organisationSlug: 'acme-hair', email: person.email, role: 'owner', password: person.password },
        Date.now(),
      ),
    );
    const balancer = await startBalancer(servers);
    try {
      const mcpUrl = new URL('/mcp', balancer.origin);
      // Discovery, registration, the consent page and its form, the code exchange: each request to
      // the next instance.
      const auth = new HostAuth();
      const client = await signInAndConnect(mcpUrl, auth, person);
      expect(new Set(balancer.served)).toEqual(new Set([0, 1]));
      for (let i = 0; i < 4; i++) {
        expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
      }
      await client.close();
      const { access_token: access, refresh_token: refresh } = auth.savedTokens!;
      for (const pinned of [0, 1]) {
        balancer.state.pinned = pinned;
        expect((await rawToolsList(mcpUrl, access)).status).toBe(200);
      }
      // The host revokes its refresh token at the second instance: the first refuses the access token.
      balancer.state.pinned = 1;
      const revoked = await revokeRefreshToken(balancer.origin, auth.info!.client_id, refresh!);
      expect(revoked.status).toBe(200);
      for (const pinned of [0, 1]) {
        balancer.state.pinned = pinned;
        expect((await rawToolsList(mcpUrl, access)).status).toBe(401);
      }
      // Nor can it be refreshed on either.
      for (const pinned of [0, 1]) {
        balancer.state.pinned = pinned;
        const refreshed = await fetch(new URL('/oauth/token', balancer.origin), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: refresh!,
            client_id: auth.info!.client_id,
          }),
        });
        expect(refreshed.status).toBe(400);
      }
    } finally {
      await balancer.close();
      await stopAll(servers);
    }
  }, 60_000);
});

describe.skipIf(!onPostgres)('webhooks and messages with two instances', () => {
  it('sends every event and message of a load when one instance is killed with SIGKILL in the middle of it', async () => {
    const [smtp, twilio, receiver] = await Promise.all([
      startSmtpSink(),
      startTwilioStandIn(),
      startWebhookReceiver(),
    ]);
    const [key] = await prepareDatabase(served.env.DATABASE_URL!, {
      catalogues: [crashCatalogue(6)],
      keys: [{ organisation: CRASH_ORGANISATION, rateLimitPerMinute: 1_000_000 }],
    });
    const env = {
      ...served.env,
      ...providerEnv(smtp, twilio),
      WEBHOOK_ALLOW_INSECURE: '1',
      WEBHOOK_RETRY_UNIT_MS: '100',
      OUTBOX_LEASE_SECONDS: '2',
    };
    const servers = await Promise.all([startServer(['--port', '0'], env), startServer(['--port', '0'], env)]);
    try {
      const apis = servers.map((server) => apiClient(server.url, key!));
      const endpoint = await ok<{ secret: string }>(
        apis[0]!,
        'POST',
        '/webhook-endpoints',
        { url: receiver.url, events: ['booking.created'] },
        201,
      );
      receiver.state.secret = endpoint.secret;
      // Each answer takes a while, so the instance killed holds deliveries it has claimed.
      receiver.state.delayMs = 150;
      const clients: string[] = [];
      for (let i = 0; i < 4; i++) {
        const body = {
          first_name: 'Load',
          last_name: `Customer ${i}`,
          phone: `+4479111234${50 + i}`,
          email: `load-${i}@example.com`,
        };
        clients.push((await ok<{ id: string }>(apis[i % 2]!, 'POST', '/clients', body, 201)).id);
      }
      const pool = await bookingRequests(apis[0]!, 60);
      let next = 0;
      let killed = false;
      await Promise.all(
        Array.from({ length: 6 }, async (_, lane) => {
          while (next < pool.length) {
            const i = next++;
            const request = pool[i]!;
            // The mail server stops answering for a moment, so both instances hold messages they are
            // sending when one is killed; then it answers again.
            if (i === 20) smtp.hold(true);
            if (i === 25 && !killed) {
              killed = true;
              await servers[1]!.stop('SIGKILL');
              smtp.hold(false);
              smtp.release();
            }
            // The balancer sends to the instance still up once the other is gone.
            const api = killed ? apis[0]! : apis[(i + lane) % 2]!;
            await api
              .request(
                'POST',
                '/bookings',
                JSON.stringify({
                  location_slug: CRASH_LOCATION,
                  service_ids: request.serviceIds,
                  staff_id: request.slot.staff_id,
                  client_id: clients[i % clients.length],
                  starts_at: request.slot.starts_at,
                }),
              )
              .catch(() => undefined);
          }
        }),
      );
      // Whatever was committed, answered or not before the kill, is sent: its event and its messages.
      const committed = await withDatabase((db) =>
        db.selectFrom('bookings').select(['id', 'reference']).execute(),
      );
      expect(committed.length).toBeGreaterThanOrEqual(55);
      const delivered = () =>
        new Set(
          receiver.received.filter((r) => r.answered === 200).map((r) => r.json.data.reference as string),
        );
      const messages = () =>
        withDatabase((db) =>
          db
            .selectFrom('outbox')
            .select(['id', 'status', 'channel', 'kind'])
            .where('kind', '=', 'confirmed')
            .execute(),
        );
      // A delivery the killed instance had claimed waits out its lease (30 s), then the other sends it
      // again (with the same event id, for the receiver to deduplicate), as it does a message (2 s here).
      const settled = () =>
        withDatabase((db) =>
          db.selectFrom('webhook_deliveries').select('status').where('status', '!=', 'succeeded').execute(),
        );
      await until(
        'every event and message sent',
        async () =>
          committed.every((b) => delivered().has(b.reference)) &&
          (await messages()).every((m) => m.status === 'sent') &&
          (await settled()).length === 0,
        60_000,
      );
      const sent = await messages();
      // One confirmation each (by e-mail: the salon texts no country).
      expect(sent).toHaveLength(committed.length);
      for (const message of sent) {
        if (message.channel === 'sms') expect(twilio.accepted.has(message.id), message.id).toBe(true);
        else expect(smtp.accepted.has(`<${message.id}@booking-engine.outbox>`), message.id).toBe(true);
      }
      const deliveries = await withDatabase((db) =>
        db.selectFrom('webhook_deliveries').select(['status', 'attempts']).execute(),
      );
      expect(deliveries.map((d) => d.status)).toEqual(committed.map(() => 'succeeded'));
      const outbox = await withDatabase((db) =>
        db.selectFrom('outbox').select(['attempts']).where('kind', '=', 'confirmed').execute(),
      );
      console.info(
        `killed mid-load: ${committed.length} bookings, webhook attempts ${deliveries.reduce((n, d) => n + d.attempts, 0)}, message attempts ${outbox.reduce((n, m) => n + m.attempts, 0)}, webhook receipts ${receiver.received.length}, mails ${smtp.received.length}`,
      );
      expect(twilio.malformed).toEqual([]);
    } finally {
      for (const server of servers) await server.stop('SIGKILL');
      await Promise.all([smtp.close(), twilio.close(), receiver.close()]);
    }
  }, 120_000);
});

import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availabilityAt } from '../../src/app/availability-cache.ts';
import { getAvailability, getSlotAt } from '../../src/app/availability-service.ts';
import { createAppDeps, rateLimitStoreFor } from '../../src/app/deps.ts';
import { requireLocation } from '../../src/app/directory-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { presentAvailability } from '../../src/contract/availability.ts';
import type { DatabaseHandle } from '../../src/data/database.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * Availability answers are reused between requests (src/app/availability-cache.ts). Whatever happens
 * in between, each answer must be the one the uncached engine gives at that moment: bookings made
 * (with and without a deposit hold), cancelled and rescheduled through the REST API, catalogue rows
 * written straight into the database (time off, closures, working hours, a staff member leaving), and
 * the clock stepping over notice boundaries, hold expiries and midnights. Reads go through the REST
 * route of one instance and through a second handle on the same database (another instance, with a
 * cache of its own); each is compared with getAvailability read afresh. Bookings go through the REST
 * route of either instance, whose re-checks reuse catalogue reads (src/app/catalogue-cache.ts): each
 * is made or refused as the slot check read afresh says.
 */
let t: TestApp;
let other: DatabaseHandle;
/** The second instance's app, on `other`. */
let otherApp: FastifyInstance;
let ids: CatalogueIds;
/** A key whose own limit is far above what the test sends. */
let key: string;

beforeAll(async () => {
  t = await startTestApp();
  other = t.database.reopen();
  otherApp = await buildApp(
    createAppDeps({
      db: other.db,
      clock: t.clock,
      secret: 'test-secret',
      payments: localCheckout,
      rateLimitStore: rateLimitStoreFor(other.db, onPostgres ? null : t.database.file),
    }),
  );
  ids = await catalogueIds(t.database.db);
  key = await t.keyFor('acme-hair', 'read_write', 1_000_000);
});
afterAll(async () => {
  await otherApp.close();
  await other.close();
  await t.close();
});

const DAYS = ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26'];
const MINUTE = 60_000;

/** A few fixed asks, so that reads repeat and answers are served from the cache. */
const asks = () => [
  { serviceIds: [ids.services.cut!], fromDate: DAYS[0]!, days: 3 },
  { serviceIds: [ids.services.cut!], staffId: ids.staff.ana, fromDate: DAYS[0]!, days: 1 },
  { serviceIds: [ids.services.colour!], fromDate: DAYS[0]!, days: 2 },
  { serviceIds: [ids.services.cut!], fromDate: DAYS[2]!, days: 2 },
  { serviceIds: [ids.services.cut!, ids.services.colour!], fromDate: DAYS[1]!, days: 1 },
];

const time = fc.record({ day: fc.nat(DAYS.length - 1), slot: fc.nat(40) });
const startOf = ({ day, slot }: { day: number; slot: number }) => {
  const minutes = 8 * 60 + slot * 15;
  return `${DAYS[day]}T${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}:00+00:00`;
};

const command = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('read' as const), ask: fc.nat(4), via: fc.nat(1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('book' as const),
      service: fc.constantFrom('cut', 'colour'),
      staff: fc.constantFrom('ana', 'bo', undefined),
      at: time,
      via: fc.nat(1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reschedule' as const), pick: fc.nat(), at: time }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('catalogue' as const),
      edit: fc.constantFrom('time_off', 'drop_time_off', 'closure', 'hours', 'toggle_staff'),
      staff: fc.constantFrom('ana', 'bo'),
      at: time,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      minutes: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 20, max: 24 * 60 })),
    }),
  },
);
type Command = typeof command extends fc.Arbitrary<infer C> ? C : never;

let hits = 0;
let reads = 0;
const lastAnswers = new Map<number, unknown>();
const references: string[] = [];

/** A refusal, by its error code and parameter (anything else is rethrown: it is a failure). */
function refusalOf(error: unknown): { refused: string } {
  const { code, param } = (error ?? {}) as { code?: unknown; param?: unknown };
  if (code !== 'invalid_request' && code !== 'not_found') throw error;
  return { refused: `${String(code)}:${String(param)}` };
}

async function run(c: Command): Promise<void> {
  const db = t.database.db;
  switch (c.kind) {
    case 'read': {
      const ask = { ...asks()[c.ask]!, locationSlug: 'soho' };
      const now = t.clock.nowMs();
      const location = await requireLocation(db, ids.organisation, 'soho');
      // The uncached answer, or the refusal (a staff member made inactive is refused with 400).
      const expected = await getAvailability(db, ids.organisation, { location, ...ask }, now).catch(
        (error: unknown) => refusalOf(error),
      );
      reads += 1;
      if (c.via === 0) {
        const staff = ask.staffId ? `&staff_id=${ask.staffId}` : '';
        const response = await t.request({
          key,
          method: 'GET',
          url: `/v1/locations/soho/availability?service_ids=${ask.serviceIds.join(',')}&date=${ask.fromDate}&days=${ask.days}${staff}`,
        });
        if ('refused' in expected) {
          expect(response.statusCode).toBe(400);
          expect(refusalOf({ code: response.json().error.code, param: response.json().error.param })).toEqual(
            expected,
          );
        } else {
          expect(response.statusCode).toBe(200);
          expect(response.json().data).toEqual(presentAvailability(location, expected));
        }
      } else {
        const answer = await availabilityAt(other.db, ids.organisation, ask, now).catch((error: unknown) =>
          refusalOf(error),
        );
        if ('refused' in answer) {
          expect(answer).toEqual(expected);
          return;
        }
        expect(answer.availability).toEqual(expected);
        // The very object of an earlier answer is an answer served from the cache.
        if (lastAnswers.get(c.ask) === answer.availability) hits += 1;
        lastAnswers.set(c.ask, answer.availability);
      }
      return;
    }
    case 'book': {
      // What the slot check says when it reads everything afresh: 201 for a slot it offers, 409 for
      // none (taken, closed, too soon…), 400 for a staff member made inactive.
      const request = {
        location: await requireLocation(db, ids.organisation, 'soho'),
        serviceIds: [ids.services[c.service]!],
        staffId: c.staff && ids.staff[c.staff],
      };
      const expected = await getSlotAt(
        db,
        ids.organisation,
        request,
        Date.parse(startOf(c.at)),
        t.clock.nowMs(),
      )
        .then(({ slot }) => (slot ? 201 : 409))
        .catch((error: unknown) => (refusalOf(error).refused === 'invalid_request:staff_id' ? 400 : error));
      const booking = {
        method: 'POST' as const,
        url: '/v1/bookings',
        payload: {
          location_slug: 'soho',
          service_ids: request.serviceIds,
          ...(request.staffId && { staff_id: request.staffId }),
          client_id: ids.jo,
          starts_at: startOf(c.at),
        },
      };
      const response =
        c.via === 0
          ? await t.request({ key, ...booking })
          : await otherApp.inject({ ...booking, headers: { authorization: `Bearer ${key}` } });
      expect(response.statusCode, response.body).toBe(expected);
      if (response.statusCode === 201) references.push(response.json().data.reference);
      return;
    }
    case 'cancel':
    case 'reschedule': {
      if (references.length === 0) return;
      const reference = references[c.pick % references.length]!;
      const response =
        c.kind === 'cancel'
          ? await t.request({
              key,
              method: 'POST',
              url: `/v1/bookings/${reference}/cancel`,
              payload: {},
            })
          : await t.request({
              key,
              method: 'PATCH',
              url: `/v1/bookings/${reference}`,
              payload: { starts_at: startOf(c.at) },
            });
      expect([200, 400, 409]).toContain(response.statusCode);
      return;
    }
    case 'catalogue': {
      const staffId = ids.staff[c.staff]!;
      const start = Date.parse(startOf(c.at));
      if (c.edit === 'time_off') {
        await db
          .insertInto('staff_time_off')
          .values({
            id: crypto.randomUUID(),
            organisation_id: ids.organisation,
            staff_id: staffId,
            starts_at: start,
            ends_at: start + 90 * MINUTE,
            reason: null,
          })
          .execute();
      } else if (c.edit === 'drop_time_off') {
        await db.deleteFrom('staff_time_off').where('staff_id', '=', staffId).execute();
      } else if (c.edit === 'closure') {
        const date = DAYS[c.at.day]!;
        const deleted = await db
          .deleteFrom('location_closures')
          .where('location_id', '=', ids.locations.soho!)
          .where('date', '=', date)
          .executeTakeFirst();
        if (deleted.numDeletedRows === 0n) {
          await db
            .insertInto('location_closures')
            .values({
              organisation_id: ids.organisation,
              location_id: ids.locations.soho!,
              date,
              reason: 'Staff training',
            })
            .execute();
        }
      } else if (c.edit === 'hours') {
        await db
          .updateTable('staff_working_hours')
          .set({ end_minute: 12 * 60 + (c.at.slot % 24) * 15 })
          .where('staff_id', '=', staffId)
          .execute();
      } else {
        const row = await db
          .selectFrom('staff')
          .select('active')
          .where('id', '=', staffId)
          .executeTakeFirstOrThrow();
        await db
          .updateTable('staff')
          .set({ active: row.active === 1 ? 0 : 1 })
          .where('id', '=', staffId)
          .execute();
      }
      return;
    }
    case 'clock':
      t.clock.advance({ minutes: c.minutes });
      return;
  }
}

describe('availability answers reused between requests', () => {
  it('always equal the uncached engine, whatever happens in between', { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 40 }), async (commands) => {
        // Each run starts the clock over (the cache must also cope with a clock set back).
        t.clock.set(TEST_START);
        for (const c of commands) await run(c);
      }),
      { numRuns: 40 },
    );
    expect(reads).toBeGreaterThan(100);
    // Without reuse the comparison above would prove nothing about the cache.
    expect(hits).toBeGreaterThan(reads / 20);
  });
});

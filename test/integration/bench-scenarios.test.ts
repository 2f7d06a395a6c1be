import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { createAvailabilityDatabase } from '../../bench/lib/availability-database.ts';
import { createBenchDatabase } from '../../bench/lib/bench-database.ts';
import {
  BOOKINGS_SCENARIO,
  bookingSlot,
  createBookingsDatabase,
  SLOT_CAPACITY,
  SLOTS_PER_DAY,
} from '../../bench/lib/bookings-database.ts';
import { createMcpBenchDatabase } from '../../bench/lib/mcp-database.ts';
import { MIXED_LOAD, mixedLoadCatalogue } from '../../bench/lib/mixed-load-catalogue.ts';
import { BUDGETS_SCENARIO, prepareBudgetsDatabase } from '../../bench/lib/organisation-budgets-scenario.ts';
import { startFlood } from '../../bench/lib/organisation-flood.ts';
import { createOutboxDatabase } from '../../bench/lib/outbox-database.ts';
import {
  censusSlot,
  createPublicBookingDatabase,
  DIARY_CAPACITY,
  DIARY_DAYS,
  diarySlot,
  PHONES,
  publicPhone,
} from '../../bench/lib/public-booking-database.ts';
import { MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { newClientDetails } from '../../src/app/client-service.ts';
import { isTextable } from '../../src/app/phone-destinations.ts';
import { type Db, openDatabase } from '../../src/data/database.ts';
import { startServer } from '../helpers/cli.ts';
import {
  createTempDatabase,
  freshDatabaseUrl,
  onPostgres,
  type TempDatabase,
} from '../helpers/temp-database.ts';

/**
 * The benchmarks' scenarios still seed under today's rules. `npm run bench` is not part of the suite,
 * so a rule tightened in the engine (a key's rate limit capped at MAX_KEY_RATE_LIMIT, say, which every
 * benchmark's key exceeded) broke every benchmark without a failing test. Each scenario is seeded
 * here as its benchmark seeds it, and its key is checked to carry the highest limit a key may have.
 * The scenarios are SQLite files (the outbox one plants a row with a SQLite pragma); the instances
 * benchmark seeds PostgreSQL through the command line, with the same limit.
 */
describe.skipIf(onPostgres)('benchmark scenarios', () => {
  const seeds: [string, () => Promise<{ database: TempDatabase }>][] = [
    ['services-endpoint', () => createBenchDatabase(Date.parse('2026-11-23T09:00:00Z'))],
    ['availability', createAvailabilityDatabase],
    ['bookings-endpoint', () => createBookingsDatabase()],
    ['mcp-round-trips', createMcpBenchDatabase],
    ['outbox', createOutboxDatabase],
  ];

  for (const [name, seed] of seeds) {
    it(`seeds the ${name} scenario, with a key nothing in the benchmark refuses`, async () => {
      const { database } = await seed();
      try {
        expect(await keyLimits(database.db)).toEqual([MAX_KEY_RATE_LIMIT]);
      } finally {
        await database.dispose();
      }
    }, 60_000);
  }

  // The outbox benchmark books some 100,000 of them on a fast machine: it once reached 2031-03-30,
  // where minutes added to midnight put the day's last hour after closing (96 refusals).
  it("puts every slot of the bookings scenario inside the location's hours, on the days the clocks change too", () => {
    const { timezone, dayStart, dayEnd, slotMinutes, staff } = BOOKINGS_SCENARIO;
    const local = (ms: number) => DateTime.fromMillis(ms, { zone: timezone });
    const minuteOfDay = (ms: number) => {
      const { hour, minute } = local(ms);
      return hour * 60 + minute;
    };
    const days = SLOT_CAPACITY / SLOTS_PER_DAY;
    const changeDays: number[] = [];
    for (let day = 0; day < days; day += 1) {
      const first = bookingSlot(day * SLOTS_PER_DAY);
      const last = bookingSlot((day + 1) * SLOTS_PER_DAY - 1);
      expect([minuteOfDay(first.startsAt), minuteOfDay(last.startsAt)]).toEqual([
        dayStart,
        dayEnd - slotMinutes,
      ]);
      expect([first.staff, last.staff]).toEqual([0, staff - 1]);
      expect(local(first.startsAt).toISODate()).toBe(local(last.startsAt).toISODate());
      expect(DateTime.fromISO(first.startsAtIso).toMillis()).toBe(first.startsAt);
      const midnight = local(first.startsAt).startOf('day');
      if (midnight.offset !== midnight.plus({ days: 1 }).offset) changeDays.push(day);
    }
    // Ten years of days (2031 to 2040): twenty clock changes, each one checked above.
    expect(changeDays).toHaveLength(20);
  });

  it('seeds the public-booking scenario: two organisations that differ in public_verification alone, keys nothing refuses', async () => {
    const { database } = await createPublicBookingDatabase();
    try {
      expect(await keyLimits(database.db)).toEqual([MAX_KEY_RATE_LIMIT, MAX_KEY_RATE_LIMIT]);
      const policies = await database.db
        .selectFrom('organisations')
        .select([
          'slug',
          'public_verification',
          'public_holds_per_contact',
          'public_bookings_per_contact_per_day',
          'public_attempts_per_address_per_hour',
          'public_bookings_per_organisation_per_hour',
        ])
        .orderBy('slug')
        .execute();
      // The caps per contact at their defaults; the one address the load comes from may try the most.
      const caps = {
        public_holds_per_contact: 2,
        public_bookings_per_contact_per_day: 3,
        public_attempts_per_address_per_hour: 100_000,
        public_bookings_per_organisation_per_hour: 100_000,
      };
      expect(policies).toEqual([
        { slug: 'slot-studio', public_verification: 'code', ...caps },
        { slug: 'slot-studio-direct', public_verification: 'none', ...caps },
      ]);
    } finally {
      await database.dispose();
    }
  }, 60_000);

  it("gives the public-booking benchmark's forms phones the page texts, and starts inside the location's hours", () => {
    for (const i of [0, PHONES - 1]) {
      const phone = publicPhone(i);
      const details = newClientDetails({ firstName: 'Pat', lastName: 'Public', phone, email: undefined });
      expect(details.contact.phone).toBe(phone);
      expect(isTextable(phone, new Set(['GB']))).toBe(true);
    }
    const { timezone, dayStart, dayEnd, slotMinutes, firstDate } = BOOKINGS_SCENARIO;
    const local = (iso: string) => DateTime.fromISO(iso, { setZone: true }).setZone(timezone);
    const minuteOf = (iso: string) => local(iso).hour * 60 + local(iso).minute;
    // Day d's first booking opens it, on the clock-change days too; the diary's last booking closes its last day.
    for (let day = 0; day < DIARY_DAYS; day += 1) {
      const slot = diarySlot(day);
      expect(minuteOf(slot.startsAtIso)).toBe(dayStart);
      expect(local(slot.startsAtIso).toISODate()).toBe(slot.date);
      expect(slot.date).toBe(DateTime.fromISO(firstDate).plus({ days: day }).toISODate());
    }
    const last = diarySlot(DIARY_CAPACITY - 1);
    expect([last.date, minuteOf(last.startsAtIso)]).toEqual([
      diarySlot(DIARY_DAYS - 1).date,
      dayEnd - slotMinutes,
    ]);
    expect(censusSlot(0).date).toBe(DateTime.fromISO(firstDate).plus({ days: DIARY_DAYS }).toISODate());
  });

  it('imports the mixed load catalogue', async () => {
    const database = await createTempDatabase();
    try {
      await importCatalogue(database.db, mixedLoadCatalogue(), Date.now());
      const clients = await database.db.selectFrom('clients').select('id').execute();
      expect(clients).toHaveLength(MIXED_LOAD.clients);
    } finally {
      await database.dispose();
    }
  }, 60_000);
});

/**
 * The organisation-budgets benchmark's scenario, on either database: seeded as the benchmark seeds
 * it, and its flood, run briefly against a real `booking serve` with a small budget, is refused by
 * the organisation's budget while the other organisation is served.
 */
describe('organisation-budgets scenario', () => {
  it('seeds the organisation-budgets scenario, and its flood meets the organisation budget of `booking serve`', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-budgets-'));
    const database = await freshDatabaseUrl(dir);
    const seeded = await prepareBudgetsDatabase(database.url);
    const handle = openDatabase(database.url);
    try {
      // The quiet salon's key: nothing refuses it; the busy salon's: all on the default limit.
      expect((await keyLimits(handle.db)).sort()).toEqual([
        MAX_KEY_RATE_LIMIT,
        ...Array(BUDGETS_SCENARIO.attackerKeys).fill(null),
      ]);
    } finally {
      await handle.close();
    }
    expect(seeded.attacker.clientIds).toHaveLength(MIXED_LOAD.clients);
    const server = await startServer(['--port', '0'], {
      DATABASE_URL: database.url,
      // The lowest budget there is: one key's default limit.
      ORGANISATION_REQUESTS_PER_MINUTE: '120',
    });
    try {
      const flood = startFlood({
        origin: server.url,
        keys: seeded.attackerKeys,
        rate: 100,
        connections: 10,
        seed: 1,
        ...seeded.attacker,
      });
      const quiet = [];
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 600));
        const answer = await fetch(`${server.url}/v1/locations/${MIXED_LOAD.location}/services`, {
          headers: { authorization: `Bearer ${seeded.victimKey}` },
        });
        quiet.push(answer.status);
      }
      const figures = await flood.stop();
      expect(quiet).toEqual([200, 200, 200, 200, 200]);
      // About 300 requests, 12 per key, each key under its own limit: at most the budget of the (at
      // most two) windows they fell in was served, the rest refused by the organisation's budget.
      expect(figures.sent).toBeGreaterThanOrEqual(290);
      const served = Object.values(figures.served).reduce((n, v) => n + v, 0);
      expect(served).toBeLessThanOrEqual(240);
      expect(figures.statuses[0]).toBeUndefined();
      expect(Object.keys(figures.refusals)).toEqual([
        'More than 120 requests in a minute for this organisation, across all its keys; wait and retry.',
      ]);
      expect(figures.refusals[Object.keys(figures.refusals)[0]!]).toBe(figures.sent - served);
    } finally {
      await server.stop();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

async function keyLimits(db: Db): Promise<(number | null)[]> {
  const rows = await db.selectFrom('api_keys').select('rate_limit_per_minute').execute();
  return rows.map((row) => (row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute)));
}

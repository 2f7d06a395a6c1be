import fc from 'fast-check';
import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { LIVE_STATUSES } from '../../src/domain/booking/state-machine.ts';
import { addDays, instantOf, type LocalMinute, localMinutes } from '../helpers/availability-oracle.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Recurring series across the nights the clocks change, in zones of every kind (design.md 9.5,
 * docs/recurring.md), through REST on a catalogue with time off and bookings already made: a series
 * booked (201) has every visit at the first one's local wall time on its own date, its starts_at
 * written with the offset in force then, inside its stylist's working hours of that local date,
 * clear of their time off and of every other live booking; a series refused (409 series_clash) books
 * nothing and names each clash by its visit's date (and, where the wall time exists, its start).
 * Working intervals are read as instants by the availability oracle (test/helpers), which shares no
 * code with the engine.
 *
 * Kit works every day 00:00-06:00 (the hours the clocks change in) and 09:00-17:00; Lee weekdays
 * 10:00-14:00. A Trim is 30 minutes and a 15-minute buffer, on a 30-minute grid.
 */
const MINUTE = 60_000;

/** Each zone and two nights of 2027 its clocks change (Kolkata has none: an ordinary Sunday). */
const ZONES: Record<string, [string, string]> = {
  'Europe/London': ['2027-03-28', '2027-10-31'],
  'America/New_York': ['2027-03-14', '2027-11-07'],
  'Australia/Sydney': ['2027-04-04', '2027-10-03'],
  'Asia/Kolkata': ['2027-03-28', '2027-10-31'],
  'Australia/Lord_Howe': ['2027-04-04', '2027-10-03'],
  // Santiago's clocks change at midnight, between Saturday and Sunday.
  'America/Santiago': ['2027-04-04', '2027-09-05'],
};

/** Wall minutes a visit may want: the small hours the clocks change in, and the day. */
const WALL_MINUTES = [0, 30, 60, 90, 120, 150, 180, 540, 600, 960];

function catalogue(zone: string, timeOff: { start: string; end: string }[]) {
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  return {
    organisation: {
      slug: 'clock-cuts',
      name: 'Clock Cuts',
      currency: 'GBP',
      booking_reference_prefix: 'CC',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: 'here',
        slug: 'here',
        name: 'Here',
        timezone: zone,
        phone: '+442071234567',
        active: true,
        policy: { slot_interval_minutes: 30, min_notice_minutes: 0, max_advance_days: 60 },
        booking_protection: {
          applies: false,
          late_cancellation_fee_percentage: null,
          no_show_fee_percentage: null,
        },
      },
    ],
    services: [
      {
        ref: 'trim',
        name: 'Trim',
        duration_minutes: 30,
        buffer_after_minutes: 15,
        price: { amount: 2000, currency: 'GBP' },
        locations: ['here'],
      },
    ],
    staff: [
      {
        ref: 'kit',
        name: 'Kit',
        services: ['trim'],
        working_hours: {
          here: Object.fromEntries(
            days.map((d) => [
              d,
              [
                ['00:00', '06:00'],
                ['09:00', '17:00'],
              ],
            ]),
          ),
        },
        time_off: timeOff,
      },
      {
        ref: 'lee',
        name: 'Lee',
        services: ['trim'],
        working_hours: { here: Object.fromEntries(days.slice(0, 5).map((d) => [d, [['10:00', '14:00']]])) },
      },
    ],
    clients: [
      { ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+447911123456' },
      { ref: 'ola', first_name: 'Ola', last_name: 'Berg', phone: '+447911123457' },
    ],
  };
}

/** The instants whose local wall clock reads `minute` on `date` (none in a gap, two in an overlap). */
function wallInstants(table: LocalMinute[], date: string, minute: number): number[] {
  let index = wallIndexes.get(table);
  if (!index) {
    index = new Map();
    for (const m of table) {
      const key = `${m.date}|${m.minute}`;
      index.set(key, [...(index.get(key) ?? []), m.t]);
    }
    wallIndexes.set(table, index);
  }
  return index.get(`${date}|${minute}`) ?? [];
}
const wallIndexes = new WeakMap<LocalMinute[], Map<string, number[]>>();

const wallOf = (instant: number, zone: string) => {
  const local = DateTime.fromMillis(instant, { zone });
  return { date: local.toISODate()!, minute: local.hour * 60 + local.minute };
};

/** The offset written in an ISO date-time, in minutes ("+05:30" is 330). */
function writtenOffset(text: string): number {
  const match = /([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!match) return text.endsWith('Z') ? 0 : Number.NaN;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

const localText = (date: string, minute: number) =>
  `${date}T${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

const scenario = fc.record({
  zone: fc.constantFrom(...Object.keys(ZONES)),
  autumn: fc.boolean(),
  /** The first visit this many days before the night the clocks change (so the series crosses it). */
  daysBefore: fc.integer({ min: 0, max: 16 }),
  minute: fc.constantFrom(...WALL_MINUTES),
  /** Where the first wall time happens twice: the later of the two. */
  later: fc.boolean(),
  everyWeeks: fc.integer({ min: 1, max: 2 }),
  count: fc.integer({ min: 2, max: 4 }),
  named: fc.boolean(),
  timeOff: fc.array(
    fc.record({
      day: fc.integer({ min: 0, max: 30 }),
      minute: fc.constantFrom(0, 60, 540, 600, 720),
      hours: fc.integer({ min: 1, max: 4 }),
    }),
    { maxLength: 2 },
  ),
  /** Bookings of another client made first: a week after the first visit, at its time or another. */
  others: fc.array(
    fc.record({
      week: fc.integer({ min: 0, max: 4 }),
      minute: fc.option(fc.constantFrom(...WALL_MINUTES), { nil: undefined }),
    }),
    { maxLength: 3 },
  ),
});

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('recurring series across clock changes (property)', () => {
  it('books every visit at its wall time with the offset in force, in working hours, clear of time off and bookings, or books nothing', async () => {
    const seen = { booked: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const zone = s.zone;
        const change = ZONES[zone]![s.autumn ? 1 : 0];
        const firstDate = addDays(change, -s.daysBefore);
        const horizonDays = 7 * s.everyWeeks * (s.count - 1) + 40;
        const table = localMinutes(zone, addDays(firstDate, -1), horizonDays);
        const firstInstants = wallInstants(table, firstDate, s.minute);
        // The first visit is a time that exists (one the clocks skip is refused as a single booking).
        fc.pre(firstInstants.length > 0);
        const first = s.later ? firstInstants.at(-1)! : firstInstants[0]!;
        const timeOff = s.timeOff
          .map((off) => {
            const date = addDays(firstDate, off.day);
            const end = off.minute + off.hours * 60;
            return { date, start: off.minute, end };
          })
          // Time off is written in local date-times; one the clocks skip is refused by the import.
          .filter((off) => wallInstants(table, off.date, off.start).length > 0)
          .filter((off) => wallInstants(table, off.date, off.end).length > 0)
          .map((off) => ({ start: localText(off.date, off.start), end: localText(off.date, off.end) }))
          .filter((off, i, all) => all.findIndex((o) => o.start === off.start && o.end === off.end) === i);

        t = await startTestApp({
          catalogues: [catalogue(zone, timeOff)],
          now: `${addDays(firstDate, -7)}T00:00:00Z`,
          limits: { requestsPerMinute: 100_000 },
        });
        const app = t;
        try {
          const db = app.database.db;
          const service = (await db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
          const staff = await db.selectFrom('staff').select(['id', 'name']).execute();
          const kit = staff.find((m) => m.name === 'Kit')!.id;
          const clients = await db.selectFrom('clients').select(['id', 'first_name']).execute();
          const sam = clients.find((c) => c.first_name === 'Sam')!.id;
          const ola = clients.find((c) => c.first_name === 'Ola')!.id;

          for (const other of s.others) {
            // Without a minute of its own: the series' wall time that week, where a visit will want it.
            const [at] = wallInstants(table, addDays(firstDate, 7 * other.week), other.minute ?? s.minute);
            if (at === undefined) continue;
            await app.request({
              method: 'POST',
              url: '/v1/bookings',
              payload: {
                location_slug: 'here',
                service_ids: [service],
                client_id: ola,
                starts_at: new Date(at).toISOString(),
              },
            });
          }

          const response = await app.request({
            method: 'POST',
            url: '/v1/bookings',
            payload: {
              location_slug: 'here',
              service_ids: [service],
              ...(s.named && { staff_id: kit }),
              client_id: sam,
              starts_at: new Date(first).toISOString(),
              repeat: { every_weeks: s.everyWeeks, count: s.count },
            },
          });
          const firstWall = wallOf(first, zone);
          const wantedDates = Array.from({ length: s.count }, (_, k) =>
            addDays(firstDate, 7 * s.everyWeeks * k),
          );
          const rows = await db
            .selectFrom('bookings')
            .select(['id', 'client_id', 'staff_id', 'starts_at', 'ends_at', 'blocked_until', 'status'])
            .execute();
          const mine = rows.filter((r) => r.client_id === sam);

          if (response.statusCode !== 201) {
            seen.refused += 1;
            expect(response.statusCode, response.body).toBe(409);
            const error = response.json().error;
            expect(mine, 'a refused series books nothing').toEqual([]);
            // A single visit refused on its own (the first's own refusal) is no series_clash: nothing to check.
            if (error.reason !== 'series_clash') return;
            for (const clash of error.details.clashes as {
              occurrence: number;
              date: string;
              starts_at: string | null;
            }[]) {
              const date = wantedDates[clash.occurrence - 1]!;
              expect(clash.date).toBe(date);
              const instants = wallInstants(table, date, firstWall.minute);
              if (clash.starts_at === null) {
                expect(instants, `${date} has no ${firstWall.minute}`).toEqual([]);
              } else {
                expect(instants).toContain(Date.parse(clash.starts_at));
                expect(writtenOffset(clash.starts_at)).toBe(
                  DateTime.fromMillis(Date.parse(clash.starts_at), { zone }).offset,
                );
              }
            }
            return;
          }

          seen.booked += 1;
          const occurrences = response.json().data.series.occurrences as {
            starts_at: string;
            ends_at: string;
            staff_id: string;
          }[];
          expect(occurrences).toHaveLength(s.count);
          expect(mine).toHaveLength(s.count);
          const timeOffRows = await db
            .selectFrom('staff_time_off')
            .select(['staff_id', 'starts_at', 'ends_at'])
            .execute();
          const hours = await db
            .selectFrom('staff_working_hours')
            .select(['staff_id', 'weekday', 'start_minute', 'end_minute'])
            .execute();
          const live = rows.filter((r) => (LIVE_STATUSES as readonly string[]).includes(r.status));
          for (const [k, occurrence] of occurrences.entries()) {
            const start = Date.parse(occurrence.starts_at);
            const end = Date.parse(occurrence.ends_at);
            // Its offset is the one in force then, on both ends.
            expect(writtenOffset(occurrence.starts_at), occurrence.starts_at).toBe(
              DateTime.fromMillis(start, { zone }).offset,
            );
            expect(writtenOffset(occurrence.ends_at), occurrence.ends_at).toBe(
              DateTime.fromMillis(end, { zone }).offset,
            );
            // The first visit's wall time, on its own date.
            const wall = wallOf(start, zone);
            expect(wall, occurrence.starts_at).toEqual({ date: wantedDates[k], minute: firstWall.minute });
            if (k === 0) expect(start).toBe(first);
            if (s.named) expect(occurrence.staff_id).toBe(kit);
            // Inside one of its stylist's working intervals of that local date.
            const weekday = DateTime.fromISO(wall.date, { zone: 'utc' }).weekday;
            const inHours = hours
              .filter((h) => h.staff_id === occurrence.staff_id && h.weekday === weekday)
              .some(
                (h) =>
                  instantOf(table, wall.date, h.start_minute) <= start &&
                  end <= instantOf(table, wall.date, h.end_minute),
              );
            expect(inHours, `${occurrence.starts_at} in working hours`).toBe(true);
            const row = mine.find((r) => Number(r.starts_at) === start)!;
            const blockEnd = Number(row.blocked_until);
            expect(blockEnd - end).toBe(15 * MINUTE);
            // Clear of their time off and of every other live booking of theirs.
            for (const off of timeOffRows.filter((o) => o.staff_id === occurrence.staff_id)) {
              expect(
                start < Number(off.ends_at) && Number(off.starts_at) < blockEnd,
                `${occurrence.starts_at} in time off`,
              ).toBe(false);
            }
            for (const other of live.filter((r) => r.staff_id === occurrence.staff_id && r.id !== row.id)) {
              expect(
                start < Number(other.blocked_until) && Number(other.starts_at) < blockEnd,
                `${occurrence.starts_at} overlaps another booking`,
              ).toBe(false);
            }
          }
        } finally {
          await app.close();
          t = undefined;
        }
      }),
      { numRuns: 14, seed: 20271107 },
    );
    expect(seen.booked).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 300_000);
});

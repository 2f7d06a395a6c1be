import fc from 'fast-check';
import { DateTime } from 'luxon';
import type {
  AvailabilityQuery,
  BusyBooking,
  Interval,
  ServiceSpec,
  StaffSchedule,
  WorkingInterval,
} from '../../src/domain/availability/types.ts';
import { addDays } from '../helpers/availability-oracle.ts';

const MINUTE = 60_000;

export const ZONES = [
  'Europe/London',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  'America/Santiago',
  'Pacific/Chatham',
  'UTC',
  'Asia/Kolkata',
  'America/St_Johns',
] as const;

/** Local dates in 2026/2027 on which the zone's offset changes (found by scanning, not hard-coded). */
function offsetChangeDates(zone: string): string[] {
  const dates: string[] = [];
  for (let day = 0; day < 730; day++) {
    const t = Date.UTC(2026, 0, 1 + day);
    const before = DateTime.fromMillis(t, { zone }).offset;
    for (let h = 1; h <= 24; h++) {
      const local = DateTime.fromMillis(t + h * 60 * MINUTE, { zone });
      if (local.offset !== before) {
        dates.push(local.toISODate()!);
        break;
      }
    }
  }
  return [...new Set(dates)];
}

const CHANGES = new Map<string, string[]>(ZONES.map((z) => [z, offsetChangeDates(z)]));

const randomDate = fc.integer({ min: 0, max: 729 }).map((d) => addDays('2026-01-01', d));

function fromDateArb(zone: string, nearChangeOnly: boolean): fc.Arbitrary<string> {
  const changes = CHANGES.get(zone) ?? [];
  if (changes.length === 0) return randomDate;
  const nearChange = fc
    .tuple(
      fc.constantFrom(...changes),
      fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -1, max: 0 })),
    )
    .map(([d, n]) => addDays(d, n));
  return nearChangeOnly ? nearChange : fc.oneof(nearChange, randomDate);
}

const five = (min: number, max: number) => fc.integer({ min, max }).map((n) => n * 5);

/** Minutes where offsets change in the listed zones (small hours, and late evening for Santiago). */
const nearChangeMinute = fc.oneof(fc.constant(0), fc.constant(1440), five(0, 48), five(270, 288));

const workingInterval = (weekday: number): fc.Arbitrary<WorkingInterval> =>
  fc.oneof(
    fc
      .tuple(
        fc.oneof(
          fc.constant(0),
          fc.integer({ min: 0, max: 23 }).map((h) => h * 60),
          five(0, 287),
        ),
        fc.oneof(
          fc.constant(1440),
          fc.integer({ min: 1, max: 12 }).map((h) => h * 60),
          five(1, 200),
        ),
      )
      .map(([startMinute, length]) => ({
        weekday,
        startMinute,
        endMinute: Math.min(1440, startMinute + length),
      })),
    fc
      .tuple(nearChangeMinute, nearChangeMinute)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => ({ weekday, startMinute: Math.min(a, b), endMinute: Math.max(a, b) })),
  );

const weeklyHours: fc.Arbitrary<WorkingInterval[]> = fc
  .tuple(...[1, 2, 3, 4, 5, 6, 7].map((wd) => fc.array(workingInterval(wd), { maxLength: 3 })))
  .map((days) => days.flat());

const NAMES = ['Ana', 'ana', 'Ben', 'Zoë', 'Émile', 'ben'];
const IDS = ['st-b', 'st-a', 'St-c', 'st-d', 'st-0', 'st-e'];

function staffArb(base: number, now: number): fc.Arbitrary<StaffSchedule[]> {
  // Instants on a 5-minute lattice, which is on every listed zone's 5-minute wall-clock lattice.
  const instant = fc.integer({ min: -144, max: 4 * 288 }).map((n) => base + n * 5 * MINUTE);
  const timeOff: fc.Arbitrary<Interval> = fc
    .tuple(instant, five(1, 120))
    .map(([start, len]) => ({ start, end: start + len * MINUTE }));
  const hold = fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    fc.integer({ min: 0, max: 600 }).map((m) => now - m * MINUTE), // lapsed (now itself is lapsed)
    fc.integer({ min: 1, max: 600 }).map((m) => now + m * MINUTE), // live
    fc.constant(now),
    fc.constant(now + 1),
  );
  const booking: fc.Arbitrary<BusyBooking> = fc
    .tuple(
      instant,
      fc.oneof(fc.constantFrom(30, 60), five(1, 48)),
      fc.oneof(fc.constantFrom(0, 15), fc.integer({ min: 0, max: 30 })),
      hold,
      // Now and then one marked completed, needs checkout or no-show: it counts but blocks nothing.
      fc.oneof({ arbitrary: fc.constant(false), weight: 5 }, fc.constant(true)),
    )
    .map(([startsAt, len, buffer, holdExpiresAt, done]) => {
      const endsAt = startsAt + len * MINUTE;
      const blockedUntil = endsAt + buffer * MINUTE;
      if (done) return { startsAt, endsAt, blockedUntil, holdExpiresAt: null, done };
      return { startsAt, endsAt, blockedUntil, holdExpiresAt };
    });
  return fc.uniqueArray(
    fc.record({
      id: fc.constantFrom(...IDS),
      name: fc.constantFrom(...NAMES),
      workingHours: weeklyHours,
      timeOff: fc.array(timeOff, { maxLength: 3 }),
      bookings: fc.array(booking, { maxLength: 8 }),
    }),
    { minLength: 1, maxLength: 4, selector: (s) => s.id },
  );
}

const servicesArb: fc.Arbitrary<ServiceSpec[]> = fc
  .array(
    fc.record({
      durationMinutes: fc.oneof(five(1, 36), fc.integer({ min: 5, max: 180 })),
      bufferAfterMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 })),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((list) => list.map((s, i) => ({ id: `svc-${i + 1}`, ...s })));

/** Queries of any listed zone; with nearChangeOnly, only zones with offset changes, within days of one. */
export const queryArbitrary = (nearChangeOnly = false): fc.Arbitrary<AvailabilityQuery> =>
  fc
    .constantFrom(...ZONES.filter((z) => !nearChangeOnly || (CHANGES.get(z) ?? []).length > 0))
    .chain((zone) =>
      fc.tuple(fc.constant(zone), fromDateArb(zone, nearChangeOnly), fc.integer({ min: 1, max: 4 })),
    )
    .chain(([timezone, fromDate, days]) => {
      const base = Date.parse(`${fromDate}T00:00:00Z`);
      return fc
        .tuple(
          fc.integer({ min: -2 * 288, max: 288 }),
          fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.integer({ min: 1, max: 4 * MINUTE })),
        )
        .chain(([steps, jitter]) => {
          const now = base + steps * 5 * MINUTE + jitter;
          const dates = Array.from({ length: days + 2 }, (_, i) => addDays(fromDate, i - 1));
          return fc.record({
            timezone: fc.constant(timezone),
            slotIntervalMinutes: fc.constantFrom(5, 10, 15, 20, 30, 45, 60),
            minNoticeMinutes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 240 })),
            maxAdvanceDays: fc.oneof(fc.integer({ min: 0, max: 3 }), {
              arbitrary: fc.integer({ min: 0, max: 30 }),
              weight: 3,
            }),
            closedDates: fc.subarray(dates, { maxLength: 2 }).map((d) => new Set(d) as ReadonlySet<string>),
            services: servicesArb,
            staff: staffArb(base, now),
            fromDate: fc.constant(fromDate),
            days: fc.constant(days),
            now: fc.constant(now),
          });
        });
    });

export const queryArb = queryArbitrary();

/**
 * One external calendar event of a staff member (design.md 9.6), as its iCalendar file says it: a
 * local start in the query's zone, a length, and a daily or weekly repetition a few times; some last
 * days (a holiday), some leave the time free (TRANSP:TRANSPARENT).
 */
export interface ExternalEvent {
  staffId: string;
  /** Local wall time, YYYY-MM-DDTHH:mm. */
  start: string;
  minutes: number;
  freq: 'DAILY' | 'WEEKLY' | null;
  count: number;
  free: boolean;
}

/** A query (as queryArbitrary) with external calendar events for its staff. */
export const busyQueryArbitrary = (
  nearChangeOnly = false,
): fc.Arbitrary<{ query: AvailabilityQuery; events: ExternalEvent[] }> =>
  queryArbitrary(nearChangeOnly).chain((query) => {
    const event: fc.Arbitrary<ExternalEvent> = fc.record({
      staffId: fc.constantFrom(...query.staff.map((s) => s.id)),
      start: fc
        .tuple(
          fc.integer({ min: -2, max: 3 }),
          fc.oneof(
            five(0, 287),
            nearChangeMinute.map((m) => Math.min(m, 1435)),
          ),
        )
        .map(([day, minute]) => {
          const hh = String(Math.floor(minute / 60)).padStart(2, '0');
          const mm = String(minute % 60).padStart(2, '0');
          return `${addDays(query.fromDate, day)}T${hh}:${mm}`;
        }),
      minutes: fc.oneof({ arbitrary: five(1, 48), weight: 4 }, five(288, 3 * 288)),
      freq: fc.constantFrom('DAILY' as const, 'WEEKLY' as const, null),
      count: fc.integer({ min: 1, max: 4 }),
      free: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, fc.constant(true)),
    });
    return fc.record({ query: fc.constant(query), events: fc.array(event, { maxLength: 6 }) });
  });

/** The events as an iCalendar file, their zone named by TZID (as most publishers write it). */
export function eventsAsIcs(zone: string, events: readonly ExternalEvent[]): string {
  const stamp = (local: string) => `${local.replace(/[-:]/g, '')}00`;
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//oracle//EN'];
  for (const [i, e] of events.entries()) {
    const end = DateTime.fromISO(e.start, { zone: 'UTC' })
      .plus({ minutes: e.minutes })
      .toFormat("yyyy-MM-dd'T'HH:mm");
    lines.push(
      'BEGIN:VEVENT',
      `UID:event-${i}@test`,
      'DTSTAMP:20260101T000000Z',
      `DTSTART;TZID=${zone}:${stamp(e.start)}`,
      `DTEND;TZID=${zone}:${stamp(end)}`,
      ...(e.freq ? [`RRULE:FREQ=${e.freq};COUNT=${e.count}`] : []),
      ...(e.free ? ['TRANSP:TRANSPARENT'] : []),
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR');
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The oracle's own reading of the events: each occurrence's local start and end (wall times, a day or
 * a week apart) turned into instants by luxon in the zone, per staff member; free ones left out.
 */
/**
 * The first instant whose clock in `zone` reads `wall` (RFC 5545 3.3.5: a wall time the clocks show
 * twice is its first occurrence), found by brute force over the 3 hours before luxon's reading, in
 * 5-minute steps; one the clocks skip is luxon's reading (the offset before the gap).
 */
function firstInstantOfWall(wall: DateTime, zone: string): number {
  const fields = wall.toObject();
  const read = DateTime.fromObject(fields, { zone }).toMillis();
  const key = (t: number) => DateTime.fromMillis(t, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
  const wanted = wall.toFormat('yyyy-MM-dd HH:mm:ss');
  let first = read;
  for (let back = 5 * 60_000; back <= 3 * 3_600_000; back += 5 * 60_000) {
    if (key(read - back) === wanted) first = read - back;
  }
  return first;
}

export function eventsAsBusy(zone: string, events: readonly ExternalEvent[]): Map<string, Interval[]> {
  const busy = new Map<string, Interval[]>();
  for (const e of events) {
    if (e.free) continue;
    const start = DateTime.fromISO(e.start, { zone: 'UTC' });
    const end = start.plus({ minutes: e.minutes });
    const occurrences = e.freq === null ? 1 : e.count;
    for (let k = 0; k < occurrences; k++) {
      const step = e.freq === 'WEEKLY' ? { weeks: k } : { days: k };
      const instant = (wall: DateTime) => firstInstantOfWall(wall.plus(step), zone);
      const interval = { start: instant(start), end: instant(end) };
      if (interval.end > interval.start) busy.set(e.staffId, [...(busy.get(e.staffId) ?? []), interval]);
    }
  }
  return busy;
}

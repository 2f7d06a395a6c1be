import { DateTime } from 'luxon';
import { getAvailability } from '../src/app/availability-service.ts';
import { busyTimes } from '../src/app/calendars/busy-times.ts';
import { BUSY_WINDOW_AHEAD_MS, BUSY_WINDOW_BACK_MS } from '../src/app/calendars/refresher.ts';
import { requireLocation } from '../src/app/directory-service.ts';
import { saveBusyCopy } from '../src/data/calendar-repository.ts';
import { writeTransaction } from '../src/data/write-transaction.ts';
import { AVAILABILITY_SCENARIO, createAvailabilityDatabase } from './lib/availability-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { mulberry32 } from './lib/seeded-random.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

const WARM_UP = 50;
const CALLS = 400;
const EVENTS_PER_CALENDAR = 500;
/** The target: availability with every staff member's calendar at most 1.2 times as slow. */
const TARGET_RATIO = 1.2;

/**
 * External busy calendars (design.md 9.6) on availability's path: the availability scenario (14 days,
 * 20 staff, 3 services, 2,000 bookings) read through the service layer, `getAvailability` (its database
 * reads and the engine; no HTTP, no answer cache), without busy calendars and then with a 500-event
 * calendar for each of the 20 staff, kept as the refresher keeps it (ical.js expansion, saveBusyCopy).
 */
export const busyCalendars: Benchmark = {
  id: 'busy-calendars',
  async run(context) {
    context.progress('seeding two temporary SQLite databases…');
    // Two copies of the scenario, one given the calendars, asked in turns: the machine's drift (other
    // work, the JIT, the heap) then falls on both sides alike.
    const plain = await createAvailabilityDatabase();
    const withCalendars = await createAvailabilityDatabase();
    try {
      const asker = async (seeded: typeof plain) => {
        const { db } = seeded.database;
        const location = await requireLocation(db, seeded.organisationId, AVAILABILITY_SCENARIO.location);
        const request = {
          location,
          serviceIds: seeded.serviceIds,
          fromDate: AVAILABILITY_SCENARIO.fromDate,
          days: AVAILABILITY_SCENARIO.days,
        };
        return () => getAvailability(db, seeded.organisationId, request, seeded.now);
      };
      const askPlain = await asker(plain);
      const askBusy = await asker(withCalendars);

      context.progress(`keeping a ${EVENTS_PER_CALENDAR}-event calendar for each staff member…`);
      const { organisationId, now } = withCalendars;
      const { db } = withCalendars.database;
      const staff = await db
        .selectFrom('staff')
        .select('id')
        .where('organisation_id', '=', organisationId)
        .orderBy('id')
        .execute();
      const window = { start: now - BUSY_WINDOW_BACK_MS, end: now + BUSY_WINDOW_AHEAD_MS };
      let kept = 0;
      for (const [i, member] of staff.entries()) {
        const busy = busyTimes(calendarOf(i, now), window, AVAILABILITY_SCENARIO.timezone);
        const id = `bench-calendar-${i}`;
        await db
          .insertInto('staff_busy_calendars')
          .values({
            id,
            organisation_id: organisationId,
            staff_id: member.id,
            url: `https://calendar.example.com/${i}.ics`,
            next_fetch_at: now + 86_400_000,
            created_at: now,
          })
          .execute();
        await writeTransaction(db, (trx) =>
          saveBusyCopy(
            trx,
            { id, organisation_id: organisationId, staff_id: member.id },
            { etag: null, lastModified: null, busy },
            now,
          ),
        );
        kept += busy.length;
      }
      const before = await askPlain();
      const after = await askBusy();
      if (after.slots.length >= before.slots.length) {
        throw new Error('The busy calendars took no slot away: the scenario measures nothing.');
      }

      context.progress(`timing getAvailability on both, in turns: ${CALLS} calls each…`);
      for (let i = 0; i < WARM_UP; i += 1) {
        await askPlain();
        await askBusy();
      }
      const plainTimes: number[] = [];
      const busyTimesMs: number[] = [];
      const timed = async (ask: () => Promise<unknown>, into: number[]) => {
        const start = performance.now();
        await ask();
        into.push(performance.now() - start);
      };
      for (let i = 0; i < CALLS; i += 1) {
        // Which goes first alternates too.
        if (i % 2 === 0) {
          await timed(askPlain, plainTimes);
          await timed(askBusy, busyTimesMs);
        } else {
          await timed(askBusy, busyTimesMs);
          await timed(askPlain, plainTimes);
        }
      }
      const none = summariseTimes('Baseline: no busy calendars', plainTimes);
      const busy = summariseTimes(
        `getAvailability, ${staff.length} staff × ${EVENTS_PER_CALENDAR}-event calendars`,
        busyTimesMs,
      );
      const ratio = busy.p50 / none.p50;
      return {
        kind: 'timing',
        subject: 'getAvailability with external busy calendars',
        method: [
          `The availability scenario (\`bench/lib/availability-database.ts\`: ${AVAILABILITY_SCENARIO.days} days, ${staff.length} staff, 3 services, ${plain.bookings.toLocaleString('en-GB')} bookings) read through \`getAvailability\`, the service layer (its database reads and the engine; no HTTP, no answer cache), on two copies of the database asked in turns, ${CALLS} calls each after ${WARM_UP} untimed ones: one without busy calendars, the other with a ${EVENTS_PER_CALENDAR}-event calendar for each staff member (events of 30 to 120 minutes in working hours over the year, a tenth of them weekly for 10 weeks), expanded by ical.js and kept as the refresher keeps them: ${kept.toLocaleString('en-GB')} busy intervals. The answer drops from ${before.slots.length} to ${after.slots.length} slots.`,
        ],
        timings: [busy, none],
        ratios: [{ label: 'p50 with calendars / p50 without', value: `×${ratio.toFixed(2)}` }],
        targets: [
          {
            description: `Availability p50 with 20 × ${EVENTS_PER_CALENDAR}-event calendars ≤ ${TARGET_RATIO} × without`,
            measured: `×${ratio.toFixed(2)} (${formatMs(busy.p50)} ms against ${formatMs(none.p50)} ms)`,
            pass: ratio <= TARGET_RATIO,
          },
        ],
      };
    } finally {
      await plain.database.dispose();
      await withCalendars.database.dispose();
    }
  },
};

/** A staff member's calendar of EVENTS_PER_CALENDAR events over the year after `now`, seeded. */
function calendarOf(index: number, now: number): string {
  const random = mulberry32(1000 + index);
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//bench//busy//EN'];
  const start = DateTime.fromMillis(now, { zone: AVAILABILITY_SCENARIO.timezone }).startOf('day');
  for (let e = 0; e < EVENTS_PER_CALENDAR; e += 1) {
    const day = start.plus({ days: Math.floor(random() * 365) });
    const at = day.set({ hour: 9 + Math.floor(random() * 9), minute: Math.floor(random() * 4) * 15 });
    const end = at.plus({ minutes: 30 + Math.floor(random() * 4) * 30 });
    const local = (t: DateTime) => t.toFormat("yyyyMMdd'T'HHmmss");
    lines.push(
      'BEGIN:VEVENT',
      `UID:bench-${index}-${e}@example.com`,
      'DTSTAMP:20270101T000000Z',
      `DTSTART;TZID=${AVAILABILITY_SCENARIO.timezone}:${local(at)}`,
      `DTEND;TZID=${AVAILABILITY_SCENARIO.timezone}:${local(end)}`,
      ...(e % 10 === 0 ? ['RRULE:FREQ=WEEKLY;COUNT=10'] : []),
      'SUMMARY:Busy',
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR');
  return `${lines.join('\r\n')}\r\n`;
}

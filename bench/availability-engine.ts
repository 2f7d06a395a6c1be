import { isDeepStrictEqual } from 'node:util';
import { getAvailability } from '../src/app/availability-service.ts';
import { requireLocation } from '../src/app/directory-service.ts';
import { findSlots } from '../src/domain/availability/find-slots.ts';
import type { AvailabilityQuery, Slot } from '../src/domain/availability/types.ts';
import { localDateAt } from '../src/domain/time-format.ts';
import { oracleSlots } from '../test/helpers/availability-oracle.ts';
import { AVAILABILITY_SCENARIO, createAvailabilityDatabase } from './lib/availability-database.ts';
import { loadAvailabilityQuery } from './lib/availability-query.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { formatMs, summariseTimes, timeCalls } from './lib/timing.ts';

const ENGINE_WARM_UP = 300;
const ENGINE_CALLS = 2000;
const ORACLE_CALLS = 5;
/** The issue's target for the engine alone. */
const TARGET_P50_MS = 2;

/**
 * The issue's engine benchmark: findSlots, the pure availability engine, on the query the service
 * builds for 14 days, 20 staff, 3 services back to back and 2,000 existing bookings, timed call by
 * call in process. Baseline: the brute-force oracle of the property tests on the same query, in the
 * same run; both must return the very same slots.
 */
export const availabilityEngine: Benchmark = {
  id: 'availability-engine',
  async run(context) {
    context.progress('seeding a temporary SQLite database and loading the query…');
    const seeded = await createAvailabilityDatabase();
    let query: AvailabilityQuery;
    try {
      const { db } = seeded.database;
      const request = {
        locationSlug: AVAILABILITY_SCENARIO.location,
        serviceIds: seeded.serviceIds,
        fromDate: AVAILABILITY_SCENARIO.fromDate,
        days: AVAILABILITY_SCENARIO.days,
      };
      query = await loadAvailabilityQuery(db, seeded.organisationId, request, seeded.now);
      // The query rebuilt here must be the one the service builds: same slots as getAvailability.
      const location = await requireLocation(db, seeded.organisationId, request.locationSlug);
      const served = await getAvailability(
        db,
        seeded.organisationId,
        { location, serviceIds: request.serviceIds, fromDate: request.fromDate, days: request.days },
        seeded.now,
      );
      assertSameSlots('getAvailability', served.slots, 'findSlots of the rebuilt query', findSlots(query));
    } finally {
      await seeded.database.dispose();
    }

    context.progress('checking the engine against the oracle…');
    const expected = oracleSlots(query);
    const slots = findSlots(query);
    assertSameSlots('the oracle', expected, 'the engine', slots);
    if (slots.length < 100)
      throw new Error(`Expected a realistic answer (≥ 100 slots), got ${slots.length}.`);

    context.progress(`timing findSlots: ${ENGINE_WARM_UP} warm-up calls, then ${ENGINE_CALLS}…`);
    const engine = timeCalls('Engine: findSlots', () => findSlots(query), {
      warmUp: ENGINE_WARM_UP,
      calls: ENGINE_CALLS,
    });
    context.progress(`timing the oracle: ${ORACLE_CALLS} calls…`);
    const oracleTimes: number[] = [];
    for (let i = 0; i < ORACLE_CALLS; i += 1) {
      const start = performance.now();
      const answer = oracleSlots(query);
      oracleTimes.push(performance.now() - start);
      if (answer.length !== slots.length) throw new Error('The oracle changed its answer between calls.');
    }
    const oracle = summariseTimes('Baseline: oracleSlots (brute force)', oracleTimes);

    const bookings = query.staff.reduce((n, s) => n + s.bookings.length, 0);
    const timeOff = query.staff.reduce((n, s) => n + s.timeOff.length, 0);
    const dates = new Set(slots.map((s) => localDateAt(s.startsAt, query.timezone))).size;
    return {
      kind: 'timing',
      subject: 'findSlots(query)',
      method: [
        `The query: ${query.days} days from Monday ${query.fromDate} (${query.timezone}, ${query.slotIntervalMinutes}-minute grid, ${query.minNoticeMinutes} minutes' notice, ${query.maxAdvanceDays} days ahead), any staff among ${query.staff.length} active staff who all deliver the ${query.services.length} services, booked back to back (${query.services.map((s) => `${s.durationMinutes} min + ${s.bufferAfterMinutes} buffer`).join(', ')}: ${query.services.reduce((n, s) => n + s.durationMinutes, 0)} minutes, then the last buffer). Each staff member works Monday to Saturday in two intervals a day around a lunch break, varying by person and day; ${timeOff} time-off entries fall in the search window; ${bookings.toLocaleString('en-GB')} existing confirmed bookings fill the fortnight (8–9 a working staff day, mostly back to back, with now and then an hour or two free). "Now" is fixed at ${new Date(query.now).toISOString().replace('.000Z', 'Z')}, the Monday before. The answer: ${slots.length} slots over ${dates} days (the diaries are nearly full).`,
        'The query is loaded from a seeded SQLite database (`bench/lib/availability-database.ts`) with the repository calls `getAvailability` makes (`bench/lib/availability-query.ts`); before timing, `findSlots` of it is checked to return the very slots `getAvailability` returns, and the very slots the oracle returns. Only `findSlots` is timed: no database, no HTTP (the `availability-endpoint` section measures the whole request).',
        `Baseline: \`oracleSlots\` (\`test/helpers/availability-oracle.ts\`), the brute-force reference of the property tests, written from the rules alone: it walks every minute of the fortnight and checks every rule for every staff member. It is timed on the same query after one untimed call (it memoises its table of local minutes per zone and dates, so the timed calls skip building it). The engine has ${ENGINE_WARM_UP} untimed calls first (its zone calendar caches local days for the life of the process, as in a running server).`,
      ],
      timings: [engine, oracle],
      ratios: [
        {
          label: 'Speed-up, oracle p50 / engine p50',
          value: `×${Math.round(oracle.p50 / engine.p50).toLocaleString('en-GB')}`,
        },
      ],
      targets: [
        {
          description: `Engine p50 < ${TARGET_P50_MS} ms (14 days, 20 staff, 3 services, 2,000 bookings)`,
          measured: `${formatMs(engine.p50)} ms (p99 ${formatMs(engine.p99)} ms)`,
          pass: engine.p50 < TARGET_P50_MS,
        },
        {
          description: 'Engine returns the same slots as the oracle (and as `getAvailability`)',
          measured: `${slots.length} slots, identical`,
          pass: true,
        },
      ],
    };
  },
};

function assertSameSlots(expectedName: string, expected: Slot[], actualName: string, actual: Slot[]): void {
  if (isDeepStrictEqual(expected, actual)) return;
  const index = expected.findIndex((slot, i) => !isDeepStrictEqual(slot, actual[i]));
  const at = index >= 0 ? index : Math.min(expected.length, actual.length);
  throw new Error(
    `${actualName} disagrees with ${expectedName}: ${actual.length} slots against ${expected.length}, first difference at #${at}: ` +
      `${JSON.stringify(actual[at] ?? null)} instead of ${JSON.stringify(expected[at] ?? null)}.`,
  );
}

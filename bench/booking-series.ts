import { createApiKey } from '../src/app/api-key-service.ts';
import { importCatalogue } from '../src/app/catalogue-import/import-catalogue.ts';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { addDays } from '../src/domain/availability/zone-calendar.ts';
import { buildApp } from '../src/http/build-app.ts';
import { smallCatalogue } from '../test/helpers/catalogue-fixtures.ts';
import { createTempDatabase } from '../test/helpers/temp-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

/** The target: a 26-visit series booked in under 20 ms at p50 on SQLite. */
const TARGET_SERIES_P50_MS = 20;
const VISITS = 26;
const TIMED = 30;
const WARM_UP = 5;
const STAFF = 10;
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
const HOURS = [9, 10, 11, 12, 13, 14, 15, 16];
/** Monday 30 November 2026, the first week of every series; the clock stands a week before. */
const FIRST_MONDAY = '2026-11-30';

/**
 * What a recurring series costs (design.md 9.5): `POST /v1/bookings` with `repeat {every_weeks: 1,
 * count: 26}`, against the same 26 visits booked one `POST /v1/bookings` at a time, in the runner
 * process through the real app (inject) on a SQLite file. Each timed series and each timed group of
 * singles takes a lane of its own (a staff member, weekday and hour, 26 weeks on), so none clashes.
 */
export const bookingSeries: Benchmark = {
  id: 'booking-series',
  async run(context) {
    context.progress('seeding ten stylists working Monday to Friday…');
    const database = await createTempDatabase();
    const clock = new ManualClock('2026-11-23T09:00:00Z');
    try {
      const { db } = database;
      const catalogue = smallCatalogue();
      const soho = catalogue.locations[0] as Record<string, unknown>;
      soho.policy = { max_advance_days: 400 };
      catalogue.staff.push(
        ...(Array.from({ length: STAFF }, (_, n) => ({
          ref: `stylist-${n}`,
          name: `Stylist ${n}`,
          services: ['cut'],
          working_hours: { soho: Object.fromEntries(WEEKDAYS.map((d) => [d, [['09:00', '17:00']]])) },
        })) as never[]),
      );
      await importCatalogue(db, catalogue, clock.nowMs());
      const deps = createAppDeps({ db, clock, secret: 'bench', payments: null });
      const app = await buildApp(deps);
      await app.ready();
      try {
        const { key } = await createApiKey(
          db,
          {
            organisationSlug: 'acme-hair',
            label: 'bench',
            scope: 'read_write',
            rateLimitPerMinute: 1_000_000,
          },
          clock.nowMs(),
        );
        const ids = await idsOf(db);
        const lanes = (function* () {
          for (const staffId of ids.stylists)
            for (const [day] of WEEKDAYS.entries())
              for (const hour of HOURS) yield { staffId, date: addDays(FIRST_MONDAY, day), hour };
        })();
        const post = async (body: object) => {
          const start = performance.now();
          const answer = await app.inject({
            method: 'POST',
            url: '/v1/bookings',
            headers: { authorization: `Bearer ${key}` },
            payload: body,
          });
          const took = performance.now() - start;
          if (answer.statusCode !== 201)
            throw new Error(`POST /v1/bookings: ${answer.statusCode} ${answer.body}`);
          return took;
        };
        const visit = (lane: { staffId: string; date: string; hour: number }, week: number) => ({
          location_slug: 'soho',
          service_ids: [ids.cut],
          staff_id: lane.staffId,
          client_id: ids.jo,
          // Winter and summer alike at the same wall time: London is +00:00 until 28 March.
          starts_at: localStart(addDays(lane.date, 7 * week), lane.hour),
        });

        context.progress(`timing ${TIMED} series of ${VISITS} and ${TIMED} x ${VISITS} single bookings…`);
        const seriesTimes: number[] = [];
        const singlesTimes: number[] = [];
        for (let i = 0; i < WARM_UP + TIMED; i += 1) {
          const seriesLane = lanes.next().value!;
          const singlesLane = lanes.next().value!;
          const series = await post({ ...visit(seriesLane, 0), repeat: { every_weeks: 1, count: VISITS } });
          let singles = 0;
          for (let week = 0; week < VISITS; week += 1) singles += await post(visit(singlesLane, week));
          if (i >= WARM_UP) {
            seriesTimes.push(series);
            singlesTimes.push(singles);
          }
        }
        const series = summariseTimes(`POST /v1/bookings, a series of ${VISITS}`, seriesTimes);
        const singles = summariseTimes(`${VISITS} x POST /v1/bookings, one at a time`, singlesTimes);
        const ratio = series.p50 / singles.p50;
        return {
          kind: 'timing',
          subject: `a recurring series of ${VISITS} visits against ${VISITS} single bookings`,
          method: [
            `The small catalogue with ${STAFF} more stylists working Monday to Friday 09:00-17:00 at Soho, on a SQLite file. ${TIMED} series of ${VISITS} weekly Cuts (\`repeat {every_weeks: 1, count: ${VISITS}}\`), each after ${WARM_UP} untimed, through the real app (\`inject()\`, no network); beside each, the same ${VISITS} visits on another stylist's lane booked one request at a time, timed together.`,
          ],
          timings: [series, singles],
          ratios: [
            { label: `Series of ${VISITS} / ${VISITS} single bookings (p50)`, value: ratio.toFixed(2) },
          ],
          targets: [
            {
              description: `A series of ${VISITS} p50 < ${formatMs(TARGET_SERIES_P50_MS)} ms on SQLite`,
              measured: `${formatMs(series.p50)} ms (p99 ${formatMs(series.p99)} ms)`,
              pass: series.p50 < TARGET_SERIES_P50_MS,
            },
          ],
        };
      } finally {
        await app.close();
      }
    } finally {
      await database.dispose();
    }
  },
};

/** The London wall time `hour`:00 on `date`, with its offset (BST from 28 March 2027). */
function localStart(date: string, hour: number): string {
  const summer = date >= '2027-03-28' && date < '2027-10-31';
  return `${date}T${String(hour).padStart(2, '0')}:00:00${summer ? '+01:00' : '+00:00'}`;
}

async function idsOf(db: Parameters<typeof importCatalogue>[0]) {
  const staff = await db.selectFrom('staff').select(['id', 'name']).execute();
  const cut = await db
    .selectFrom('services')
    .select('id')
    .where('name', '=', 'Cut')
    .executeTakeFirstOrThrow();
  const jo = await db
    .selectFrom('clients')
    .select('id')
    .where('first_name', '=', 'Jo')
    .executeTakeFirstOrThrow();
  return {
    stylists: staff.filter((s) => s.name.startsWith('Stylist ')).map((s) => s.id),
    cut: cut.id,
    jo: jo.id,
  };
}

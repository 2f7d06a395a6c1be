import { createApiKey } from '../src/app/api-key-service.ts';
import { importCatalogue } from '../src/app/catalogue-import/import-catalogue.ts';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { joinWaitlist } from '../src/app/waitlist/entries.ts';
import { offerFreedTimes, startWaitlistWorker } from '../src/app/waitlist/offers.ts';
import { buildApp } from '../src/http/build-app.ts';
import { smallCatalogue } from '../test/helpers/catalogue-fixtures.ts';
import { createTempDatabase } from '../test/helpers/temp-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

/** The targets: an offer within a second of the cancellation; cancelling no more than 1.2x slower. */
const TARGET_DELAY_P50_MS = 1_000;
const TARGET_CANCEL_RATIO = 1.2;
const ENTRIES = 500;
/** Cancellations timed per side, alternating sides. */
const CANCELS = 40;
const WARM_UP = 5;
/** Mondays and Tuesdays from 30 November: Ana's working days at Soho in the small catalogue. */
const DAYS = ['2026-11-30', '2026-12-01', '2026-12-07', '2026-12-08', '2026-12-14', '2026-12-15'];
const HOURS = [9, 10, 11, 12, 13, 14, 15, 16];
const TIMES = [['morning'], ['afternoon'], ['morning', 'afternoon'], []] as const;

/**
 * The waitlist's figures: how long after a cancellation the first suitable entry holds an offer, on a
 * location with 500 waiting entries, and what asking the waitlist costs the cancellation itself (the
 * same cancellation at a location where nobody waits). In the runner process, through the real app
 * (inject) on a SQLite file, with the worker `booking serve` runs (every 250 ms).
 */
export const waitlist: Benchmark = {
  id: 'waitlist',
  async run(context) {
    context.progress('seeding two organisations, full diaries, 500 waiting entries…');
    const database = await createTempDatabase();
    const clock = new ManualClock('2026-11-23T09:00:00Z');
    try {
      const { db } = database;
      await importCatalogue(db, smallCatalogue({ slug: 'quiet-hair', prefix: 'QU' }), clock.nowMs());
      await importCatalogue(db, smallCatalogue({ slug: 'busy-hair', prefix: 'BU' }), clock.nowMs());
      const deps = createAppDeps({ db, clock, secret: 'bench', payments: null });
      const app = await buildApp(deps);
      await app.ready();
      const stop = startWaitlistWorker(
        { db, clock, payments: null, publicBaseUrl: 'http://localhost' },
        (error) => context.progress(`waitlist worker: ${String(error)}`),
      );
      try {
        const sides = {
          quiet: await side(db, app, clock, 'quiet-hair'),
          busy: await side(db, app, clock, 'busy-hair'),
        };
        const busyOrg = await organisationId(db, 'busy-hair');
        for (let n = 0; n < ENTRIES; n += 1) {
          await joinWaitlist(
            db,
            busyOrg,
            {
              locationSlug: 'soho',
              serviceIds: [sides.busy.cut],
              staffId: sides.busy.ana,
              client: { firstName: 'Wait', lastName: `Er${n}`, email: `waiter${n}@bench.test` },
              fromDate: DAYS[n % DAYS.length]!,
              toDate: DAYS[Math.min((n % DAYS.length) + 1, DAYS.length - 1)]!,
              times: TIMES[n % TIMES.length]!,
            },
            clock.nowMs(),
          );
        }
        // Nothing is free: the entries' first pass offers nothing.
        await offerFreedTimes({ db, clock, payments: null, publicBaseUrl: 'http://localhost' });

        context.progress(`timing ${CANCELS} cancellations per side, and the offer each frees…`);
        const cancelTimes = { quiet: [] as number[], busy: [] as number[] };
        const delays: number[] = [];
        for (let i = 0; i < WARM_UP + CANCELS; i += 1) {
          for (const name of i % 2 === 0 ? (['quiet', 'busy'] as const) : (['busy', 'quiet'] as const)) {
            const reference = sides[name].references.pop()!;
            const start = performance.now();
            const answer = await app.inject({
              method: 'POST',
              url: `/v1/bookings/${reference}/cancel`,
              headers: { authorization: `Bearer ${sides[name].key}` },
            });
            const took = performance.now() - start;
            if (answer.statusCode !== 200)
              throw new Error(`cancel ${reference}: ${answer.statusCode} ${answer.body}`);
            if (i >= WARM_UP) cancelTimes[name].push(took);
            if (name === 'busy') {
              const offered = await offerFor(db, busyOrg, reference, start);
              if (i >= WARM_UP) delays.push(offered);
            }
          }
        }
        const quiet = summariseTimes('POST cancel, nobody waiting', cancelTimes.quiet);
        const busy = summariseTimes(`POST cancel, ${ENTRIES} waiting`, cancelTimes.busy);
        const delay = summariseTimes('cancellation to offer held', delays);
        const ratio = busy.p50 / quiet.p50;
        return {
          kind: 'timing',
          subject: 'the waitlist: cancel-to-offer delay and cancel cost',
          method: [
            `Two organisations from the small catalogue on one SQLite file, Ana's Mondays and Tuesdays at Soho booked full for three weeks (${DAYS.length * HOURS.length} bookings each). At \`busy-hair\`, ${ENTRIES} entries wait for a Cut with Ana on one or two of those days, in every part of the day; at \`quiet-hair\` nobody waits. ${CANCELS} bookings of each are cancelled with \`POST /v1/bookings/{reference}/cancel\` through the real app (\`inject()\`, no network), the sides alternating, after ${WARM_UP} untimed each. After each cancellation at \`busy-hair\` the time until an offer holds the freed hour is measured, with the worker running as \`booking serve\` runs it (a pass every 250 ms).`,
          ],
          timings: [delay, busy, quiet],
          ratios: [{ label: `Cancel p50, ${ENTRIES} waiting / nobody waiting`, value: ratio.toFixed(2) }],
          targets: [
            {
              description: `Cancel-to-offer p50 < ${formatMs(TARGET_DELAY_P50_MS)} ms with ${ENTRIES} entries`,
              measured: `${formatMs(delay.p50)} ms (p99 ${formatMs(delay.p99)} ms)`,
              pass: delay.p50 < TARGET_DELAY_P50_MS,
            },
            {
              description: `Cancel p50 with ${ENTRIES} entries / with none ≤ ${TARGET_CANCEL_RATIO}`,
              measured: ratio.toFixed(2),
              pass: ratio <= TARGET_CANCEL_RATIO,
            },
          ],
        };
      } finally {
        await stop();
        await app.close();
      }
    } finally {
      await database.dispose();
    }
  },
};

async function organisationId(db: Parameters<typeof joinWaitlist>[0], slug: string): Promise<string> {
  return (
    await db.selectFrom('organisations').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()
  ).id;
}

/** One organisation: a key, its ids, and every hour of Ana's days booked (references, last first out). */
async function side(
  db: Parameters<typeof joinWaitlist>[0],
  app: Awaited<ReturnType<typeof buildApp>>,
  clock: ManualClock,
  slug: string,
) {
  const { key } = await createApiKey(
    db,
    { organisationSlug: slug, label: 'bench', scope: 'read_write', rateLimitPerMinute: 100_000 },
    clock.nowMs(),
  );
  const organisation = await organisationId(db, slug);
  const id = async (table: 'services' | 'staff' | 'clients', ref: string) =>
    (
      await db
        .selectFrom(table)
        .select('id')
        .where('organisation_id', '=', organisation)
        .where('ref', '=', ref)
        .executeTakeFirstOrThrow()
    ).id;
  const [cut, ana, jo] = [await id('services', 'cut'), await id('staff', 'ana'), await id('clients', 'jo')];
  const references: string[] = [];
  for (const day of DAYS) {
    for (const hour of HOURS) {
      const answer = await app.inject({
        method: 'POST',
        url: '/v1/bookings',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          location_slug: 'soho',
          service_ids: [cut],
          staff_id: ana,
          client_id: jo,
          starts_at: `${day}T${String(hour).padStart(2, '0')}:00:00Z`,
        },
      });
      if (answer.statusCode !== 201) throw new Error(`booking ${slug} ${day} ${hour}: ${answer.body}`);
      references.push(JSON.parse(answer.body).data.reference);
    }
  }
  return { key, cut, ana, references };
}

/** Milliseconds from `since` until an offer holds the cancelled booking's time (polled every 5 ms). */
async function offerFor(
  db: Parameters<typeof joinWaitlist>[0],
  organisation: string,
  reference: string,
  since: number,
): Promise<number> {
  const cancelled = await db
    .selectFrom('bookings')
    .select(['starts_at', 'staff_id'])
    .where('organisation_id', '=', organisation)
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  for (;;) {
    const offer = await db
      .selectFrom('waitlist_offers')
      .select('booking_id')
      .where('organisation_id', '=', organisation)
      .where('staff_id', '=', cancelled.staff_id)
      .where('starts_at', '=', cancelled.starts_at)
      .executeTakeFirst();
    if (offer) return performance.now() - since;
    if (performance.now() - since > 10_000) throw new Error(`no offer for ${reference} within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

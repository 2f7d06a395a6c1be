import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { createUser } from '../src/app/staff-account-service.ts';
import type { BookingServicesTable, BookingsTable } from '../src/data/tables.ts';
import { buildApp } from '../src/http/build-app.ts';
import { bookingRow } from '../test/helpers/booking-row.ts';
import { AVAILABILITY_SCENARIO, createAvailabilityDatabase } from './lib/availability-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

const WARM_UP = 30;
const CALLS = 300;
/** The target: the diary of a busy day renders in under 100 ms of server time. */
const TARGET_P50_MS = 100;
/** A Monday after the availability scenario's fortnight, filled here: 20 staff, 15 bookings each. */
const BUSY_DAY = '2027-01-25';
const PER_STAFF = 15;
const MINUTE = 60_000;

/**
 * The console's day diary of a busy day: GET /console/diary for one location and day with 20 staff
 * columns and 300 bookings, through the real app (session cookie, CSP headers, the whole page),
 * driven with inject() in the runner process so the time is the server's alone, no network.
 */
export const consoleDiary: Benchmark = {
  id: 'console-diary',
  async run(context) {
    context.progress('seeding the availability scenario and a busy Monday…');
    const seeded = await createAvailabilityDatabase();
    try {
      const { db } = seeded.database;
      const organisation = seeded.organisationId;
      const location = await db.selectFrom('locations').select('id').executeTakeFirstOrThrow();
      const client = await db.selectFrom('clients').select('id').executeTakeFirstOrThrow();
      const staff = await db.selectFrom('staff').select('id').orderBy('name').execute();
      const cut = seeded.serviceIds[0]!;
      const bookings: BookingsTable[] = [];
      const lines: BookingServicesTable[] = [];
      // 09:00 GMT (London in January) onwards, 30-minute appointments back to back.
      const dayStart = Date.parse(`${BUSY_DAY}T09:00:00Z`);
      staff.forEach((member, s) => {
        for (let i = 0; i < PER_STAFF; i += 1) {
          const id = `00000000-0000-4000-9000-${String(s * PER_STAFF + i).padStart(12, '0')}`;
          const startsAt = dayStart + i * 30 * MINUTE;
          bookings.push(
            bookingRow(
              {
                organisationId: organisation,
                locationId: location.id,
                staffId: member.id,
                clientId: client.id,
                startsAt,
                endsAt: startsAt + 30 * MINUTE,
              },
              {
                id,
                reference: `CD-${String(s * PER_STAFF + i).padStart(5, '0')}`,
                total_price_minor: 3500,
                status: i % 7 === 3 ? 'completed' : 'confirmed',
              },
            ),
          );
          lines.push({
            organisation_id: organisation,
            booking_id: id,
            position: 0,
            service_id: cut,
            starts_at: startsAt,
            ends_at: startsAt + 30 * MINUTE,
            duration_minutes: 30,
            buffer_after_minutes: 0,
            price_minor: 3500,
            deposit_minor: null,
          });
        }
      });
      await db.insertInto('bookings').values(bookings).execute();
      await db.insertInto('booking_services').values(lines).execute();

      const clock = new ManualClock(`${BUSY_DAY}T12:00:00Z`);
      const deps = createAppDeps({ db, clock, secret: 'bench' });
      const app = await buildApp(deps);
      await app.ready();
      try {
        await createUser(
          db,
          {
            organisationSlug: AVAILABILITY_SCENARIO.organisation,
            email: 'desk@bench.test',
            role: 'staff',
            password: 'bench password!',
          },
          clock.nowMs(),
        );
        const signedIn = await app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
          payload: new URLSearchParams({
            organisation: AVAILABILITY_SCENARIO.organisation,
            email: 'desk@bench.test',
            password: 'bench password!',
          }).toString(),
        });
        const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
        const url = `/console/diary?location=${AVAILABILITY_SCENARIO.location}&date=${BUSY_DAY}`;
        const get = () => app.inject({ method: 'GET', url, headers: { cookie } });
        const first = await get();
        const blocks = first.body.match(/class="block /g)?.length ?? 0;
        if (first.statusCode !== 200 || blocks !== staff.length * PER_STAFF) {
          throw new Error(
            `Expected a diary with ${staff.length * PER_STAFF} bookings, got ${first.statusCode} with ${blocks}.`,
          );
        }
        context.progress(`timing ${CALLS} diary pages after ${WARM_UP} warm-up…`);
        for (let i = 0; i < WARM_UP; i += 1) await get();
        const times: number[] = [];
        for (let i = 0; i < CALLS; i += 1) {
          const start = performance.now();
          await get();
          times.push(performance.now() - start);
        }
        const timing = summariseTimes('GET /console/diary (20 staff, 300 bookings)', times);
        return {
          kind: 'timing',
          subject: 'the console diary of a busy day',
          method: [
            `The availability scenario's SQLite database (\`bench/lib/availability-database.ts\`: one location, 20 active staff, ${seeded.bookings.toLocaleString('en-GB')} bookings over a fortnight) with a busy Monday added, ${BUSY_DAY}: ${PER_STAFF} back-to-back 30-minute bookings for each of the ${staff.length} staff, ${bookings.length} in all. The whole page (${Math.round(first.body.length / 1024)} KiB of HTML: ${staff.length} columns, working hours, ${blocks} blocks, the current time) is asked for ${CALLS} times after ${WARM_UP} untimed, through the real app (\`buildApp\`, a signed-in session cookie) with \`inject()\`, so the time is the server's: session check, queries, rendering, headers; no network.`,
          ],
          timings: [timing],
          ratios: [],
          targets: [
            {
              description: `Diary of 20 staff and 300 bookings, p50 < ${TARGET_P50_MS} ms server time`,
              measured: `${formatMs(timing.p50)} ms (p99 ${formatMs(timing.p99)} ms)`,
              pass: timing.p50 < TARGET_P50_MS,
            },
          ],
        };
      } finally {
        await app.close();
      }
    } finally {
      await seeded.database.dispose();
    }
  },
};

/**
 * The full stack for the bookings-endpoint benchmark: the real app (authentication, rate limiting,
 * validation, the availability re-check and the writes of createBooking, SQLite through Kysely,
 * serialisation) with the production wiring of src/runtime.ts but a clock fixed a week before the
 * first slot booked and no logger, on the booking scenario of bench/lib/bookings-database.ts. Runs as
 * a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps, rateLimitStoreFor } from '../src/app/deps.ts';
import { BOOKINGS_SCENARIO, createBookingsDatabase } from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenFullStack } from './lib/full-stack.ts';

export interface BookingsStackInfo {
  origin: string;
  writeKey: string;
  serviceId: string;
  clientId: string;
  /** Staff ids by index, as bookingSlot numbers them. */
  staffIds: string[];
}

serveFromChild<null, BookingsStackInfo>(async () => {
  const { database, writeKey, serviceId, clientId, staffIds } = await createBookingsDatabase();
  const deps = createAppDeps({
    db: database.db,
    // As `booking serve` counts them: in the counters file beside the database.
    rateLimitStore: rateLimitStoreFor(database.db, database.file),
    // Fixed before every slot booked, so each one stays within notice and advance limits.
    clock: new ManualClock(BOOKINGS_SCENARIO.now),
    secret: randomBytes(32).toString('base64url'),
  });
  const { origin, close } = await listenFullStack(deps, () => database.dispose());
  return { info: { origin, writeKey, serviceId, clientId, staffIds }, close };
});

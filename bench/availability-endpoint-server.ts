/**
 * The full stack for the availability-endpoint benchmark: the real app (authentication, rate limiting,
 * validation, SQLite through Kysely, the availability engine, serialisation) with the production wiring
 * of src/runtime.ts but a fixed clock and no logger, on the seeded availability scenario
 * (bench/lib/availability-database.ts). Runs as a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { AVAILABILITY_SCENARIO, createAvailabilityDatabase } from './lib/availability-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenFullStack } from './lib/full-stack.ts';

export interface AvailabilityStackInfo {
  origin: string;
  readKey: string;
  /** The three services, in booking order. */
  serviceIds: string[];
  /** Existing live bookings in the database. */
  bookings: number;
}

serveFromChild<null, AvailabilityStackInfo>(async () => {
  const { database, readKey, serviceIds, bookings } = await createAvailabilityDatabase();
  const deps = createAppDeps({
    db: database.db,
    // Fixed, so every request searches the same fortnight from the same "now".
    clock: new ManualClock(AVAILABILITY_SCENARIO.now),
    secret: randomBytes(32).toString('base64url'),
  });
  const { origin, close } = await listenFullStack(deps, () => database.dispose());
  return { info: { origin, readKey, serviceIds, bookings }, close };
});

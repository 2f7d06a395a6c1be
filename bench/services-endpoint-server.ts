/**
 * The full stack for the services-endpoint benchmark: the real app (authentication, rate limiting,
 * validation, SQLite through Kysely, serialisation) with the production wiring of src/runtime.ts, but
 * no logger, on a seeded temporary database. Runs as a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { systemClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { createBenchDatabase } from './lib/bench-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenFullStack } from './lib/full-stack.ts';

export interface FullStackInfo {
  origin: string;
  readKey: string;
}

serveFromChild<null, FullStackInfo>(async () => {
  const { database, readKey } = await createBenchDatabase(systemClock.nowMs());
  const deps = createAppDeps({
    db: database.db,
    clock: systemClock,
    secret: randomBytes(32).toString('base64url'),
  });
  const { origin, close } = await listenFullStack(deps, () => database.dispose());
  return { info: { origin, readKey }, close };
});

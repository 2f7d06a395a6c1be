/**
 * The full stack for the services-endpoint benchmark: the real app (authentication, rate limiting,
 * validation, SQLite through Kysely, serialisation) with the production wiring of src/runtime.ts, but
 * no logger, on a seeded temporary database. Runs as a child process: see bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { systemClock } from '../src/app/clock.ts';
import { type AppDeps, DEFAULT_LIMITS } from '../src/app/deps.ts';
import { localCheckout } from '../src/app/payments.ts';
import { MemoryRateLimitStore } from '../src/app/rate-limiter.ts';
import { buildApp } from '../src/http/build-app.ts';
import { createBenchDatabase } from './lib/bench-database.ts';
import { serveFromChild } from './lib/child.ts';

export interface FullStackInfo {
  origin: string;
  readKey: string;
}

serveFromChild<null, FullStackInfo>(async () => {
  const { database, readKey } = await createBenchDatabase(systemClock.nowMs());
  const deps: AppDeps = {
    db: database.db,
    clock: systemClock,
    secret: randomBytes(32).toString('base64url'),
    limits: DEFAULT_LIMITS,
    rateLimitStore: new MemoryRateLimitStore(),
    payments: localCheckout,
  };
  const app = await buildApp(deps);
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    info: { origin, readKey },
    close: async () => {
      await app.close();
      await database.dispose();
    },
  };
});

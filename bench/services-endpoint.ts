import { readFileSync } from 'node:fs';
import path from 'node:path';
import { systemClock } from '../src/app/clock.ts';
import { measureAgainstBaseline } from './lib/against-baseline.ts';
import { BENCH_LOCATION, createBenchDatabase, EXTRA_SERVICES } from './lib/bench-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { startServeProcess } from './lib/serve-process.ts';
import { judgeHttp } from './lib/targets.ts';

const PAGE_SIZE = 50;
const PATH = `/v1/locations/${BENCH_LOCATION}/services`;

/**
 * Issue 47: what any authenticated GET costs beyond the framework. A full default page of services,
 * each with its staff, from the real `booking serve` against a bare Fastify route sending the very
 * same bytes. Targets: at least 0.6 of the baseline's throughput and p99 under 10 ms at 50 connections.
 */
export const servicesEndpoint: Benchmark = {
  id: 'services-endpoint',
  async run(context) {
    context.progress('seeding a temporary SQLite database and starting `booking serve`…');
    const { database, readKey } = await createBenchDatabase(systemClock.nowMs());
    const logFile = path.join(database.dir, 'serve.log');
    const server = await startServeProcess(
      { DATABASE_URL: database.url },
      { logFile, cpuProfileDir: context.cpuProfileDir },
    );
    try {
      const comparison = await measureAgainstBaseline(
        {
          origin: server.url,
          route: '/v1/locations/:slug/services',
          path: PATH,
          headers: { authorization: `Bearer ${readKey}` },
          check: checkFullPage,
        },
        context,
      );
      const exitCode = await server.stop();
      if (exitCode !== 0) throw new Error(`booking serve exited with ${exitCode}.`);
      const logged = requestsLogged(logFile);
      if (logged < comparison.full.requests) {
        throw new Error(
          `booking serve logged ${logged} requests of the ${comparison.full.requests} measured.`,
        );
      }
      return {
        kind: 'http',
        request: `GET ${PATH}`,
        method: [
          `Full stack: \`booking serve\` itself (bin/booking.js with its V8 settings, NODE_ENV=production, LOG_LEVEL=info with one JSON line per request written to a file, the rate-limit counters in their file beside the database) on a migrated SQLite file holding the demo catalogue plus ${EXTRA_SERVICES} generated services, so Camden offers ${PAGE_SIZE}: one full default page, each service with 1–2 staff. Every request is checked against the HTTPS rule, authenticates its key (the key's row, kept in process while nothing commits to the database, else one query), is counted in its key's and its organisation's windows (hits taken from the counters file in batches), has its parameters validated, is answered from the listing cache (pages kept serialised, by catalogue version), and is logged.`,
          'Baseline: a bare Fastify instance (no logger, no hooks, no schema) with the same route pattern, sending the very same bytes with the same content type (checked byte for byte before measuring).',
        ],
        comparison,
        targets: judgeHttp(comparison, { minRatio: 0.6, maxP99Ms: 10 }),
      };
    } finally {
      await server.stop();
      await database.dispose();
    }
  },
};

/** The "request completed" lines of a server's log. */
function requestsLogged(logFile: string): number {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"request completed"')).length;
}

function checkFullPage(body: unknown): void {
  const data = (body as { data?: { staff?: unknown[] }[] }).data;
  if (!Array.isArray(data) || data.length !== PAGE_SIZE) {
    throw new Error(`Expected ${PAGE_SIZE} services at ${BENCH_LOCATION}, got ${data?.length ?? 'none'}.`);
  }
  if (data.some((service) => !service.staff?.length)) throw new Error('A service on the page has no staff.');
}

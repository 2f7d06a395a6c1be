import { measureAgainstBaseline } from './lib/against-baseline.ts';
import { BENCH_LOCATION, EXTRA_SERVICES } from './lib/bench-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { startServerProcess } from './lib/server-process.ts';
import { judgeHttp } from './lib/targets.ts';
import type { FullStackInfo } from './services-endpoint-server.ts';

const FULL_STACK_SERVER = new URL('./services-endpoint-server.ts', import.meta.url);
const PAGE_SIZE = 50;
const PATH = `/v1/locations/${BENCH_LOCATION}/services`;

/**
 * The first benchmark: a full default page of services, each with its staff, through the
 * whole stack, against a bare Fastify route returning the same JSON. Targets: at least 0.6 of the
 * baseline's throughput and p99 under 10 ms at 50 connections.
 */
export const servicesEndpoint: Benchmark = {
  id: 'services-endpoint',
  async run(context) {
    context.progress('seeding a temporary SQLite database and starting the full stack…');
    const server = await startServerProcess<FullStackInfo>(FULL_STACK_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
      serveSettings: true,
    });
    try {
      const comparison = await measureAgainstBaseline(
        {
          origin: server.info.origin,
          route: '/v1/locations/:slug/services',
          path: PATH,
          headers: { authorization: `Bearer ${server.info.readKey}` },
          check: checkFullPage,
        },
        context,
      );
      return {
        kind: 'http',
        request: `GET ${PATH}`,
        method: [
          `Full stack: the real app (\`buildApp\` with the production dependencies of \`src/runtime.ts\`: system clock, in-memory rate-limit store, default limits; no logger) on a migrated SQLite file holding the demo catalogue plus ${EXTRA_SERVICES} generated services, so Camden offers ${PAGE_SIZE}: one full default page, each service with 1–2 staff. Every request is checked against the HTTPS rule, authenticates a read key with one SQLite query (key hash joined to its organisation; the key's own limit is far above the load, so it is counted but never refused), is rate-limited, has its parameters validated by zod, and is answered from the listing cache: pages are cached serialised, keyed by the organisation's catalogue version, which that same query reads (database triggers bump it on any catalogue change). The first request of a catalogue version reads the location, the page and its staff from SQLite.`,
          'Baseline: a bare Fastify instance (no logger, no hooks, no schema) with the same route pattern, returning the very same JSON (checked byte for byte before measuring).',
        ],
        comparison,
        targets: judgeHttp(comparison, { minRatio: 0.6, maxP99Ms: 10 }),
      };
    } finally {
      await server.stop();
    }
  },
};

function checkFullPage(body: unknown): void {
  const data = (body as { data?: { staff?: unknown[] }[] }).data;
  if (!Array.isArray(data) || data.length !== PAGE_SIZE) {
    throw new Error(`Expected ${PAGE_SIZE} services at ${BENCH_LOCATION}, got ${data?.length ?? 'none'}.`);
  }
  if (data.some((service) => !service.staff?.length)) throw new Error('A service on the page has no staff.');
}

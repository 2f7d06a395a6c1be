import http from 'node:http';
import type { AvailabilityStackInfo } from './availability-endpoint-server.ts';
import { measureAgainstBaseline } from './lib/against-baseline.ts';
import { AVAILABILITY_SCENARIO } from './lib/availability-database.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { LATENCY_RATE } from './lib/compare.ts';
import { sendJson } from './lib/http-request.ts';
import { startServerProcess } from './lib/server-process.ts';
import { judgeHttp } from './lib/targets.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

const FULL_STACK_SERVER = new URL('./availability-endpoint-server.ts', import.meta.url);
const ROUTE = '/v1/locations/:slug/availability';
/** Fewer would not be the realistic fortnight the benchmark is meant to measure. */
const MIN_SLOTS = 100;
/** Issue 16's figures: the latency phase offers 500 requests/s (the voice traffic of a salon group). */
const AVAILABILITY_LATENCY_RATE = 500;
const TARGETS = { minRatio: 0.1, maxP99Ms: 50 };
/** Unloaded: one request at a time on one keep-alive connection, after warm-up. */
const UNLOADED = { warmUp: 100, calls: 1_000, maxP50Ms: 1.5 };

/**
 * The availability benchmark over HTTP: 14 days, 20 staff, 3 services back to back, 2,000
 * existing bookings, any staff, through the whole stack against a bare Fastify route returning the
 * same JSON; then the full stack alone, one request at a time.
 */
export const availabilityEndpoint: Benchmark = {
  id: 'availability-endpoint',
  async run(context) {
    context.progress('seeding the availability scenario and starting the full stack…');
    const server = await startServerProcess<AvailabilityStackInfo>(FULL_STACK_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
      serveSettings: true,
    });
    try {
      const { location, fromDate, days, now } = AVAILABILITY_SCENARIO;
      const path = `/v1/locations/${location}/availability?service_ids=${server.info.serviceIds.join(',')}&date=${fromDate}&days=${days}`;
      let slots = 0;
      let unloaded = summariseTimes('unloaded', []);
      let unloadedBaseline = unloaded;
      const comparison = await measureAgainstBaseline(
        {
          origin: server.info.origin,
          route: ROUTE,
          path,
          headers: { authorization: `Bearer ${server.info.readKey}` },
          check: (body) => {
            slots = countSlots(body);
          },
          latencyRate: AVAILABILITY_LATENCY_RATE,
          async afterwards(urls) {
            context.progress(`unloaded: ${UNLOADED.calls} requests per side one at a time…`);
            [unloaded, unloadedBaseline] = await timeUnloaded(urls, server.info.readKey);
          },
        },
        context,
      );
      return {
        kind: 'http',
        request: `GET /v1/locations/${location}/availability?service_ids=<3 ids>&date=${fromDate}&days=${days}`,
        method: [
          `Full stack: the real app (\`buildApp\` with the production dependencies of \`src/runtime.ts\`, but a clock fixed at ${now}, the Monday before the searched fortnight, so every request does the same work; in-memory rate-limit store, default limits; no logger) on a migrated SQLite file holding the scenario of \`bench/lib/availability-database.ts\`: one location (Europe/London, 15-minute grid, 60 minutes' notice, 60 days ahead), 3 services, 20 active staff who all deliver them, each working Monday to Saturday in two intervals a day, some time off, and ${server.info.bookings.toLocaleString('en-GB')} existing confirmed bookings over the fortnight searched (the same data as \`availability-engine\`). The request asks for the 3 services back to back, any staff, ${days} days from Monday ${fromDate}: ${slots} slots.`,
          'Every request is checked against the HTTPS rule, authenticates a read key with one SQLite query, is rate-limited, has its query string validated by zod, and reads the organisation’s catalogue and bookings versions (one SQLite query). The answer is reused while neither version has moved and the clock stays inside the span over which the engine would give the same slots (`src/app/availability-cache.ts`, `slotsStableUntil`); here nothing changes, so after the first request every request is answered from it, with the response body serialised once. The first request, and any after a change, reads the location, the services, the eligible staff, their working hours, time off and every live booking of theirs in the window (about 2,000 rows) and the closures, runs the engine, and formats every slot time in the location’s zone.',
          'Where the time went (issue 16), from `npm run bench -- --only availability-endpoint --duration 4 --cpu-prof-dir <dir>` (V8 CPU profiles of the server; the shares are of its busy time from its first request on, 2026-11-25): before answers were reused, 56 % went to executing SQLite statements (mostly the ~2,000 bookings rows of the window), 9 % to mapping those rows, 5 % to Kysely building queries, 6 % to the engine, 3 % to formatting slot times (formatLocal) and 4 % to garbage collection; authentication took 1 %, the framework and zod validation a few %. With answers reused but each one presented afresh, formatting slot times became 29 % and presenting 30 %, so a reused answer’s body is serialised once. Now the server’s busy time is Node’s HTTP and socket work (~45 %), the two SQLite queries of authentication and the versions read (17 %), zod validation of the query string (11 %) and Fastify (7 %).',
          `Baseline: a bare Fastify instance (no logger, no hooks, no schema) with the same route pattern, returning the very same JSON (checked byte for byte before measuring). The latency phase offers ${AVAILABILITY_LATENCY_RATE} requests/s (not ${LATENCY_RATE}), the rate issue 16 names. Unloaded: after the side-by-side rounds, ${UNLOADED.calls.toLocaleString('en-GB')} requests to the full stack one at a time over one keep-alive connection (after ${UNLOADED.warmUp} untimed), each timed in the runner from sending to the whole answer, and as many to the baseline, the sides alternating in two blocks each: full stack p50 ${formatMs(unloaded.p50)} ms, p90 ${formatMs(unloaded.p90)} ms, p99 ${formatMs(unloaded.p99)} ms; baseline p50 ${formatMs(unloadedBaseline.p50)} ms, p90 ${formatMs(unloadedBaseline.p90)} ms, p99 ${formatMs(unloadedBaseline.p99)} ms (full / baseline p50: ×${(unloaded.p50 / unloadedBaseline.p50).toFixed(2)}).`,
        ],
        comparison,
        targets: [
          ...judgeHttp(comparison, TARGETS),
          {
            description: `Unloaded p50 < ${UNLOADED.maxP50Ms} ms (one request at a time)`,
            measured: `${formatMs(unloaded.p50)} ms (baseline ${formatMs(unloadedBaseline.p50)} ms)`,
            pass: unloaded.p50 < UNLOADED.maxP50Ms,
          },
        ],
      };
    } finally {
      await server.stop();
    }
  },
};

function countSlots(body: unknown): number {
  const slots = (body as { data?: { slots?: { staff_id?: unknown }[] } }).data?.slots;
  if (!Array.isArray(slots) || slots.length < MIN_SLOTS) {
    throw new Error(
      `Expected at least ${MIN_SLOTS} slots over the fortnight, got ${slots?.length ?? 'none'}.`,
    );
  }
  if (slots.some((slot) => typeof slot.staff_id !== 'string')) throw new Error('A slot has no staff member.');
  return slots.length;
}

/**
 * Latency with nothing else going on: one request at a time over one keep-alive connection per side,
 * the sides alternating in blocks so that the shared machine's noise falls on both.
 */
async function timeUnloaded(urls: { full: string; baseline: string }, key: string) {
  const agents = [urls.full, urls.baseline].map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const send = async (side: number) => {
    const answer = await sendJson({
      url: side === 0 ? urls.full : urls.baseline,
      method: 'GET',
      agent: agents[side]!,
      headers: { authorization: `Bearer ${key}` },
    });
    if (answer.status !== 200) throw new Error(`unloaded: answered ${answer.status}`);
  };
  try {
    const times: number[][] = [[], []];
    for (const side of [0, 1]) for (let i = 0; i < UNLOADED.warmUp; i += 1) await send(side);
    for (let block = 0; block < 4; block += 1) {
      const side = block % 2;
      for (let i = 0; i < UNLOADED.calls / 2; i += 1) {
        const start = performance.now();
        await send(side);
        times[side]!.push(performance.now() - start);
      }
    }
    return [summariseTimes('full stack', times[0]!), summariseTimes('baseline', times[1]!)] as const;
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

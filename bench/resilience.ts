import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_KEY_RATE_LIMIT } from '../src/app/api-key-service.ts';
import { type AbuseCampaignFigures, runAbuseCampaign } from '../test/helpers/abuse-campaign.ts';
import { smallCatalogue } from '../test/helpers/catalogue-fixtures.ts';
import { runCli, startServer } from '../test/helpers/cli.ts';
import {
  type CrashScenarioReport,
  prepareCrashDatabase,
  runCrashScenario,
} from '../test/helpers/crash-scenario.ts';
import type { Benchmark, ScenarioBenchmarkResult, Target } from './lib/benchmark.ts';
import { type KeyTimingFigures, measureKeyTiming } from './lib/key-timing.ts';
import { formatMs } from './lib/timing.ts';

/** Crash rounds: where the kill lands, how many bookers, whether the client abandons its requests. */
const CRASH_ROUNDS = [
  { killAfterCreated: 300, clients: 24, abandonInFlight: false },
  { killAfterCreated: 600, clients: 32, abandonInFlight: true },
  { killAfterCreated: 1000, clients: 48, abandonInFlight: true },
] as const;
const ABUSE_RUNS = 3000;
const KEY_TIMING_CALLS = 20_000;

/**
 * The figures of the suite's resilience tests, at a larger scale than the suite runs them, for the
 * report: the crash scenario (test/e2e/crash-recovery.test.ts), the abuse campaign
 * (test/integration/http-abuse.test.ts), and the timing of wrong keys near a real one against random
 * ones. Each uses the very code the tests use, so the report and the tests cannot drift apart.
 */
export const resilience: Benchmark = {
  id: 'resilience',
  async run(context) {
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-resilience-'));
    try {
      const prepared = await prepareCrashDatabase(
        mkdirSync(path.join(dir, 'template'), { recursive: true })!,
      );
      const crashes: CrashScenarioReport[] = [];
      for (const [index, round] of CRASH_ROUNDS.entries()) {
        context.progress(
          `crash round ${index + 1}/${CRASH_ROUNDS.length}: kill -9 after ${round.killAfterCreated} bookings`,
        );
        const roundDir = mkdirSync(path.join(dir, `crash-${index}`), { recursive: true })!;
        crashes.push(await runCrashScenario({ dir: roundDir, prepared, ...round }));
      }
      context.progress(`abuse campaign: ${ABUSE_RUNS} generated requests`);
      const abuse = await runAbuse(path.join(dir, 'abuse'));
      context.progress(`key timing: ${KEY_TIMING_CALLS} wrong keys of each kind`);
      const keyTiming = await measureKeyTiming(KEY_TIMING_CALLS);
      return present(crashes, abuse, keyTiming);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function runAbuse(dir: string): Promise<AbuseCampaignFigures & { durationS: number }> {
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'booking.sqlite')}`, NODE_ENV: 'production' };
  mkdirSync(dir, { recursive: true });
  const catalogue = path.join(dir, 'catalogue.json');
  writeFileSync(catalogue, JSON.stringify(smallCatalogue()));
  if (runCli(['import', catalogue], env).status !== 0) throw new Error('abuse: import failed');
  const created = runCli(
    [
      'keys',
      'create',
      '--org',
      'acme-hair',
      '--label',
      'abuse',
      '--scope',
      'read_write',
      '--rate-limit',
      String(MAX_KEY_RATE_LIMIT),
      '--json',
    ],
    env,
  );
  if (created.status !== 0) throw new Error(`abuse: keys create failed: ${created.stderr}`);
  const server = await startServer(['--port', '0'], env);
  try {
    const started = performance.now();
    const figures = await runAbuseCampaign({
      baseUrl: server.url,
      key: (JSON.parse(created.stdout) as { key: string }).key,
      numRuns: ABUSE_RUNS,
    });
    return { ...figures, durationS: (performance.now() - started) / 1000 };
  } finally {
    await server.stop();
  }
}

function present(
  crashes: CrashScenarioReport[],
  abuse: AbuseCampaignFigures & { durationS: number },
  keyTiming: KeyTimingFigures,
): ScenarioBenchmarkResult {
  const count = (n: number) => n.toLocaleString('en-GB');
  const brokenAfterCrash = crashes.filter(
    (c) =>
      c.problems.length > 0 ||
      c.missing > 0 ||
      c.changed > 0 ||
      c.replayMismatches > 0 ||
      !c.integrity.ok ||
      !c.integrityAfterRecovery.ok ||
      c.bookingsInDatabase !== c.keysWith201 ||
      c.storedResponses !== c.keysWith201,
  ).length;
  const statuses = Object.entries(abuse.statusCounts)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${status}: ${count(n)}`)
    .join(', ');
  const targets: Target[] = [
    {
      description:
        'Crash: every 201 intact after kill -9 and restart, replays identical, nothing half written',
      measured: `${CRASH_ROUNDS.length - brokenAfterCrash} of ${CRASH_ROUNDS.length} rounds`,
      pass: brokenAfterCrash === 0,
    },
    {
      description: 'Abuse: no 5xx, every refusal a 4xx envelope with a request id',
      measured: `${abuse.serverErrors} 5xx, ${abuse.envelopeViolations.length} violations in ${count(abuse.requests)} requests`,
      pass: abuse.serverErrors === 0 && abuse.envelopeViolations.length === 0,
    },
    {
      description: 'Abuse: server healthy afterwards',
      measured: abuse.healthyAfter ? 'yes' : 'no',
      pass: abuse.healthyAfter,
    },
    {
      description: 'Key timing: near-miss p50 / random p50 within 0.9–1.1',
      measured: keyTiming.ratio.toFixed(3),
      pass: keyTiming.ratio >= 0.9 && keyTiming.ratio <= 1.1,
    },
  ];
  return {
    kind: 'scenario',
    subject: 'crash, abuse and key timing',
    method: [
      'The scenarios of the test suite, at a larger scale. **Crash** (`test/helpers/crash-scenario.ts`): the real `booking serve` on a SQLite file takes concurrent bookings of distinct free slots, each with its own Idempotency-Key; once enough were answered 201 it is killed with SIGKILL while requests are in flight (in two rounds the client also abandons its outstanding requests, so some committed bookings were never answered), then restarted on the same file. Every 201 is fetched and compared field by field; every request is replayed with its key (answered ones must replay byte for byte, unknown ones must settle to exactly one booking); `checkIntegrity` runs right after recovery and at the end; bookings, stored responses and answered keys must be the same set.',
      `**Abuse** (\`test/helpers/abuse-campaign.ts\`): ${count(ABUSE_RUNS)} fast-check-generated malformed requests over raw sockets to every endpoint of the OpenAPI document plus \`/healthz\`, \`/mcp\`, \`/sse\` and \`/messages\` of a real \`booking serve\` (wrong types, nulls, sizes over the limit, deep nesting, unicode, impossible dates, injection strings as data, wrong methods and content types, broken HTTP); every answer must be a 4xx envelope with a request id (or a 2xx for a request that happened to be valid, whose data must read back as sent), then \`/healthz\` must answer 200.`,
      `**Key timing** (\`bench/lib/key-timing.ts\`): \`authenticateApiKey\` timed in process for ${count(KEY_TIMING_CALLS)} wrong keys equal to a real key but for the last character, interleaved with as many random well-formed keys.`,
    ],
    tables: [
      {
        header: [
          'Crash round',
          'Answered 201',
          'In flight at kill',
          'Of those committed',
          'Replays',
          'Mismatches',
          'Missing or changed',
          'Bookings = stored = keys',
          'WAL at kill',
          'Restart (ms)',
        ],
        rows: crashes.map((c, i) => [
          `kill after ${CRASH_ROUNDS[i]!.killAfterCreated}, ${CRASH_ROUNDS[i]!.clients} bookers${CRASH_ROUNDS[i]!.abandonInFlight ? ', abandoned' : ''}`,
          count(c.answered201),
          count(c.inFlightAtKill),
          count(c.committedOfInFlight),
          count(c.replayed),
          count(c.replayMismatches),
          count(c.missing + c.changed),
          `${count(c.bookingsInDatabase)} = ${count(c.storedResponses)} = ${count(c.keysWith201)}`,
          c.walBytesAtKill === null ? 'none' : `${(c.walBytesAtKill / 1024 / 1024).toFixed(1)} MiB`,
          formatMs(c.restartMs),
        ]),
        numeric: [false, true, true, true, true, true, true, true, true, true],
      },
      {
        header: ['Wrong key', 'Calls', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'Mean (ms)'],
        rows: [keyTiming.nearMiss, keyTiming.random].map((t) => [
          t.label,
          count(t.calls),
          formatMs(t.p50),
          formatMs(t.p90),
          formatMs(t.p99),
          formatMs(t.mean),
        ]),
        numeric: [false, true, true, true, true, true],
      },
    ],
    facts: [
      `Crash: \`checkIntegrity\` right after recovery and at the end: ${crashes.every((c) => c.integrityAfterRecovery.ok && c.integrity.ok) ? 'every invariant holds in every round' : 'BROKEN'}.`,
      `Abuse: ${count(abuse.requests)} requests in ${abuse.durationS.toFixed(1)} s (seed ${abuse.seed}); answers by status: ${statuses}; healthy afterwards: ${abuse.healthyAfter ? 'yes' : 'no'}.`,
      `Key timing: near-miss p50 / random p50 = ${keyTiming.ratio.toFixed(3)}.`,
    ],
    targets,
  };
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { smallCatalogue } from '../test/helpers/catalogue-fixtures.ts';
import { type RunningServer, startServer } from '../test/helpers/cli.ts';
import { prepareDatabase } from '../test/helpers/served-database.ts';
import type { Benchmark, ScenarioBenchmarkResult, Target } from './lib/benchmark.ts';
import { PINNING, pinProcess, SERVER_CPU } from './lib/cpu-pinning.ts';
import type { LoadStats } from './lib/load.ts';
import { runPacedLoad } from './lib/paced-load.ts';
import { type SlowClientFigures, startSlowClients } from './lib/slow-clients.ts';
import { formatMs } from './lib/timing.ts';

const ATTACKERS = 1_000;
const BYTE_EVERY_MS = 10_000;
const RAMP_MS = 3_000;
const ATTACKER_ADDRESS = '127.0.0.2';
/** The other organisation's steady traffic: requests a second over keep-alive connections. */
const VICTIM_RATE = 100;
const VICTIM_CONNECTIONS = 8;
const P99_TARGET_MS = 100;
/**
 * Each phase measures at least this long, so that the attackers' bytes arrive and the request
 * timeout (15 s) cuts the connections that hold a request open, during the measurement.
 */
const MIN_PHASE_S = 25;

interface Phase {
  label: string;
  victim: LoadStats;
  /** Attacker connections open, sampled every 100 ms while the victim was measured. */
  open: { min: number; mean: number; max: number } | null;
  attackers: SlowClientFigures | null;
}

/**
 * `booking serve` under 1,000 slow-body connections from one address while another organisation's
 * requests are timed: quiet first (the baseline, same server, same run), then with the attackers
 * sending no key (refused before their body is read, and closed), then with a valid key of their own
 * organisation whose rate limit lets everything through (held until the request timeout cuts them).
 */
export const slowClients: Benchmark = {
  id: 'slow-clients',
  async run(context) {
    const durationS = Math.max(context.durationS, MIN_PHASE_S);
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-slow-'));
    let server: RunningServer | undefined;
    try {
      const env = { DATABASE_URL: `sqlite:${path.join(dir, 'booking.sqlite')}`, NODE_ENV: 'production' };
      const [victimKey, attackerKey] = await prepareDatabase(env.DATABASE_URL, {
        catalogues: [
          smallCatalogue({ slug: 'victim-salon' }),
          smallCatalogue({ slug: 'attacker-org', prefix: 'AT' }),
        ],
        keys: [
          { organisation: 'victim-salon', scope: 'read', rateLimitPerMinute: 1_000_000 },
          { organisation: 'attacker-org', rateLimitPerMinute: 1_000_000 },
        ],
      });
      server = await startServer(['--port', '0'], env);
      if (PINNING && server.process.pid !== undefined) pinProcess(server.process.pid, SERVER_CPU);
      const port = Number(new URL(server.url).port);
      const victim = () =>
        runPacedLoad(
          {
            url: `${server!.url}/v1/locations/soho/services`,
            headers: { authorization: `Bearer ${victimKey}` },
          },
          { connections: VICTIM_CONNECTIONS, durationS, rate: VICTIM_RATE },
        );

      const phases: Phase[] = [];
      context.progress('warm-up, then the other organisation alone');
      await runPacedLoad(
        {
          url: `${server.url}/v1/locations/soho/services`,
          headers: { authorization: `Bearer ${victimKey}` },
        },
        { connections: VICTIM_CONNECTIONS, durationS: 2, rate: VICTIM_RATE },
      );
      phases.push({ label: 'Quiet (baseline)', victim: await victim(), open: null, attackers: null });

      for (const [label, authorization] of [
        ['1,000 slow bodies without a key', undefined],
        ["1,000 slow bodies with their own organisation's key", `Bearer ${attackerKey}`],
      ] as const) {
        context.progress(`${label}: ramping up`);
        const attack = startSlowClients({
          port,
          localAddress: ATTACKER_ADDRESS,
          count: ATTACKERS,
          byteEveryMs: BYTE_EVERY_MS,
          rampMs: RAMP_MS,
          ...(authorization && { authorization }),
        });
        await new Promise((resolve) => setTimeout(resolve, RAMP_MS + 500));
        context.progress(`${label}: measuring`);
        const samples: number[] = [];
        const sampler = setInterval(() => samples.push(attack.open()), 100);
        const stats = await victim();
        clearInterval(sampler);
        attack.stop();
        phases.push({
          label,
          victim: stats,
          open: {
            min: Math.min(...samples),
            mean: Math.round(samples.reduce((a, b) => a + b, 0) / samples.length),
            max: Math.max(...samples),
          },
          attackers: attack.figures(),
        });
        // Let the server close what the attackers left before the next phase.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      const healthy = (await fetch(`${server.url}/healthz`)).status === 200;
      return present(phases, healthy, durationS);
    } finally {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

function present(phases: Phase[], healthy: boolean, durationS: number): ScenarioBenchmarkResult {
  const count = (n: number) => n.toLocaleString('en-GB');
  const quiet = phases[0]!.victim;
  const attacked = phases.slice(1);
  const answers = (figures: SlowClientFigures | null) =>
    figures === null
      ? '–'
      : Object.entries(figures.answers)
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([status, n]) => `${status}: ${count(n)}`)
          .join(', ') || 'none';
  const targets: Target[] = attacked.map((phase) => ({
    description: `Other organisation's p99 < ${P99_TARGET_MS} ms under ${phase.label}`,
    measured: `${formatMs(phase.victim.p99)} ms`,
    pass: phase.victim.p99 < P99_TARGET_MS && phase.victim.non2xx === 0 && phase.victim.errors === 0,
  }));
  targets.push({ description: 'Server healthy afterwards', measured: healthy ? 'yes' : 'no', pass: healthy });
  return {
    kind: 'scenario',
    subject: 'slow clients against `booking serve`',
    method: [
      `The real \`booking serve\` on a SQLite file with two organisations${PINNING ? `, pinned to core ${SERVER_CPU}` : ''}. The other organisation (a read key) asks \`GET /v1/locations/soho/services\` at a steady ${VICTIM_RATE} requests a second over ${VICTIM_CONNECTIONS} keep-alive connections from 127.0.0.1 for ${durationS} s per phase (\`bench/lib/paced-load.ts\`: open loop, each latency timed from when the request was due). First alone, as the baseline of this run; then while ${count(ATTACKERS)} connections from ${ATTACKER_ADDRESS} (one address of their own on loopback) each send the headers of \`POST /v1/clients\` announcing a 1,000-byte body and then one byte of it every ${BYTE_EVERY_MS / 1000} s (\`bench/lib/slow-clients.ts\`); a connection the server closes is opened again at its next byte's time, so the attack stays slow (one packet per connection per ${BYTE_EVERY_MS / 1000} s) rather than becoming a flood. The attackers ramp up over ${RAMP_MS / 1000} s before measuring starts.`,
      'Without a key, the server refuses each request when its headers are in (401, then 429 once the address has failed 30 times in the minute) and closes the connection without reading the body. With a valid key of their own organisation (a rate limit far above the attack), the requests are accepted and their bodies awaited, until the request timeout (15 s) answers 408 and closes them: this phase holds most of the 1,000 connections open all the time.',
    ],
    tables: [
      {
        header: [
          'Phase',
          'Requests',
          'p50 (ms)',
          'p90 (ms)',
          'p99 (ms)',
          'Max (ms)',
          'Failed',
          'p99 / quiet p99',
          'Attackers open (min / mean / max)',
          'Attacker connections',
          'Answers to the attackers',
        ],
        rows: phases.map((phase) => [
          phase.label,
          count(phase.victim.requests),
          formatMs(phase.victim.p50),
          formatMs(phase.victim.p90),
          formatMs(phase.victim.p99),
          formatMs(phase.victim.max),
          count(phase.victim.non2xx + phase.victim.errors),
          phase === phases[0] ? '1' : (phase.victim.p99 / quiet.p99).toFixed(2),
          phase.open
            ? `${count(phase.open.min)} / ${count(phase.open.mean)} / ${count(phase.open.max)}`
            : '–',
          phase.attackers ? count(phase.attackers.opened) : '–',
          answers(phase.attackers),
        ]),
        numeric: [false, true, true, true, true, true, true, true, false, true, false],
      },
    ],
    facts: [
      `Healthy afterwards (\`/healthz\` 200): ${healthy ? 'yes' : 'no'}.`,
      ...attacked.map(
        (phase) =>
          `${phase.label}: ${count(phase.attackers?.bytesSent ?? 0)} body bytes sent by the attackers; ${count(phase.attackers?.closedSilently ?? 0)} connections closed without an answer.`,
      ),
    ],
    targets,
  };
}

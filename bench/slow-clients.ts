import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
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
const MIN_PHASE_S = 20;

/** One phase of one round: the other organisation's figures, and what the attackers did meanwhile. */
interface PhaseRound {
  victim: LoadStats;
  /** Attacker connections open, sampled every 100 ms while the victim was measured. */
  open: number[];
  attackers: SlowClientFigures | null;
}

interface PhaseSpec {
  label: string;
  /** null: no attack; otherwise the attackers' Authorization header, or none. */
  attack: null | { authorization?: string };
}

/** Alternating rounds of the three phases, so that what else the machine does weighs on each alike. */
const ROUNDS = 3;
/** The open-files limit of the last phase: a common default (`ulimit -n`). */
const LIMITED_OPEN_FILES = 1_024;

const count = (n: number) => n.toLocaleString('en-GB');

/** Sets a process's open-files limit (prlimit, util-linux); whether it could. */
function limitOpenFiles(pid: number | undefined, limit: number): boolean {
  if (pid === undefined) return false;
  try {
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${limit}:${limit}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `booking serve` under 1,000 slow-body connections from one address while another organisation's
 * requests are timed: alone (the baseline, same server, same run), with the attackers sending no key
 * (refused before their body is read, and closed), and with a valid key of their own organisation
 * whose rate limit lets everything through (held until the request timeout cuts them). The three
 * phases alternate over ROUNDS rounds; each figure is the median over the rounds.
 */
export const slowClients: Benchmark = {
  id: 'slow-clients',
  async run(context) {
    const durationS = Math.max(context.durationS, MIN_PHASE_S);
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-slow-'));
    let server: RunningServer | undefined;
    const loadBefore = loadavg()[0]!;
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
      const victim = (seconds: number) =>
        runPacedLoad(
          {
            url: `${server!.url}/v1/locations/soho/services`,
            headers: { authorization: `Bearer ${victimKey}` },
          },
          { connections: VICTIM_CONNECTIONS, durationS: seconds, rate: VICTIM_RATE },
        );
      const specs: PhaseSpec[] = [
        { label: 'Quiet (baseline)', attack: null },
        { label: '1,000 slow bodies without a key', attack: {} },
        {
          label: "1,000 slow bodies with their own organisation's key",
          attack: { authorization: `Bearer ${attackerKey}` },
        },
      ];

      context.progress('warm-up');
      await victim(2);
      const rounds: PhaseRound[][] = specs.map(() => []);
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [index, spec] of specs.entries()) {
          context.progress(`round ${round}/${ROUNDS}: ${spec.label}`);
          rounds[index]!.push(await runPhase(spec, port, () => victim(durationS)));
        }
      }
      // Last, once: the server's open files limited to what many systems give a process by default,
      // where 1,000 connections held open would leave none for anybody else's.
      const limited = specs[1]!.attack !== null && limitOpenFiles(server.process.pid, LIMITED_OPEN_FILES);
      if (limited) {
        const spec = {
          label: `${specs[1]!.label}, server limited to ${count(LIMITED_OPEN_FILES)} open files`,
          attack: {},
        };
        context.progress(spec.label);
        specs.push(spec);
        rounds.push([await runPhase(spec, port, () => victim(durationS))]);
      }
      const healthy = (await fetch(`${server.url}/healthz`)).status === 200;
      return present(
        specs.map((spec, index) => ({ spec, rounds: rounds[index]! })),
        { healthy, durationS, load: [loadBefore, loadavg()[0]!], limited },
      );
    } finally {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** One phase: the attackers (if any) ramped up, the victim measured meanwhile, the attackers stopped. */
async function runPhase(
  spec: PhaseSpec,
  port: number,
  measure: () => Promise<LoadStats>,
): Promise<PhaseRound> {
  if (spec.attack === null) return { victim: await measure(), open: [], attackers: null };
  const attack = startSlowClients({
    port,
    localAddress: ATTACKER_ADDRESS,
    count: ATTACKERS,
    byteEveryMs: BYTE_EVERY_MS,
    rampMs: RAMP_MS,
    ...spec.attack,
  });
  await new Promise((resolve) => setTimeout(resolve, RAMP_MS + 500));
  const open: number[] = [];
  const sampler = setInterval(() => open.push(attack.open()), 100);
  const victim = await measure();
  clearInterval(sampler);
  attack.stop();
  // Let the server close what the attackers left before the next phase.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return { victim, open, attackers: attack.figures() };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

function present(
  phases: { spec: PhaseSpec; rounds: PhaseRound[] }[],
  run: { healthy: boolean; durationS: number; load: [number, number]; limited: boolean },
): ScenarioBenchmarkResult {
  const of = (rounds: PhaseRound[], pick: (stats: LoadStats) => number) =>
    median(rounds.map((round) => pick(round.victim)));
  const quietP99 = of(phases[0]!.rounds, (stats) => stats.p99);
  const summed = (rounds: PhaseRound[]) => {
    const answers: Record<string, number> = {};
    let opened = 0;
    let bytes = 0;
    for (const { attackers } of rounds) {
      if (!attackers) continue;
      opened += attackers.opened;
      bytes += attackers.bytesSent;
      for (const [status, n] of Object.entries(attackers.answers))
        answers[status] = (answers[status] ?? 0) + n;
    }
    return { answers, opened, bytes };
  };
  const attacked = phases.slice(1);
  const targets: Target[] = attacked.map(({ spec, rounds }) => {
    const p99 = of(rounds, (stats) => stats.p99);
    const failed = rounds.reduce((n, round) => n + round.victim.non2xx + round.victim.errors, 0);
    return {
      description: `Other organisation's p99 < ${P99_TARGET_MS} ms, none failed, under ${spec.label}${rounds.length > 1 ? ` (median of ${rounds.length} rounds)` : ''}`,
      measured: `${formatMs(p99)} ms`,
      pass: p99 < P99_TARGET_MS && failed === 0,
    };
  });
  targets.push({
    description: 'Server healthy afterwards',
    measured: run.healthy ? 'yes' : 'no',
    pass: run.healthy,
  });
  return {
    kind: 'scenario',
    subject: 'slow clients against `booking serve`',
    method: [
      `The real \`booking serve\` on a SQLite file with two organisations${PINNING ? `, pinned to core ${SERVER_CPU}` : ''}. The other organisation (a read key) asks \`GET /v1/locations/soho/services\` at a steady ${VICTIM_RATE} requests a second over ${VICTIM_CONNECTIONS} keep-alive connections from 127.0.0.1 for ${run.durationS} s per phase (\`bench/lib/paced-load.ts\`: open loop, each latency timed from when the request was due): alone, as the baseline of this run; then while ${count(ATTACKERS)} connections from ${ATTACKER_ADDRESS} (an address of their own on loopback) each send the headers of \`POST /v1/clients\` announcing a 1,000-byte body and then one byte of it every ${BYTE_EVERY_MS / 1000} s (\`bench/lib/slow-clients.ts\`); a connection the server closes is opened again at its next byte's time, so the attack stays slow (one packet per connection per ${BYTE_EVERY_MS / 1000} s) rather than becoming a flood. The attackers ramp up over ${RAMP_MS / 1000} s before measuring starts. The three phases alternate over ${ROUNDS} rounds, so that whatever else runs on the machine weighs on each alike; each figure is the median over the rounds, the attackers' counts their sum.`,
      'Without a key, the server refuses each request when its headers are in (401, then 429 once the address has failed 30 times in the minute) and closes the connection without reading the body. With a valid key of their own organisation (a rate limit far above the attack), the requests are accepted and their bodies awaited, until the request timeout (15 s) answers 408 and closes them: that phase holds most of the 1,000 connections open all the time.',
      `Last, once, the keyless attack again with the server's open files limited to ${count(LIMITED_OPEN_FILES)} (\`prlimit\`), a common default of \`ulimit -n\`: 1,000 connections held open there would leave no descriptor for anybody else's connection.`,
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
          'Attackers open (median / max)',
          'Attacker connections',
          'Answers to the attackers',
        ],
        rows: phases.map(({ spec, rounds }) => {
          const p99 = of(rounds, (stats) => stats.p99);
          const open = rounds.flatMap((round) => round.open);
          const { answers, opened } = summed(rounds);
          return [
            spec.label,
            count(rounds.reduce((n, round) => n + round.victim.requests, 0)),
            formatMs(of(rounds, (stats) => stats.p50)),
            formatMs(of(rounds, (stats) => stats.p90)),
            formatMs(p99),
            formatMs(of(rounds, (stats) => stats.max)),
            count(rounds.reduce((n, round) => n + round.victim.non2xx + round.victim.errors, 0)),
            (p99 / quietP99).toFixed(2),
            open.length === 0 ? '–' : `${count(median(open))} / ${count(Math.max(...open))}`,
            spec.attack === null ? '–' : count(opened),
            spec.attack === null
              ? '–'
              : Object.entries(answers)
                  .sort(([a], [b]) => Number(a) - Number(b))
                  .map(([status, n]) => `${status}: ${count(n)}`)
                  .join(', ') || 'none',
          ];
        }),
        numeric: [false, true, true, true, true, true, true, true, false, true, false],
      },
    ],
    facts: [
      `Per round p99 (ms): ${phases.map(({ spec, rounds }) => `${spec.label}: ${rounds.map((round) => formatMs(round.victim.p99)).join(', ')}`).join('; ')}.`,
      ...(run.limited ? [] : ['The open-files phase did not run: `prlimit` is missing or was refused.']),
      `Healthy afterwards (\`/healthz\` 200): ${run.healthy ? 'yes' : 'no'}. Load average of the machine (1 min) at the start and the end: ${run.load.map((load) => load.toFixed(2)).join(' and ')}.`,
      ...attacked.map(({ spec, rounds }) => {
        const { bytes } = summed(rounds);
        return `${spec.label}: ${count(bytes)} body bytes sent by the attackers.`;
      }),
    ],
    targets,
  };
}

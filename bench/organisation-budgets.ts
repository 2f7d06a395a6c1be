import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_ORGANISATION_REQUESTS_PER_MINUTE } from '../src/app/config.ts';
import { DEFAULT_LIMITS } from '../src/app/deps.ts';
import { type RunningServer, startServer } from '../test/helpers/cli.ts';
import type { Benchmark, ScenarioBenchmarkResult, Target } from './lib/benchmark.ts';
import { PINNING, pinProcess, SERVER_CPU } from './lib/cpu-pinning.ts';
import type { LoadStats } from './lib/load.ts';
import { MIXED_LOAD } from './lib/mixed-load-catalogue.ts';
import { TRAFFIC_MIX } from './lib/mixed-traffic.ts';
import {
  BUDGETS_SCENARIO,
  type BudgetsDatabase,
  prepareBudgetsDatabase,
} from './lib/organisation-budgets-scenario.ts';
import { type FloodFigures, startFlood } from './lib/organisation-flood.ts';
import { runPacedLoad } from './lib/paced-load.ts';
import { formatMs } from './lib/timing.ts';

/** The other organisation's steady traffic: requests a second over keep-alive connections. */
const VICTIM_RATE = 50;
const VICTIM_CONNECTIONS = 8;
/** Issue 38's attacker: 884 requests in 6 s, about 150 a second, with 25 keys. */
const FLOOD_RATE = 150;
const FLOOD_CONNECTIONS = 50;
const WINDOW_MS = 60_000;
/** Each phase starts this long after a window starts and measures for PHASE_MS, inside that window. */
const PHASE_OFFSET_MS = 500;
const PHASE_MS = 58_000;
const ROUNDS = 3;
const RATIO_TARGET = 2;
const SEED = 20261127;

interface PhaseSpec {
  label: string;
  /** null: no flood; otherwise which server the flood (and the measurement) goes to. */
  flood: null | 'budgeted' | 'lifted';
}

const PHASES: PhaseSpec[] = [
  { label: 'Alone (baseline)', flood: null },
  { label: `Flood by ${BUDGETS_SCENARIO.attackerKeys} keys of one organisation`, flood: 'budgeted' },
  { label: 'The same flood with the organisation budget lifted', flood: 'lifted' },
];

interface PhaseRound {
  victim: LoadStats;
  flood: FloodFigures | null;
}

const count = (n: number) => n.toLocaleString('en-GB');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until PHASE_OFFSET_MS into the next rate-limit window (windows are epoch minutes). */
const nextWindow = () => sleep(WINDOW_MS - (Date.now() % WINDOW_MS) + PHASE_OFFSET_MS);

/**
 * Issue 38 and design 9.1: one organisation with many keys must not slow another (its p99 within
 * 2x). The real `booking serve` with two organisations; the quiet one's availability requests timed
 * at a steady rate, alone and while the other floods with 25 keys, each phase one whole rate-limit
 * window; and the same flood against a second server whose organisation budget is lifted, to show
 * what the budget holds back.
 */
export const organisationBudgets: Benchmark = {
  id: 'organisation-budgets',
  async run(context) {
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-budgets-'));
    const servers: RunningServer[] = [];
    const loadBefore = loadavg()[0]!;
    try {
      const start = async (file: string, env: Record<string, string>) => {
        const url = `sqlite:${path.join(dir, file)}`;
        const database = await prepareBudgetsDatabase(url);
        const server = await startServer(['--port', '0'], {
          DATABASE_URL: url,
          NODE_ENV: 'production',
          ...env,
        });
        servers.push(server);
        if (PINNING && server.process.pid !== undefined) pinProcess(server.process.pid, SERVER_CPU);
        return { server, database };
      };
      // The budgeted server runs with the defaults (ORGANISATION_REQUESTS_PER_MINUTE unset: 600).
      const budgeted = await start('budgeted.sqlite', {});
      const lifted = await start('lifted.sqlite', {
        ORGANISATION_REQUESTS_PER_MINUTE: String(MAX_ORGANISATION_REQUESTS_PER_MINUTE),
      });
      const setups = { budgeted, lifted };
      const victimUrl = async ({
        server,
        database,
      }: {
        server: RunningServer;
        database: BudgetsDatabase;
      }) => {
        const services = await fetch(`${server.url}/v1/locations/${MIXED_LOAD.location}/services`, {
          headers: { authorization: `Bearer ${database.victimKey}` },
        });
        const { data } = (await services.json()) as { data: { id: string }[] };
        const date = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
        return `${server.url}/v1/locations/${MIXED_LOAD.location}/availability?service_ids=${data[1]!.id}&date=${date}&days=7`;
      };
      const urls = { budgeted: await victimUrl(budgeted), lifted: await victimUrl(lifted) };
      const victim = (setup: 'budgeted' | 'lifted', durationMs: number) =>
        runPacedLoad(
          { url: urls[setup], headers: { authorization: `Bearer ${setups[setup].database.victimKey}` } },
          { connections: VICTIM_CONNECTIONS, durationS: durationMs / 1000, rate: VICTIM_RATE },
        );
      const flood = (setup: 'budgeted' | 'lifted', seed: number) =>
        startFlood({
          origin: setups[setup].server.url,
          keys: setups[setup].database.attackerKeys,
          rate: FLOOD_RATE,
          connections: FLOOD_CONNECTIONS,
          seed,
          ...setups[setup].database.attacker,
        });

      context.progress('warm-up');
      for (const setup of ['budgeted', 'lifted'] as const) {
        const warming = flood(setup, SEED);
        await victim(setup, 3_000);
        await warming.stop();
      }
      const rounds: PhaseRound[][] = PHASES.map(() => []);
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [index, spec] of PHASES.entries()) {
          await nextWindow();
          context.progress(`round ${round}/${ROUNDS}: ${spec.label}`);
          const setup = spec.flood ?? 'budgeted';
          const running = spec.flood === null ? null : flood(setup, SEED + round);
          const measured = await victim(setup, PHASE_MS);
          rounds[index]!.push({ victim: measured, flood: (await running?.stop()) ?? null });
        }
      }
      const healthy = await Promise.all(
        servers.map(async (s) => (await fetch(`${s.url}/healthz`)).status === 200),
      );
      return present(
        PHASES.map((spec, index) => ({ spec, rounds: rounds[index]! })),
        { healthy: healthy.every(Boolean), load: [loadBefore, loadavg()[0]!] },
      );
    } finally {
      for (const server of servers) await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

function present(
  phases: { spec: PhaseSpec; rounds: PhaseRound[] }[],
  run: { healthy: boolean; load: [number, number] },
): ScenarioBenchmarkResult {
  const of = (rounds: PhaseRound[], pick: (stats: LoadStats) => number) =>
    median(rounds.map((round) => pick(round.victim)));
  const [alone, flooded, lifted] = phases as [(typeof phases)[0], (typeof phases)[0], (typeof phases)[0]];
  const aloneP99 = of(alone.rounds, (s) => s.p99);
  const aloneP50 = of(alone.rounds, (s) => s.p50);
  const ratio = (rounds: PhaseRound[]) => of(rounds, (s) => s.p99) / aloneP99;
  const failed = (rounds: PhaseRound[]) => rounds.reduce((n, r) => n + r.victim.non2xx + r.victim.errors, 0);
  const floods = (rounds: PhaseRound[]) => rounds.flatMap((r) => (r.flood ? [r.flood] : []));
  const servedOf = (figures: FloodFigures) => Object.values(figures.served).reduce((n, v) => n + v, 0);
  const statusesOf = (rounds: PhaseRound[]) => {
    const total: Record<number, number> = {};
    for (const figures of floods(rounds))
      for (const [status, n] of Object.entries(figures.statuses))
        total[Number(status)] = (total[Number(status)] ?? 0) + n;
    return Object.entries(total)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([status, n]) => `${status === '0' ? 'socket error' : status}: ${count(n)}`)
      .join(', ');
  };
  const budget = DEFAULT_LIMITS.organisationRequestsPerMinute;
  const mostServed = Math.max(...floods(flooded.rounds).map(servedOf));
  const refusalsOf = (rounds: PhaseRound[]) => {
    const total: Record<string, number> = {};
    for (const figures of floods(rounds))
      for (const [message, n] of Object.entries(figures.refusals)) total[message] = (total[message] ?? 0) + n;
    return total;
  };
  const byOrganisation = Object.entries(refusalsOf(flooded.rounds))
    .filter(([message]) => /for this organisation, across all its keys/.test(message))
    .reduce((n, [, refused]) => n + refused, 0);
  const floodRatio = ratio(flooded.rounds);

  const targets: Target[] = [
    {
      description: `Other organisation's p99 during the flood / alone ≤ ${RATIO_TARGET.toFixed(1)} (medians of ${ROUNDS} rounds)`,
      measured: floodRatio.toFixed(2),
      pass: floodRatio <= RATIO_TARGET,
    },
    {
      description: "None of the other organisation's requests failed, alone or during the flood",
      measured: `${count(failed(alone.rounds) + failed(flooded.rounds))} failed`,
      pass: failed(alone.rounds) + failed(flooded.rounds) === 0,
    },
    {
      description: `The flooding organisation was served at most its budget (${count(budget)}) in each window`,
      measured: `at most ${count(mostServed)}`,
      pass: mostServed <= budget,
    },
    {
      description:
        "The flood's requests past the budget were refused with 429, naming the organisation's budget",
      measured: `${count(byOrganisation)} such 429s`,
      pass: byOrganisation > 0,
    },
    { description: 'Servers healthy afterwards', measured: run.healthy ? 'yes' : 'no', pass: run.healthy },
  ];

  const kinds = TRAFFIC_MIX.map(({ kind }) => kind);
  return {
    kind: 'scenario',
    subject: 'one organisation flooding another’s server, `booking serve`',
    method: [
      `Issue 38: one organisation with ${BUDGETS_SCENARIO.attackerKeys} keys sent 884 requests in 6 s, none refused, while another organisation's median went from 3 ms to 99 ms. Two real \`booking serve\` processes${PINNING ? ` pinned to core ${SERVER_CPU}` : ''}, each on its own SQLite file holding two salons as large as the mixed load's (\`bench/lib/organisation-budgets-scenario.ts\`): one with the default organisation budget (\`ORGANISATION_REQUESTS_PER_MINUTE\` unset: ${count(budget)} requests a minute across all an organisation's keys), one with it lifted to ${count(MAX_ORGANISATION_REQUESTS_PER_MINUTE)}. The quiet salon (one read key whose own limit is far above its traffic) asks \`GET /v1/locations/central/availability\` (one service, 7 days from 3 days ahead) at a steady ${VICTIM_RATE} requests a second over ${VICTIM_CONNECTIONS} keep-alive connections (\`bench/lib/paced-load.ts\`: open loop, each latency timed from when the request was due).`,
      `The flood (\`bench/lib/organisation-flood.ts\`): the busy salon's ${BUDGETS_SCENARIO.attackerKeys} read_write keys, each on the default limit of ${DEFAULT_LIMITS.requestsPerMinute} a minute, taking turns, ${FLOOD_RATE} requests a second open loop over up to ${FLOOD_CONNECTIONS} connections, drawn as the mixed load draws them (${TRAFFIC_MIX.map((m) => `${m.kind} ${Math.round(m.weight * 100)} %`).join(', ')}: searches, bookings of slots seen in earlier answers, client look-ups and walk-ins). Its keys together would allow ${count(BUDGETS_SCENARIO.attackerKeys * DEFAULT_LIMITS.requestsPerMinute)} a minute; the budget allows ${count(budget)}.`,
      `Each phase is one rate-limit window: it starts ${PHASE_OFFSET_MS} ms after a minute begins and measures for ${PHASE_MS / 1000} s, so the flood's whole allowance of that minute (spent in its first seconds) falls inside it. The phases alternate (alone, flood, flood with the budget lifted) over ${ROUNDS} rounds; each figure is the median over the rounds, the flood's counts their sum.`,
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
          'p50 / alone',
          'p99 / alone',
          'Flood sent',
          'Flood served',
          'Answers to the flood',
        ],
        rows: phases.map(({ spec, rounds }) => {
          const sent = floods(rounds).reduce((n, f) => n + f.sent, 0);
          const served = floods(rounds).reduce((n, f) => n + servedOf(f), 0);
          return [
            spec.label,
            count(rounds.reduce((n, r) => n + r.victim.requests, 0)),
            formatMs(of(rounds, (s) => s.p50)),
            formatMs(of(rounds, (s) => s.p90)),
            formatMs(of(rounds, (s) => s.p99)),
            formatMs(of(rounds, (s) => s.max)),
            count(failed(rounds)),
            (of(rounds, (s) => s.p50) / aloneP50).toFixed(2),
            ratio(rounds).toFixed(2),
            spec.flood === null ? '–' : count(sent),
            spec.flood === null ? '–' : count(served),
            spec.flood === null ? '–' : statusesOf(rounds),
          ];
        }),
        numeric: [false, true, true, true, true, true, true, true, true, true, true, false],
      },
    ],
    facts: [
      `Per round p99 (ms): ${phases.map(({ spec, rounds }) => `${spec.label}: ${rounds.map((r) => formatMs(r.victim.p99)).join(', ')}`).join('; ')}.`,
      ...[flooded, lifted].map(({ spec, rounds }) => {
        const all = floods(rounds);
        const served = kinds
          .map((kind) => `${kind} ${count(all.reduce((n, f) => n + f.served[kind], 0))}`)
          .join(', ');
        return `${spec.label}: served per round ${all.map((f) => count(servedOf(f))).join(', ')} (${served}); median time to an answer ${formatMs(median(all.map((f) => f.servedP50)))} ms served, ${formatMs(median(all.map((f) => f.refusedP50)))} ms refused.`;
      }),
      ...[flooded, lifted].map(
        ({ spec, rounds }) =>
          `${spec.label}, its 429s: ${
            Object.entries(refusalsOf(rounds))
              .map(([message, n]) => `${count(n)} "${message}"`)
              .join(', ') || 'none'
          } (once a key has made its ${DEFAULT_LIMITS.requestsPerMinute}, its own limit refuses first).`,
      ),
      `Healthy afterwards (\`/healthz\` 200): ${run.healthy ? 'yes' : 'no'}. Load average of the machine (1 min) at the start and the end: ${run.load.map((l) => l.toFixed(2)).join(' and ')}.`,
    ],
    targets,
  };
}

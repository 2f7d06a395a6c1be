import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { MAX_KEY_RATE_LIMIT } from '../src/app/api-key-service.ts';
import { openDatabase } from '../src/data/database.ts';
import { checkIntegrity, type IntegrityReport } from '../src/data/integrity-check.ts';
import { type CliResult, type RunningServer, runCli, startServer } from '../test/helpers/cli.ts';
import {
  POSTGRES_ADMIN_URL,
  postgresReachable,
  postgresUrlOf,
  withAdminConnection,
} from '../test/helpers/postgres-test-server.ts';
import type { BenchContext, Benchmark, ScenarioBenchmarkResult, Target } from './lib/benchmark.ts';
import { BOOKINGS_SCENARIO, bookingSlot, bookingsCatalogue, SLOTS_PER_DAY } from './lib/bookings-database.ts';
import { type ClosedLoopReport, runClosedLoop } from './lib/closed-loop.ts';
import { LOAD_CPU, PINNING } from './lib/cpu-pinning.ts';
import { type CpuUse, cpuSnapshot, cpuUseBetween } from './lib/cpu-use.ts';
import { formatMs } from './lib/timing.ts';

/** Enough to keep one instance busy on 2 cores, few enough that latency is not only queueing. */
const CONNECTIONS = 32;
/** Untimed, before each phase: JIT, pools filling, PostgreSQL's caches. */
const WARM_UP_S = 2;
/** A request unanswered this long counts as a failure instead of stalling the run. */
const REQUEST_TIMEOUT_MS = 10_000;
/** After SIGTERM, a server gets this long to drain before SIGKILL. */
const STOP_TIMEOUT_MS = 15_000;
/** Benchmark databases on the PostgreSQL server: booking_bench_<runner pid>_<setup>. */
const DATABASE_PREFIX = 'booking_bench_';
/** Availability requests rotate over the first week of the scenario's days. */
const SEARCH_DAYS = 7;
/**
 * Issue 16: the CPU time of the instance and PostgreSQL per request (one instance), in ms: what the
 * round trips of a request cost on both sides, whatever else the machine runs.
 */
const POSTGRES_CPU_TARGET_MS = { bookings: 2.5, availability: 1 } as const;

type Phase = 'availability' | 'bookings';

interface Setup {
  label: string;
  /** Folder name for its CPU profiles (--cpu-prof-dir). */
  slug: string;
  dialect: 'sqlite' | 'postgres';
  instances: number;
}

const SETUPS: readonly Setup[] = [
  { label: 'SQLite, 1 instance', slug: 'sqlite-1', dialect: 'sqlite', instances: 1 },
  { label: 'PostgreSQL, 1 instance', slug: 'postgres-1', dialect: 'postgres', instances: 1 },
  { label: 'PostgreSQL, 2 instances', slug: 'postgres-2', dialect: 'postgres', instances: 2 },
];

interface PhaseOutcome {
  phase: Phase;
  warmUp: ClosedLoopReport;
  measured: ClosedLoopReport;
  cpu: CpuUse | null;
}

interface SetupOutcome {
  setup: Setup;
  phases: PhaseOutcome[];
  /** Bookings answered 201, warm-up included. */
  created: number;
  integrity: IntegrityReport;
  stopCodes: (number | null)[];
  availabilityAnswer: { bytes: number; slots: number };
}

/**
 * Issue 7: booking and availability throughput of `booking serve` with one and with two instances on
 * one PostgreSQL database, and with one on SQLite for comparison, in the same run. Each setup gets a
 * fresh database, the bookings scenario and its own servers; after its bookings phase the database is
 * checked for double bookings. Throughput has no target: on this machine the load generator, the
 * instances and PostgreSQL share two cores, and the report says where the CPU went.
 */
export const instances: Benchmark = {
  id: 'instances',
  async run(context) {
    if (!(await postgresReachable()))
      throw new Error(`PostgreSQL does not answer at ${serverOf(POSTGRES_ADMIN_URL)} (TEST_POSTGRES_URL).`);
    await dropAbandonedDatabases(context);
    const postgresVersion = await withAdminConnection(
      async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0],
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-instances-'));
    try {
      const catalogueFile = path.join(dir, 'catalogue.json');
      writeFileSync(catalogueFile, JSON.stringify(bookingsCatalogue()));
      const outcomes: SetupOutcome[] = [];
      for (const [index, setup] of SETUPS.entries()) {
        outcomes.push(await runSetup(setup, index, dir, catalogueFile, context));
      }
      return present(outcomes, context.durationS, postgresVersion?.server_version ?? 'unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function runSetup(
  setup: Setup,
  index: number,
  dir: string,
  catalogueFile: string,
  context: BenchContext,
): Promise<SetupOutcome> {
  const progress = (message: string) => context.progress(`${setup.label}: ${message}`);
  const database = await freshDatabase(setup, index, dir);
  try {
    const env = { DATABASE_URL: database.url, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
    progress(`importing the bookings scenario into ${database.description}`);
    succeeded(runCli(['import', catalogueFile], env), 'import');
    const keyArgs = ['keys', 'create', '--org', BOOKINGS_SCENARIO.organisation, '--label', 'instances'];
    const { key } = JSON.parse(
      succeeded(
        runCli(
          [...keyArgs, '--scope', 'read_write', '--rate-limit', String(MAX_KEY_RATE_LIMIT), '--json'],
          env,
        ),
        'keys create',
      ),
    ) as { key: string };

    const servers: RunningServer[] = [];
    const phases: PhaseOutcome[] = [];
    let availabilityAnswer = { bytes: 0, slots: 0 };
    let stopCodes: (number | null)[] = [];
    try {
      // One after the other: each brings the schema up to date and reads the shared cursor secret.
      const profileDir = context.cpuProfileDir && path.resolve(context.cpuProfileDir, setup.slug);
      const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
      if (profileDir) progress(`each instance writes a CPU profile of its whole run into ${profileDir}`);
      for (let i = 0; i < setup.instances; i += 1) {
        const server = await startServer(['--port', '0'], env, profile);
        servers.push(server);
        allowEveryCore(server);
      }
      progress(`${servers.length} × \`booking serve\` at ${servers.map((s) => s.url).join(', ')}`);
      const ids = await scenarioIds(servers[0]!.url, key);
      const dates = Array.from({ length: SEARCH_DAYS }, (_, d) =>
        DateTime.fromISO(BOOKINGS_SCENARIO.firstDate).plus({ days: d }).toISODate(),
      );
      const availabilityPath = (date: string | null) =>
        `/v1/locations/${BOOKINGS_SCENARIO.location}/availability?service_ids=${ids.serviceId}&date=${date}&days=1`;
      availabilityAnswer = await sampleAvailability(servers, key, availabilityPath(dates[0]!));

      const phase = { servers, key, durationS: context.durationS, postgresDatabase: database.name, progress };
      let searches = 0;
      phases.push(
        await runPhase({
          ...phase,
          phase: 'availability',
          expectedStatus: 200,
          next: () => ({ method: 'GET', path: availabilityPath(dates[searches++ % dates.length]!) }),
        }),
      );
      let booked = 0;
      phases.push(
        await runPhase({
          ...phase,
          phase: 'bookings',
          expectedStatus: 201,
          next: () => {
            const slot = bookingSlot(booked++);
            return {
              method: 'POST',
              path: '/v1/bookings',
              body: {
                location_slug: BOOKINGS_SCENARIO.location,
                service_ids: [ids.serviceId],
                staff_id: ids.staffIds[slot.staff],
                client_id: ids.clientId,
                starts_at: slot.startsAtIso,
              },
            };
          },
        }),
      );
    } finally {
      stopCodes = await Promise.all(servers.map(stopServer));
    }

    progress('instances stopped; checking the database with checkIntegrity');
    const integrity = await integrityOf(database.url);
    const bookings = phases.find((p) => p.phase === 'bookings')!;
    return {
      setup,
      phases,
      created: bookings.warmUp.succeeded + bookings.measured.succeeded,
      integrity,
      stopCodes,
      availabilityAnswer,
    };
  } finally {
    await database
      .drop()
      .catch((error: unknown) => progress(`could not drop ${database.description}: ${error}`));
  }
}

interface PhaseOptions {
  phase: Phase;
  servers: readonly RunningServer[];
  key: string;
  durationS: number;
  expectedStatus: number;
  /** The setup's PostgreSQL database (null on SQLite): only its backends count as the setup's PostgreSQL. */
  postgresDatabase: string | null;
  progress: (message: string) => void;
  next: () => { method: 'GET' | 'POST'; path: string; body?: unknown };
}

async function runPhase(options: PhaseOptions): Promise<PhaseOutcome> {
  const { phase, servers, key, durationS, expectedStatus, postgresDatabase, progress, next } = options;
  const loop = {
    origins: servers.map((s) => s.url),
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${key}` },
    next,
    expectedStatus,
    timeoutMs: REQUEST_TIMEOUT_MS,
  };
  progress(`${phase}: warm-up, ${WARM_UP_S} s`);
  const warmUp = await runClosedLoop({ ...loop, durationMs: WARM_UP_S * 1000 });
  progress(`${phase}: ${CONNECTIONS} connections for ${durationS} s`);
  const before = cpuSnapshot();
  const measured = await runClosedLoop({ ...loop, durationMs: durationS * 1000 });
  const after = cpuSnapshot();
  const serverPids = new Set(servers.map((s) => s.process.pid));
  // Other sessions on this machine may use the same PostgreSQL server: their backends are not ours.
  const foreign = postgresDatabase === null ? new Set<number>() : await foreignBackends(postgresDatabase);
  const cpu =
    before && after
      ? cpuUseBetween(before, after, {
          runner: (pid) => pid === process.pid,
          instances: (pid) => serverPids.has(pid),
          postgres: (pid, comm) => postgresDatabase !== null && comm === 'postgres' && !foreign.has(pid),
        })
      : null;
  progress(
    `${phase}: ${Math.round(measured.succeeded / measured.durationS)} req/s, p50 ${formatMs(measured.latency.p50)} ms, p99 ${formatMs(measured.latency.p99)} ms, ${measured.failures + warmUp.failures} failed`,
  );
  return { phase, warmUp, measured, cpu };
}

/** Client backends of the PostgreSQL server connected to another database than `ours`. */
export async function foreignBackends(ours: string): Promise<Set<number>> {
  return withAdminConnection(async (client) => {
    const result = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM $1`,
      [ours],
    );
    return new Set(result.rows.map((row) => row.pid));
  });
}

export interface BenchDatabase {
  url: string;
  /** The PostgreSQL database's name; null for a SQLite file. */
  name: string | null;
  /** For progress lines: never a password. */
  description: string;
  drop(): Promise<void>;
}

export async function freshDatabase(
  setup: Pick<Setup, 'dialect'>,
  index: number,
  dir: string,
): Promise<BenchDatabase> {
  if (setup.dialect === 'sqlite') {
    const file = path.join(dir, `setup-${index}.sqlite`);
    return {
      url: `sqlite:${file}`,
      name: null,
      description: 'a new SQLite file',
      drop: async () => {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  const name = `${DATABASE_PREFIX}${process.pid}_${index}`;
  await withAdminConnection((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    url: postgresUrlOf(name),
    name,
    description: `PostgreSQL database ${name}`,
    drop: () => dropDatabase(name),
  };
}

function dropDatabase(name: string): Promise<void> {
  // FORCE: a server that could not be stopped must not keep its database alive.
  return withAdminConnection(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

/** Databases left by runs killed before their cleanup (their runner process is gone). */
export async function dropAbandonedDatabases(context: BenchContext): Promise<void> {
  const names = await withAdminConnection(async (client) => {
    const result = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE '${DATABASE_PREFIX.replaceAll('_', '\\_')}%'`,
    );
    return result.rows.map((row) => row.datname);
  });
  for (const name of names) {
    const pid = Number(/^booking_bench_(\d+)_\d+$/.exec(name)?.[1]);
    if (Number.isInteger(pid) && !processAlive(pid)) {
      context.progress(`dropping ${name}, left by an earlier run`);
      await dropDatabase(name);
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The runner is pinned to the load generator's core and its children inherit that; the instances get
 * every core back, so that a second instance has somewhere to run besides the first one's core.
 */
export function allowEveryCore(server: RunningServer): void {
  if (!PINNING || server.process.pid === undefined) return;
  try {
    execFileSync(
      'taskset',
      ['--all-tasks', '--pid', '--cpu-list', `0-${cpus().length - 1}`, String(server.process.pid)],
      { stdio: 'ignore' },
    );
  } catch {
    // Left on the runner's core: the CPU table will show it.
  }
}

export async function stopServer(server: RunningServer): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
  });
  try {
    const exited = server.stop('SIGTERM');
    const code = await Promise.race([exited, late]);
    if (code !== 'late') return code;
    server.process.kill('SIGKILL');
    await exited;
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export interface ScenarioIds {
  serviceId: string;
  clientId: string;
  /** Sorted by name, which is the order of the catalogue's staff refs, so bookingSlot's staff numbers index it. */
  staffIds: string[];
}

export async function scenarioIds(origin: string, key: string): Promise<ScenarioIds> {
  const get = async <T>(url: string): Promise<T> => {
    const response = await fetch(`${origin}${url}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { data: T }).data;
  };
  const { location } = BOOKINGS_SCENARIO;
  const services = await get<{ id: string }[]>(`/v1/locations/${location}/services`);
  const staff = await get<{ id: string; name: string }[]>(`/v1/locations/${location}/staff?limit=100`);
  const client = await get<{ id: string }>('/v1/clients?phone=%2B447911123457');
  if (services.length !== 1 || staff.length !== BOOKINGS_SCENARIO.staff)
    throw new Error(`Expected 1 service and ${BOOKINGS_SCENARIO.staff} staff.`);
  return {
    serviceId: services[0]!.id,
    clientId: client.id,
    staffIds: staff.sort((a, b) => a.name.localeCompare(b.name)).map((s) => s.id),
  };
}

/** One availability answer from each instance, before measuring: a setup that cannot answer stops here. */
async function sampleAvailability(
  servers: readonly RunningServer[],
  key: string,
  url: string,
): Promise<{ bytes: number; slots: number }> {
  let sample = { bytes: 0, slots: 0 };
  for (const server of servers) {
    const response = await fetch(`${server.url}${url}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${server.url}${url}: ${response.status} ${text}`);
    const slots = (JSON.parse(text) as { data: { slots: unknown[] } }).data.slots.length;
    if (slots === 0) throw new Error(`${url}: no free slot on an empty diary.`);
    sample = { bytes: Buffer.byteLength(text), slots };
  }
  return sample;
}

export async function integrityOf(url: string): Promise<IntegrityReport> {
  const handle = openDatabase(url, { readonly: true });
  try {
    return await checkIntegrity(handle.db, Date.now());
  } finally {
    await handle.close();
  }
}

export function succeeded(result: CliResult, what: string): string {
  if (result.status !== 0) throw new Error(`booking ${what} failed: ${result.stderr}`);
  return result.stdout;
}

function serverOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}`;
}

/**
 * CPU time of the instances and the setup's PostgreSQL processes per answered request over the
 * measured phase, in ms (null without /proc): it depends much less than throughput on what else the
 * machine runs.
 */
function cpuPerRequestMs({ cpu, measured }: PhaseOutcome): number | null {
  if (!cpu) return null;
  const { instances = 0, postgres = 0 } = cpu.groups;
  return ((instances + postgres) * cpu.seconds * 1000) / Math.max(1, measured.latency.calls);
}

function present(
  outcomes: SetupOutcome[],
  durationS: number,
  postgresVersion: string,
): ScenarioBenchmarkResult {
  const count = (n: number) => n.toLocaleString('en-GB');
  const rate = (r: ClosedLoopReport) => r.succeeded / r.durationS;
  const phaseOf = (outcome: SetupOutcome | undefined, phase: Phase) =>
    outcome?.phases.find((p) => p.phase === phase);
  const [sqlite, postgresOne, postgresTwo] = outcomes;
  const ratio = (a: SetupOutcome | undefined, b: SetupOutcome | undefined, phase: Phase) => {
    const top = phaseOf(a, phase)?.measured;
    const bottom = phaseOf(b, phase)?.measured;
    return top && bottom && rate(bottom) > 0 ? (rate(top) / rate(bottom)).toFixed(2) : '—';
  };
  const cores = cpus().length;

  const rows = outcomes.flatMap(({ setup, phases }) =>
    phases.map(({ phase, measured }) => [
      setup.label,
      phase === 'availability' ? 'availability (`GET`)' : 'bookings (`POST`)',
      count(measured.latency.calls),
      count(Math.round(rate(measured))),
      formatMs(measured.latency.p50),
      formatMs(measured.latency.p90),
      formatMs(measured.latency.p99),
      formatMs(measured.latency.max),
      String(measured.failures),
    ]),
  );
  const cpuRows = outcomes.flatMap(({ setup, phases }) =>
    phases.flatMap((outcome) => {
      const { phase, cpu } = outcome;
      const perRequest = cpuPerRequestMs(outcome);
      if (!cpu || perRequest === null) return [];
      const { runner = 0, instances = 0, postgres = 0 } = cpu.groups;
      const other = Math.max(0, cpu.machineBusy - runner - instances - postgres);
      return [
        [
          setup.label,
          phase,
          `${cpu.machineBusy.toFixed(2)} of ${cpu.cores}`,
          runner.toFixed(2),
          instances.toFixed(2),
          setup.dialect === 'postgres' ? postgres.toFixed(2) : '—',
          other.toFixed(2),
          cpu.stolen.toFixed(2),
          formatMs(perRequest),
        ],
      ];
    }),
  );

  const allAnswers = outcomes.flatMap((o) => o.phases.flatMap((p) => [p.warmUp, p.measured]));
  const totalAnswers = allAnswers.reduce((n, r) => n + r.latency.calls + r.socketErrors, 0);
  const failuresOf = (o: SetupOutcome) =>
    o.phases.reduce((n, p) => n + p.warmUp.failures + p.measured.failures, 0);
  const doubleOf = (o: SetupOutcome) =>
    o.integrity.findings.find((f) => f.check === 'no_double_booking')?.violations ?? -1;
  const brokenOf = (o: SetupOutcome) =>
    o.integrity.findings.filter((f) => f.violations > 0).map((f) => f.check);
  const perSetup = (text: (o: SetupOutcome) => string) =>
    outcomes.map((o) => `${o.setup.label}: ${text(o)}`).join('; ');

  const targets: Target[] = [
    {
      description: `Every answer 2xx (200 for availability, 201 for each booking), warm-ups included, no socket error or timeout`,
      measured: `${perSetup((o) => `${failuresOf(o)} failed`)} (of ${count(totalAnswers)} requests)`,
      pass: outcomes.every((o) => failuresOf(o) === 0),
    },
    {
      description: 'No double booking (checkIntegrity after each setup’s bookings phase)',
      measured: perSetup(
        (o) => `${doubleOf(o)} overlapping pairs among ${count(o.integrity.liveBookings)} live bookings`,
      ),
      pass: outcomes.every((o) => doubleOf(o) === 0),
    },
    ...(['bookings', 'availability'] as const).map((phase) => {
      const target = POSTGRES_CPU_TARGET_MS[phase];
      const one = phaseOf(postgresOne, phase);
      const measured = one ? cpuPerRequestMs(one) : null;
      return {
        description: `PostgreSQL, 1 instance: CPU of the instance and PostgreSQL per ${phase === 'bookings' ? 'booking (`POST /v1/bookings`)' : 'availability request (`GET`)'} ≤ ${target} ms`,
        measured: measured === null ? 'not measured (no /proc)' : `${formatMs(measured)} ms`,
        pass: measured !== null && measured <= target,
      };
    }),
    {
      description:
        'Every booking answered 201 is stored, nothing else is, and every checkIntegrity invariant holds',
      measured: perSetup(
        (o) =>
          `${count(o.created)} answered 201, ${count(o.integrity.bookings)} stored${o.integrity.ok ? '' : `, broken: ${brokenOf(o).join(', ')}`}`,
      ),
      pass: outcomes.every((o) => o.integrity.ok && o.integrity.bookings === o.created),
    },
  ];

  const facts: string[] = [];
  const cpuOf = (o: SetupOutcome | undefined, phase: Phase) => phaseOf(o, phase)?.cpu ?? undefined;
  // The CPU of this benchmark's own processes: the runner, the instances and their PostgreSQL backends.
  const ours = (cpu: CpuUse) => Object.values(cpu.groups).reduce((n, x) => n + x, 0);
  for (const phase of ['availability', 'bookings'] as const) {
    const one = cpuOf(postgresOne, phase);
    const two = cpuOf(postgresTwo, phase);
    if (!one || !two) continue;
    const saturated = Math.min(one.machineBusy, two.machineBusy) >= cores - 0.25;
    const rateOf = (o: SetupOutcome | undefined) => {
      const measured = phaseOf(o, phase)?.measured;
      return measured ? measured.succeeded / measured.durationS : 0;
    };
    const gained = rateOf(postgresTwo) > rateOf(postgresOne);
    const oneLeftIdle = one.machineBusy < cores - 0.25;
    facts.push(
      `PostgreSQL ${phase}: the machine was ${one.machineBusy.toFixed(2)} of ${cores} cores busy with one instance and ${two.machineBusy.toFixed(2)} with two; this benchmark's own processes used ${ours(one).toFixed(2)} and ${ours(two).toFixed(2)}. ${saturated ? 'Saturated either way: a second instance could only gain CPU by taking it from the first, from PostgreSQL or from other work on the machine (a fair scheduler gives two busy processes a larger share than one), so its ratio is not a scaling factor.' : gained || !oneLeftIdle ? 'Where one instance left cores idle, the second could use them.' : 'One instance left cores idle, yet two answered fewer: on the same cores a second process costs CPU of its own (see CPU per request), and its connections queue for the same database and, for bookings, the same location lock.'}`,
    );
  }
  const others = outcomes.flatMap((o) =>
    o.phases.flatMap(({ cpu }) => {
      if (!cpu) return [];
      const { runner = 0, instances = 0, postgres = 0 } = cpu.groups;
      return [Math.max(0, cpu.machineBusy - runner - instances - postgres)];
    }),
  );
  if (others.length > 0) {
    const mean = others.reduce((n, x) => n + x, 0) / others.length;
    facts.push(
      `Processes outside this benchmark (other work on the shared machine, the kernel) used ${mean.toFixed(2)} cores on average during the measured phases, ${Math.max(...others).toFixed(2)} at most in one phase${mean >= 0.25 ? ': every figure above is lower, and every ratio noisier, than on a quiet machine' : ''}.`,
    );
  }
  if (postgresTwo) {
    const split = (phase: Phase) =>
      phaseOf(postgresTwo, phase)!
        .measured.perOrigin.map((n) => count(n))
        .join(' / ');
    facts.push(
      `Two instances: answers per instance, availability ${split('availability')}, bookings ${split('bookings')} (${CONNECTIONS / 2} connections each).`,
    );
  }
  const days = (o: SetupOutcome) => Math.ceil(o.created / SLOTS_PER_DAY);
  facts.push(
    `Bookings made (warm-up included), each a distinct free slot from ${BOOKINGS_SCENARIO.firstDate} onwards, day by day: ${perSetup((o) => `${count(o.created)} over ${days(o)} day${days(o) === 1 ? '' : 's'}`)}.`,
  );
  const sample = outcomes[0]?.availabilityAnswer;
  if (sample)
    facts.push(
      `One availability answer (one day, any staff, empty diary): ${count(sample.slots)} slots, ${count(sample.bytes)} bytes of JSON.`,
    );
  facts.push(
    `Graceful stop (SIGTERM) after the bookings phase: ${perSetup((o) => o.stopCodes.map((c) => (c === null ? 'killed' : `exit ${c}`)).join(', '))}.`,
  );
  for (const o of outcomes) {
    const first = o.phases
      .map((p) => p.warmUp.firstFailure ?? p.measured.firstFailure)
      .find((f) => f !== null);
    if (first)
      facts.push(`${o.setup.label}, first failure: \`${first.replaceAll('`', "'").replaceAll('|', '/')}\``);
  }

  return {
    kind: 'scenario',
    subject: `one and two instances on PostgreSQL, one on SQLite (${CONNECTIONS} connections, ${durationS} s per phase)`,
    method: [
      `Three setups in the same run, one after the other, each on a fresh database: SQLite (a new file, WAL mode, \`synchronous=FULL\`) with one \`booking serve\`; PostgreSQL ${postgresVersion} (the local server, a database created for the setup with \`CREATE DATABASE\` and dropped after it) with one instance; and the same with two instances, two \`booking serve\` processes on different ports over one database (advisory locks and the exclusion constraint keep bookings apart; rate-limit windows are counted in the shared table, one upsert per request in the statement that finds the key, where SQLite counts them in a file beside its database). Each database gets the bookings scenario's catalogue with \`booking import\` (\`bench/lib/bookings-database.ts\`: one London location open 08:00–20:00 every day, ${BOOKINGS_SCENARIO.staff} staff, one 15-minute service without buffer, ${BOOKINGS_SCENARIO.maxAdvanceDays} days of advance booking, so its days from ${BOOKINGS_SCENARIO.firstDate} are bookable on the real clock) and a read_write key with \`booking keys create --rate-limit ${MAX_KEY_RATE_LIMIT}\` (the highest a key may have). The servers run with \`NODE_ENV=production\`, \`LOG_LEVEL=warn\`, the real clock and the default pool of 10 PostgreSQL connections per instance.`,
      `Each setup runs two phases, ${durationS} s each after an untimed ${WARM_UP_S}-s warm-up, as a closed loop: ${CONNECTIONS} keep-alive connections from the runner process, each sending its next request as soon as the last is answered, spread evenly over the setup's instances (connection j always talks to instance j mod n, as a balancer with a pool per instance would). Availability: \`GET /v1/locations/${BOOKINGS_SCENARIO.location}/availability?service_ids=<id>&date=<day>&days=1\`, any staff, rotating over the first ${SEARCH_DAYS} days of the scenario, on an empty diary; must answer 200. Bookings: \`POST /v1/bookings\`, each for the next distinct free slot of \`bookingSlot(i)\` (day by day, time by time, staff by staff; no Idempotency-Key), so every one must answer 201 and anything else counts as a failure. Latency is timed per request in the runner, from sending to the last byte of the answer; requests/s counts the answers with the expected status over the phase's time.`,
      `Every booking here is at the one location, so on PostgreSQL the bookings take turns on that location's advisory lock (held for the re-check's read of the staff's bookings, the one statement that writes the booking with its rows, and the COMMIT, each a round trip to PostgreSQL; the catalogue, reused while its version stays, and the client are read before the lock is asked for), whichever instance serves them, while on SQLite they run in process under group commit. The bookings rows therefore measure one location's ceiling, which a second instance cannot raise wherever it runs; bookings at different locations do not wait for each other.`,
      `After the bookings phase the instances are stopped with SIGTERM and \`checkIntegrity\` (\`src/data/integrity-check.ts\`, what \`booking check\` runs) reads every row of that setup's database: no two live bookings of a staff member overlap, every booking is whole, the event log and idempotency records agree; the count of stored bookings is compared with the 201 answers.`,
      `Throughput has no target, and the ratios must be read with the machine in mind: ${cores} cores shared by the load generator (the runner${PINNING ? `, pinned to core ${LOAD_CPU}` : ''}), the instances (allowed on every core) and PostgreSQL (not pinned), plus whatever else the shared machine runs. The CPU table says where the time went, in cores busy on average over each measured phase (from \`/proc\`): the runner, the instances, the setup's PostgreSQL processes, everything else ("other"), time the hypervisor gave to other machines ("stolen"), and the CPU time the instances and PostgreSQL spent per request, which depends much less than throughput on what else runs. What a second instance can show here: that two processes over one database serve the same traffic correctly (every answer 2xx, no double booking) and what their coordination costs (a location's bookings taking turns on an advisory lock across instances, a shared rate-limit counter per request, twice the connections) when there is no spare core to give them. What it cannot show: the capacity a second machine would add. Once one instance and PostgreSQL keep both cores busy, a second instance only divides the same CPU, so the two-instance ratio is not a scaling factor; on separate machines the instances' share of the CPU table is what scales, and PostgreSQL's share is what does not.`,
      `The two CPU targets (issue 16) are judged on the last column of the CPU table for PostgreSQL with one instance: the CPU time of the instance and of the setup's PostgreSQL processes (its client backends and the server's own background processes; client backends of other databases, present at the end of the phase, are left out) over the measured phase, divided by the requests answered in it: at most ${POSTGRES_CPU_TARGET_MS.bookings} ms per booking and ${POSTGRES_CPU_TARGET_MS.availability} ms per availability request. The booking figure includes the instance's outbox worker delivering the confirmations those bookings queued (no provider is configured, so each is recorded \`logged\`), which runs during the phase. \`npm run bench -- --only instances --cpu-prof-dir <dir>\` has every instance write a V8 CPU profile of its whole run (both phases) into \`<dir>/<setup>/\`.`,
    ],
    tables: [
      {
        header: [
          'Setup',
          'Phase',
          'Requests',
          'Req/s',
          'p50 (ms)',
          'p90 (ms)',
          'p99 (ms)',
          'Max (ms)',
          'Failures',
        ],
        rows,
        numeric: [false, false, true, true, true, true, true, true, true],
      },
      {
        header: ['Requests/s ratio', 'Availability', 'Bookings'],
        rows: [
          [
            'PostgreSQL, 2 instances / 1 instance',
            ratio(postgresTwo, postgresOne, 'availability'),
            ratio(postgresTwo, postgresOne, 'bookings'),
          ],
          [
            'PostgreSQL, 1 instance / SQLite',
            ratio(postgresOne, sqlite, 'availability'),
            ratio(postgresOne, sqlite, 'bookings'),
          ],
        ],
        numeric: [false, true, true],
      },
      ...(cpuRows.length > 0
        ? [
            {
              header: [
                'Setup',
                'Phase',
                'CPU: machine (cores busy)',
                'Load generator',
                'Instances',
                'PostgreSQL',
                'Other',
                'Stolen',
                'Instances + PostgreSQL, CPU ms per request',
              ],
              rows: cpuRows,
              numeric: [false, false, true, true, true, true, true, true, true],
            },
          ]
        : []),
    ],
    facts,
    targets,
  };
}

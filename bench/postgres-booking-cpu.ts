import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { MAX_KEY_RATE_LIMIT } from '../src/app/api-key-service.ts';
import { timeOrderedId } from '../src/app/time-ordered-id.ts';
import { runCli, startServer } from '../test/helpers/cli.ts';
import { postgresReachable, withAdminConnection } from '../test/helpers/postgres-test-server.ts';
import {
  allowEveryCore,
  type BenchDatabase,
  dropAbandonedDatabases,
  foreignBackends,
  freshDatabase,
  integrityOf,
  scenarioIds,
  stopServer,
  succeeded,
} from './instances.ts';
import type { BenchContext, Benchmark, ScenarioBenchmarkResult } from './lib/benchmark.ts';
import {
  BOOKINGS_SCENARIO,
  bookingSlot,
  bookingsCatalogue,
  SERVICE_MS,
  SERVICE_PRICE_MINOR,
} from './lib/bookings-database.ts';
import { type ClosedLoopReport, runClosedLoop } from './lib/closed-loop.ts';
import { type CpuUse, cpuSnapshot, cpuUseBetween } from './lib/cpu-use.ts';
import { formatMs } from './lib/timing.ts';

/** Enough to keep the instance busy; the same number of raw writers. */
const CONNECTIONS = 16;
/**
 * Untimed, before each phase: JIT, the pool filling, named statements prepared, PostgreSQL's caches.
 * Some 3,000 bookings: after 2 s the server still cost 2.3-2.4 ms of CPU per booking over the next
 * 10 s, after 10 s 1.6-1.9 ms (V8 optimises the path, on threads counted as the server's); a server
 * booking all day runs optimised (docs/decisions/benchmarks-one-process-each.md).
 */
const WARM_UP_S = 10;
/**
 * After the warm-up each side's database is analysed, as autovacuum would have done by then on any
 * server that runs it (the test server does not), and each side writes this long again before it is
 * measured, so that every connection has planned its statements anew with those statistics. Without
 * them, plans made on tables never analysed stay for the connection's life: the raw side's
 * foreign-key checks read about 7,000 bookings per booking through (organisation_id, reference), and
 * cost PostgreSQL 3 ms per booking instead of 1.5.
 */
const REPLAN_S = 3;
const REQUEST_TIMEOUT_MS = 10_000;
/** Issue 47: the CPU of one booking with an Idempotency-Key, the instance and PostgreSQL together. */
const TARGET_MS = 2.5;
/** Indexes of this benchmark's databases in booking_bench_<pid>_<index> (instances uses 0-2). */
const FULL_INDEX = 10;
const RAW_INDEX = 11;

interface Phase {
  loop: ClosedLoopReport | null;
  /** Bookings made in the measured phase. */
  bookings: number;
  cpu: CpuUse;
  /** CPU ms per booking: the writer (the instance, or the raw client) and PostgreSQL. */
  writerMs: number;
  postgresMs: number;
  /** Of postgresMs, the client backends of this database (the rest: the server's shared processes). */
  backendsMs: number;
  /** Per booking, from pg_stat_database over the phase. */
  commits: number;
  rowsInserted: number;
  rowsRead: number;
}

/**
 * Issue 47, cost per request: the CPU time of one `POST /v1/bookings` with an Idempotency-Key through
 * `booking serve` on PostgreSQL, the server process and the database's backends apart and together,
 * against raw node-postgres writes of the same rows with the same durability in the same run.
 */
export const postgresBookingCpu: Benchmark = {
  id: 'postgres-booking-cpu',
  async run(context) {
    if (!(await postgresReachable())) throw new Error('PostgreSQL does not answer (TEST_POSTGRES_URL).');
    await dropAbandonedDatabases(context);
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-pg-cpu-'));
    const databases: BenchDatabase[] = [];
    try {
      const catalogueFile = path.join(dir, 'catalogue.json');
      writeFileSync(catalogueFile, JSON.stringify(bookingsCatalogue()));
      const full = await freshDatabase({ dialect: 'postgres' }, FULL_INDEX, dir);
      databases.push(full);
      const raw = await freshDatabase({ dialect: 'postgres' }, RAW_INDEX, dir);
      databases.push(raw);
      for (const database of [full, raw]) {
        context.progress(`importing the bookings scenario into ${database.description}`);
        succeeded(runCli(['import', catalogueFile], { DATABASE_URL: database.url }), 'import');
      }
      const fullPhase = await measureFullStack(full, context);
      const rawPhase = await measureRaw(raw, context);
      const integrity = await integrityOf(full.url);
      return present(fullPhase, rawPhase, integrity, context.durationS);
    } finally {
      for (const database of databases) {
        await database.drop().catch((error: unknown) => context.progress(`could not drop: ${error}`));
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function measureFullStack(database: BenchDatabase, context: BenchContext): Promise<Phase> {
  const env = { DATABASE_URL: database.url, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  const keyArgs = ['keys', 'create', '--org', BOOKINGS_SCENARIO.organisation, '--label', 'cpu'];
  const { key } = JSON.parse(
    succeeded(
      runCli(
        [...keyArgs, '--scope', 'read_write', '--rate-limit', String(MAX_KEY_RATE_LIMIT), '--json'],
        env,
      ),
      'keys create',
    ),
  ) as { key: string };
  const profile = context.cpuProfileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(context.cpuProfileDir)}`]
    : [];
  const server = await startServer(['--port', '0'], env, profile);
  try {
    allowEveryCore(server);
    const ids = await scenarioIds(server.url, key);
    let booked = 0;
    const loop = {
      origins: [server.url],
      connections: CONNECTIONS,
      headers: { authorization: `Bearer ${key}` },
      expectedStatus: 201,
      timeoutMs: REQUEST_TIMEOUT_MS,
      next: () => {
        const n = booked++;
        const slot = bookingSlot(n);
        return {
          method: 'POST' as const,
          path: '/v1/bookings',
          headers: { 'idempotency-key': `cpu-${process.pid}-${n}` },
          body: {
            location_slug: BOOKINGS_SCENARIO.location,
            service_ids: [ids.serviceId],
            staff_id: ids.staffIds[slot.staff],
            client_id: ids.clientId,
            starts_at: slot.startsAtIso,
          },
        };
      },
    };
    context.progress(`POST /v1/bookings with an Idempotency-Key: warm-up ${WARM_UP_S} s`);
    const warmUp = await runClosedLoop({ ...loop, durationMs: WARM_UP_S * 1000 });
    if (warmUp.failures > 0) throw new Error(`warm-up failed: ${warmUp.firstFailure}`);
    await analyse(database);
    const replanned = await runClosedLoop({ ...loop, durationMs: REPLAN_S * 1000 });
    if (replanned.failures > 0) throw new Error(`after ANALYZE: ${replanned.firstFailure}`);
    context.progress(`POST /v1/bookings: ${CONNECTIONS} connections for ${context.durationS} s`);
    const phase = await measured(database, [server.process.pid!], async () => {
      const report = await runClosedLoop({ ...loop, durationMs: context.durationS * 1000 });
      return { loop: report, bookings: report.succeeded };
    });
    if (phase.loop && phase.loop.failures > 0) throw new Error(`bookings failed: ${phase.loop.firstFailure}`);
    return phase;
  } catch (error) {
    throw new Error(`${error}; the server said: ${server.stderr().slice(-2000)}`, { cause: error });
  } finally {
    await stopServer(server);
  }
}

/**
 * The raw side: what a booking with an Idempotency-Key writes (the bookings row, its segment, its first
 * event, its page's token, its confirmation and reminder in the outbox, the idempotency record with a
 * response body of a 201's size), straight through node-postgres in this process, one transaction per
 * booking (BEGIN, seven named INSERTs, COMMIT; synchronous_commit as the server has it, on), over as
 * many connections as the full stack's clients. No HTTP, no Kysely, no reads, no locks.
 */
async function measureRaw(database: BenchDatabase, context: BenchContext): Promise<Phase> {
  const pool = new pg.Pool({ connectionString: database.url, max: CONNECTIONS });
  try {
    const ids = (
      await pool.query<{ org: string; location: string; service: string; client: string }>(
        `SELECT (SELECT id FROM organisations) AS org, (SELECT id FROM locations) AS location,
                (SELECT id FROM services) AS service, (SELECT id FROM clients LIMIT 1) AS client`,
      )
    ).rows[0]!;
    const staff = (await pool.query<{ id: string }>('SELECT id FROM staff ORDER BY name')).rows.map(
      (r) => r.id,
    );
    const now = Date.now();
    const responseBody = JSON.stringify({ data: { filler: 'x'.repeat(900) } });
    let next = 0;
    const book = async (client: pg.PoolClient) => {
      const n = next++;
      const slot = bookingSlot(n);
      const id = timeOrderedId();
      const endsAt = slot.startsAt + SERVICE_MS;
      await client.query('BEGIN');
      try {
        await client.query({
          name: 'raw-booking',
          text: `INSERT INTO bookings (id, organisation_id, reference, location_id, staff_id, client_id, status,
             starts_at, ends_at, blocked_until, currency, total_price_minor, deposit_minor, deposit_status,
             protection_applies, payment_method_saved, source, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'confirmed', $7, $8, $8, 'GBP', $9, NULL, 'not_required', 0, 0,
             'api', $10, $10)`,
          values: [
            id,
            ids.org,
            `RAW-${n}`,
            ids.location,
            staff[slot.staff],
            ids.client,
            slot.startsAt,
            endsAt,
            SERVICE_PRICE_MINOR,
            now,
          ],
        });
        await client.query({
          name: 'raw-segment',
          text: `INSERT INTO booking_services (organisation_id, booking_id, position, service_id, starts_at, ends_at,
             duration_minutes, buffer_after_minutes, price_minor, deposit_minor)
           VALUES ($1, $2, 0, $3, $4, $5, 15, 0, $6, NULL)`,
          values: [ids.org, id, ids.service, slot.startsAt, endsAt, SERVICE_PRICE_MINOR],
        });
        await client.query({
          name: 'raw-event',
          text: `INSERT INTO booking_events (organisation_id, booking_id, seq, from_status, to_status, actor,
             occurred_at, details) VALUES ($1, $2, 1, NULL, 'confirmed', 'api_key:raw', $3, NULL)`,
          values: [ids.org, id, now],
        });
        await client.query({
          name: 'raw-page',
          text: 'INSERT INTO booking_pages (token, organisation_id, booking_id, created_at) VALUES ($1, $2, $3, $4)',
          values: [`page-${id}`, ids.org, id, now],
        });
        for (const kind of ['confirmed', 'reminder']) {
          await client.query({
            name: 'raw-outbox',
            text: `INSERT INTO outbox (id, organisation_id, booking_id, reference, channel, recipient, kind, status,
               attempts, due_at, created_at) VALUES ($1, $2, $3, $4, 'sms', '+447911123457', $5, 'pending', 0, $6, $6)`,
            values: [timeOrderedId(), ids.org, id, `RAW-${n}`, kind, now],
          });
        }
        await client.query({
          name: 'raw-idempotency',
          text: `INSERT INTO idempotency_records (organisation_id, idempotency_key, fingerprint, status_code,
             response_body, created_at, expires_at) VALUES ($1, $2, $3, 201, $4, $5, $6)`,
          values: [ids.org, `raw-${n}`, 'f'.repeat(64), responseBody, now, now + 86_400_000],
        });
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    };
    const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.connect()));
    try {
      const writeFor = async (ms: number) => {
        const deadline = performance.now() + ms;
        let written = 0;
        await Promise.all(
          clients.map(async (client) => {
            while (performance.now() < deadline) {
              await book(client);
              written += 1;
            }
          }),
        );
        return written;
      };
      context.progress(`raw node-postgres writes of the same rows: warm-up ${WARM_UP_S} s`);
      await writeFor(WARM_UP_S * 1000);
      await analyse(database);
      await writeFor(REPLAN_S * 1000);
      context.progress(`raw writes, ${CONNECTIONS} connections for ${context.durationS} s`);
      const start = process.cpuUsage();
      const phase = await measured(database, [], async () => ({
        loop: null,
        bookings: await writeFor(context.durationS * 1000),
      }));
      const used = process.cpuUsage(start);
      // The writer is this process: its CPU over the phase (nothing else runs in it meanwhile).
      return { ...phase, writerMs: (used.user + used.system) / 1000 / Math.max(1, phase.bookings) };
    } finally {
      for (const client of clients) client.release();
    }
  } finally {
    await pool.end();
  }
}

/** Gathers the planner's statistics of every table of the database (see REPLAN_S). */
async function analyse(database: BenchDatabase): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

/** The client backends connected to this database now. */
async function backendsOf(database: string): Promise<Set<number>> {
  return withAdminConnection(async (client) => {
    const result = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND datname = $1`,
      [database],
    );
    return new Set(result.rows.map((row) => row.pid));
  });
}

/** Runs a phase between two CPU snapshots and two readings of the database's statistics. */
async function measured(
  database: BenchDatabase,
  writerPids: number[],
  work: () => Promise<{ loop: ClosedLoopReport | null; bookings: number }>,
): Promise<Phase> {
  const name = database.name!;
  const stats = () =>
    withAdminConnection(async (client) => {
      // The statistics are sent to shared memory at the end of a transaction, at most once a second.
      await client.query('SELECT pg_stat_clear_snapshot()');
      const row = (
        await client.query<{ c: string; i: string; r: string }>(
          'SELECT xact_commit AS c, tup_inserted AS i, tup_fetched AS r FROM pg_stat_database WHERE datname = $1',
          [name],
        )
      ).rows[0]!;
      return { commits: Number(row.c), inserted: Number(row.i), read: Number(row.r) };
    });
  const statsBefore = await stats();
  const oursBefore = await backendsOf(name);
  const before = cpuSnapshot();
  const outcome = await work();
  const after = cpuSnapshot();
  // Counters reach pg_stat_database when a backend is idle for a while (stats_flush): wait for it.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const statsAfter = await stats();
  if (!before || !after) throw new Error('No /proc: this benchmark measures CPU time from /proc.');
  const foreign = await foreignBackends(name);
  const ours = new Set([...oursBefore, ...(await backendsOf(name))]);
  const writers = new Set(writerPids);
  const cpu = cpuUseBetween(before, after, {
    writer: (pid) => writers.has(pid),
    postgres: (pid, comm) => comm === 'postgres' && !foreign.has(pid),
    backends: (pid) => ours.has(pid),
  });
  const perBooking = (cores: number) => (cores * cpu.seconds * 1000) / Math.max(1, outcome.bookings);
  const per = (n: number) => n / Math.max(1, outcome.bookings);
  return {
    ...outcome,
    cpu,
    writerMs: perBooking(cpu.groups.writer ?? 0),
    postgresMs: perBooking(cpu.groups.postgres ?? 0),
    backendsMs: perBooking(cpu.groups.backends ?? 0),
    commits: per(statsAfter.commits - statsBefore.commits),
    rowsInserted: per(statsAfter.inserted - statsBefore.inserted),
    rowsRead: per(statsAfter.read - statsBefore.read),
  };
}

function present(
  full: Phase,
  raw: Phase,
  integrity: Awaited<ReturnType<typeof integrityOf>>,
  durationS: number,
): ScenarioBenchmarkResult {
  const total = (p: Phase) => p.writerMs + p.postgresMs;
  const row = (label: string, p: Phase) => [
    label,
    p.bookings.toLocaleString('en-GB'),
    Math.round(p.bookings / p.cpu.seconds).toLocaleString('en-GB'),
    formatMs(p.writerMs),
    formatMs(p.postgresMs),
    formatMs(p.backendsMs),
    formatMs(total(p)),
    p.commits.toFixed(2),
    p.rowsInserted.toFixed(1),
    p.rowsRead.toFixed(1),
  ];
  const doubles = integrity.findings.find((f) => f.check === 'no_double_booking')?.violations ?? -1;
  const other = Math.max(
    0,
    full.cpu.machineBusy - (full.cpu.groups.writer ?? 0) - (full.cpu.groups.postgres ?? 0),
  );
  return {
    kind: 'scenario',
    subject: `CPU per booking on PostgreSQL, POST /v1/bookings with an Idempotency-Key (${CONNECTIONS} connections, ${durationS} s)`,
    method: [
      `Full stack: one \`booking serve\` (NODE_ENV=production, LOG_LEVEL=warn, the default pool of 10 connections) on a fresh PostgreSQL database holding the bookings scenario (\`booking import\`, \`bench/lib/bookings-database.ts\`) and a read_write key at the highest rate limit. ${CONNECTIONS} keep-alive connections from the runner book one distinct free slot each (\`bookingSlot(i)\`), each request with an Idempotency-Key of its own, in a closed loop for ${durationS} s after a ${WARM_UP_S}-s warm-up, an ANALYZE of the database (as autovacuum would have made by then; the test server runs without it) and ${REPLAN_S} s more, so every statement is planned with statistics; every answer must be 201. Its CPU is the server process's (utime + stime from /proc, its outbox worker delivering the confirmations included) and PostgreSQL's (every \`postgres\` process but the client backends of other databases: this database's backends and the server's own background processes), over the measured phase, divided by the bookings made in it.`,
      `Raw: the same rows a booking with an Idempotency-Key writes (bookings, booking_services, booking_events, booking_pages, two outbox messages, idempotency_records with a 1 kB response), into a second database built the same way, straight through node-postgres from the runner: one transaction per booking (BEGIN, seven named INSERTs, COMMIT, synchronous_commit on as for the server), over ${CONNECTIONS} connections for ${durationS} s, after the same warm-up, ANALYZE and ${REPLAN_S} s more. Its writer CPU is the runner's (process.cpuUsage over the phase). Commits, rows inserted and rows read per booking come from pg_stat_database.`,
    ],
    tables: [
      {
        header: [
          'Side',
          'Bookings',
          'Bookings/s',
          'Writer CPU ms/booking',
          'PostgreSQL CPU ms/booking',
          'of which its backends',
          'Together ms/booking',
          'Commits/booking',
          'Rows inserted/booking',
          'Rows read/booking',
        ],
        rows: [row('`booking serve`, POST /v1/bookings', full), row('Raw node-postgres INSERTs', raw)],
        numeric: [false, true, true, true, true, true, true, true, true, true],
      },
    ],
    facts: [
      `Full stack / raw, CPU together per booking: ${(total(full) / total(raw)).toFixed(2)}; PostgreSQL's share alone: ${(full.postgresMs / raw.postgresMs).toFixed(2)}.`,
      `The machine during the full stack's phase: ${full.cpu.machineBusy.toFixed(2)} of ${full.cpu.cores} cores busy, ${other.toFixed(2)} of them neither the server nor PostgreSQL (the load generator, other work), ${full.cpu.stolen.toFixed(2)} stolen.`,
      full.loop
        ? `Full stack latency: p50 ${formatMs(full.loop.latency.p50)} ms, p99 ${formatMs(full.loop.latency.p99)} ms.`
        : '',
    ].filter(Boolean),
    targets: [
      {
        description: `Server + PostgreSQL CPU per booking (POST /v1/bookings with an Idempotency-Key) ≤ ${TARGET_MS} ms`,
        measured: `${formatMs(total(full))} ms (server ${formatMs(full.writerMs)}, PostgreSQL ${formatMs(full.postgresMs)}; raw INSERTs ${formatMs(total(raw))})`,
        pass: total(full) <= TARGET_MS,
      },
      {
        description: 'Every answer 201, no double booking, every checkIntegrity invariant holds',
        measured: `${full.loop?.failures ?? 0} failed, ${doubles} overlapping pairs${integrity.ok ? '' : ', integrity broken'}`,
        pass: (full.loop?.failures ?? 1) === 0 && doubles === 0 && integrity.ok,
      },
    ],
  };
}

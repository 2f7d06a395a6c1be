import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { RawResult } from 'autocannon';
import { canTraceSyncs, countSyncs, type Syncs, sqliteSyncs } from '../test/helpers/disk-syncs.ts';
import type { BookingsStackInfo } from './bookings-endpoint-server.ts';
import type { RawInfo, RawRun, RawRunResult } from './bookings-raw-server.ts';
import type { Benchmark, ThroughputRow } from './lib/benchmark.ts';
import { BOOKINGS_SCENARIO, bookingSlot, SLOTS_PER_DAY } from './lib/bookings-database.ts';
import { LATENCY_ROUNDS, ROUNDS, WARM_UP_S } from './lib/compare.ts';
import { sendJson } from './lib/http-request.ts';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './lib/load.ts';
import { runPacedLoad } from './lib/paced-load.ts';
import { type ServerProcess, startServerProcess } from './lib/server-process.ts';
import { loadRow, medianRow, timesRow } from './lib/throughput-rows.ts';

const FULL_STACK_SERVER = new URL('./bookings-endpoint-server.ts', import.meta.url);
const RAW_SERVER = new URL('./bookings-raw-server.ts', import.meta.url);
const PATH = '/v1/bookings';
/** Issue 47's load: 50 connections, each booking with an Idempotency-Key of its own. */
const CONNECTIONS = 50;
/** The issue's target: sustained POST /bookings at least half the raw insert rate. */
const MIN_RATIO = 0.5;
/** Bookings made one after another over one connection, each waiting for the last's 201. */
const ONE_AT_A_TIME = 300;
/**
 * Bookings one at a time before those timed. The saturation warm-up trains V8 on groups of bookings
 * sharing a transaction; a lone booking takes other branches, and its code reaches its optimised
 * tier only after about a thousand of them (server CPU per booking falls from about 2 ms to 0.9
 * over the first 1,500): a server taking calls all day runs warm, so that is what is timed.
 */
const ONE_AT_A_TIME_WARM_UP = 1_500;
/** Issue 47's targets for one booking at a time: its p50, and disk syncs per booking. */
const ONE_AT_A_TIME_P50_MS = 2;
const SYNCS_PER_BOOKING = 1;
/** Bookings one at a time whose disk syncs are counted. */
const TRACED = 100;
/**
 * Saturation rounds per side. The disk's sync time varies from second to second on a shared machine
 * (it is most of a raw insert), so short alternating rounds spread it over both sides.
 */
const SATURATION_ROUNDS = 5;
/** The fixed-rate phase offers this share of the full stack's rate at saturation. */
const LATENCY_SHARE = 0.5;

/**
 * The issue's write benchmark: sustained POST /v1/bookings, every request for a different free slot
 * (staff and start), through the whole stack, against the same booking rows inserted with raw
 * better-sqlite3 into a database of the same schema with the same pragmas, in the same run. Target:
 * at least half the raw rate, and every response 201.
 */
export const bookingsEndpoint: Benchmark = {
  id: 'bookings-endpoint',
  async run(context) {
    context.progress('seeding two booking databases, starting the full stack and the raw writer…');
    const server = await startServerProcess<BookingsStackInfo>(FULL_STACK_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
      serveSettings: true,
    });
    let raw: ServerProcess<RawInfo> | undefined;
    try {
      raw = await startServerProcess<RawInfo>(RAW_SERVER, null);
      return await measure(server.info, server.pid, raw.info.origin, context);
    } finally {
      await raw?.stop();
      await server.stop();
    }
  },
};

async function measure(
  info: BookingsStackInfo,
  serverPid: number,
  rawOrigin: string,
  context: Parameters<Benchmark['run']>[0],
): Promise<Awaited<ReturnType<Benchmark['run']>>> {
  const { durationS, progress } = context;
  const feed = new SlotFeed(info);
  const target: LoadTarget = {
    url: `${info.origin}${PATH}`,
    method: 'POST',
    headers: { authorization: `Bearer ${info.writeKey}`, 'content-type': 'application/json' },
    body: () => feed.nextBody(),
    requestHeaders: () => ({ 'idempotency-key': randomUUID() }),
    onStatus: (status) => feed.record(status),
  };
  const rawRun = (spec: RawRun) => runRaw(rawOrigin, spec);

  await bookOnce(target, feed);

  progress(`warming up the full stack at saturation (${WARM_UP_S} s), then the raw writer as far…`);
  const warmFrom = feed.created;
  const warmUp = await runLoad(target, { connections: CONNECTIONS, durationS: WARM_UP_S });
  feed.assertNoConflict();
  // The raw side writes as many bookings (the one checked above included): both tables stay the same size.
  await rawRun({ count: feed.created - warmFrom + 1 });

  progress(`${ONE_AT_A_TIME_WARM_UP} bookings one at a time to warm that path, and as many raw inserts…`);
  await bookOneAtATime(target, feed, ONE_AT_A_TIME_WARM_UP);
  await rawRun({ count: ONE_AT_A_TIME_WARM_UP });
  progress(`${ONE_AT_A_TIME} bookings one at a time, then as many raw inserts…`);
  const oneAtATime = await bookOneAtATime(target, feed, ONE_AT_A_TIME);
  const rawOneAtATime = await rawRun({ count: ONE_AT_A_TIME });
  // Counted in a pass of their own: strace stops the server at every system call it makes, which
  // would be the time measured.
  let syncs: Syncs | null = null;
  if (canTraceSyncs) {
    progress(`${TRACED} more one at a time, their disk syncs counted with strace…`);
    const tracing = await countSyncs(serverPid);
    await bookOneAtATime(target, feed, TRACED);
    syncs = await tracing.stop();
  }
  const oneRow = timesRow('Full stack, one at a time (one connection)', oneAtATime.times, oneAtATime.seconds);
  const rawOneRow = rawRow('Raw inserts, one at a time', [rawOneAtATime]);

  // A booking may cost more as the table grows (see the method below), so the sides are compared at
  // the same table sizes: each round, the full stack books for roundS seconds, then the raw writer
  // writes as many bookings.
  const roundS = durationS / SATURATION_ROUNDS;
  const latencyRoundS = durationS / ROUNDS;
  const fullRounds: LoadStats[] = [];
  const fullRaw: RawResult[] = [];
  const rawRounds: RawRunResult[] = [];
  for (let round = 1; round <= SATURATION_ROUNDS; round += 1) {
    progress(
      `round ${round}/${SATURATION_ROUNDS}: full stack at saturation ${roundS} s, then as many raw inserts…`,
    );
    const from = feed.created;
    const result = await runLoad(target, { connections: CONNECTIONS, durationS: roundS });
    feed.assertNoConflict();
    fullRaw.push(result);
    fullRounds.push(summarise(target, [result]));
    rawRounds.push(await rawRun({ count: feed.created - from }));
  }
  const full = summarise(target, fullRaw);
  const rawAll = rawRow('Raw inserts, saturation (one after another)', rawRounds);
  const ratio = full.requestsPerSecond / rawAll.perSecond;

  const rate = Math.max(10, Math.round((LATENCY_SHARE * full.requestsPerSecond) / 10) * 10);
  const fullAtRate: LoadStats[] = [];
  const rawAtRate: RawRunResult[] = [];
  for (let round = 1; round <= LATENCY_ROUNDS; round += 1) {
    progress(`latency at ${rate} bookings/s, round ${round}/${LATENCY_ROUNDS}: raw, then full stack…`);
    rawAtRate.push(await rawRun({ rate, seconds: latencyRoundS }));
    const paced = await runPacedLoad(target, { connections: CONNECTIONS, durationS: latencyRoundS, rate });
    feed.assertNoConflict();
    fullAtRate.push(paced);
  }

  const sizes = rawRounds.map(
    (r) => `${r.bookingsBefore.toLocaleString('en-GB')} → ${r.bookingsAfter.toLocaleString('en-GB')}`,
  );
  const roundRatios = fullRounds.map((f, i) => f.requestsPerSecond / perSecond(rawRounds[i]!));
  const last = rawAtRate[rawAtRate.length - 1]!;
  const failures = feed.failures();
  const errors =
    warmUp.errors + warmUp.timeouts + [...fullRounds, ...fullAtRate].reduce((n, s) => n + s.errors, 0);
  const days = Math.ceil(feed.handedOut / SLOTS_PER_DAY);
  const { staff, dayStart, dayEnd, timezone, firstDate, now } = BOOKINGS_SCENARIO;

  return {
    kind: 'throughput',
    subject: `POST ${PATH}`,
    method: [
      `Full stack: the real app (\`buildApp\` with the production dependencies of \`src/runtime.ts\`, but a clock fixed at ${now}, a week before the first slot; rate-limit counters in their file beside the database, default limits; no logger) on a migrated SQLite file (\`bench/lib/bookings-database.ts\`): one location (${timezone}, 15-minute grid, no notice, ${BOOKINGS_SCENARIO.maxAdvanceDays} days ahead), one 15-minute service without buffer or deposit, ${staff} staff working ${clockOf(dayStart)}–${clockOf(dayEnd)} every day, one client, no bookings at the start. autocannon drives it over ${CONNECTIONS} keep-alive connections; every request books the next slot of one fixed sequence (from ${firstDate}, day by day, time by time, staff by staff: ${feed.handedOut.toLocaleString('en-GB')} slots over ${days} days handed out in this run), naming its staff member and its start with the offset, so each is a distinct free slot and must be answered 201. Each request is checked against the HTTPS rule, authenticates a read_write key with one SQLite query, is rate-limited (the key's limit is far above the load), has its JSON body validated by zod, and then, inside the write transaction (each with an Idempotency-Key of its own, looked up and stored for replay in the same transaction), reads the location, the client and the services, re-checks the slot with the availability engine (the staff member's eligibility, working hours, time off, closures and the bookings that could overlap the new one), picks an unused reference, inserts the bookings row (its id time-ordered), its booking_services segment, its booking_events entry and the token row of its booking page, and, once the transaction has committed, serialises the 201 response (built from what was written, not read back). Writes go through the group commit of \`src/data/write-transaction.ts\`: the requests that reach the writer in the same turn of the event loop run one after another in one BEGIN IMMEDIATE transaction, each in a savepoint of its own (a failing one rolls back alone), and share its COMMIT, so one disk sync serves the group; none is answered before that COMMIT has returned.`,
      `Raw inserts: a second child process, also pinned to core 0, writes the rows a booking is made of (the bookings row with an id made the same way, its segment and its first event; not the booking page's token row, so it does a little less) for the same slot sequence into its own database, built the same way (the project's migrations, so the same indexes, constraints and triggers; the same catalogue, so the same foreign keys) and opened with the project's own pragmas (\`configureSqlite\`: WAL, synchronous=FULL, foreign_keys=ON, busy_timeout=5000): per booking one BEGIN IMMEDIATE; INSERT bookings; INSERT booking_services; INSERT booking_events; COMMIT, through prepared better-sqlite3 statements, one booking after another. Its times are per booking, BEGIN to COMMIT returned, in fractions of a millisecond; the full stack's at saturation are autocannon's, in whole milliseconds and including the queue of ${CONNECTIONS} connections behind one writer. On both sides every COMMIT syncs the WAL to disk (synchronous=FULL).`,
      `One at a time: after the warm-up and ${ONE_AT_A_TIME_WARM_UP.toLocaleString('en-GB')} more bookings one at a time (untimed, and as many raw inserts: V8 optimises a lone booking's path apart from a group's), ${ONE_AT_A_TIME} bookings are made one after another over one keep-alive connection (node:http), each timed from its request to its 201; then the raw writer inserts as many, one after another; then ${TRACED} more one at a time while strace counts the server's fsync and fdatasync calls (every thread; a pass of their own, as strace stops the server at every system call).`,
      `On both sides the overlap trigger \`bookings_no_overlap_insert\` searches the staff member's bookings that start less than a day before the new one (no booking spans longer), so a booking may still cost a little more as the table and its indexes grow. The sides are therefore compared at equal table sizes rather than over equal times: after a ${WARM_UP_S}-second warm-up of the full stack at saturation (and as many raw inserts), each of ${SATURATION_ROUNDS} rounds lets the full stack book for ${roundS} s at saturation and then has the raw writer insert as many bookings (table sizes and ratios per round below). Writes/s is bookings over measuring time; the saturation ratio is over all rounds. Then the sides alternate in ${LATENCY_ROUNDS} rounds of ${latencyRoundS} s at a fixed ${rate} bookings/s, ${Math.round(LATENCY_SHARE * 100)}% of the full stack's saturated rate (raw first, paced in process, timed from when each booking was due; full stack through the open-loop generator of \`bench/lib/paced-load.ts\` over the same ${CONNECTIONS} connections); each percentile there is the median over the rounds. The tables end at ${last.bookingsAfter.toLocaleString('en-GB')} bookings.`,
    ],
    rows: [
      oneRow,
      rawOneRow,
      loadRow(`Full stack, saturation (${CONNECTIONS} connections)`, full),
      rawAll,
      medianRow(
        `Full stack at ${rate}/s`,
        fullAtRate.map((s) => loadRow('', s)),
      ),
      medianRow(
        `Raw inserts at ${rate}/s`,
        rawAtRate.map((r) => rawRow('', [r])),
      ),
    ],
    ratios: [
      { label: 'POST / raw inserts, saturation', value: ratio.toFixed(2) },
      {
        label: 'One at a time: raw p50 / POST p50',
        value: (rawOneRow.p50 / oneRow.p50).toFixed(2),
      },
      {
        label: 'Per round (bookings in the table: POST / raw, full stack and raw bookings/s)',
        value: fullRounds
          .map(
            (f, i) =>
              `${sizes[i]}: ${roundRatios[i]!.toFixed(2)} (${rounded(f.requestsPerSecond)} and ${rounded(perSecond(rawRounds[i]!))})`,
          )
          .join('; '),
      },
    ],
    targets: [
      {
        description: `One booking at a time: p50 < ${ONE_AT_A_TIME_P50_MS} ms`,
        measured: `${oneRow.p50.toFixed(2)} ms (raw inserts ${rawOneRow.p50.toFixed(2)} ms)`,
        pass: oneRow.p50 < ONE_AT_A_TIME_P50_MS,
      },
      ...(syncs === null ? [] : [syncTarget(syncs)]),
      {
        description: `Sustained POST ${PATH} ≥ ${MIN_RATIO} × raw insert rate (saturation, same table sizes)`,
        measured: `${ratio.toFixed(2)} (${Math.round(full.requestsPerSecond)} against ${Math.round(rawAll.perSecond)} bookings/s)`,
        pass: ratio >= MIN_RATIO,
      },
      {
        description: 'Every response 201 (each request for a distinct free slot), no socket errors',
        measured: `${feed.created.toLocaleString('en-GB')} × 201, ${failures.count} other${failures.detail}, ${errors} errors`,
        pass: failures.count === 0 && errors === 0,
      },
    ],
  };
}

/**
 * Hands out the slot sequence of bookingSlot, one request body each, in order, and counts the answers.
 * A body built but not sent (autocannon builds one ahead per connection) leaves its slot unbooked,
 * which no later request asks for: no slot is ever requested twice.
 */
class SlotFeed {
  readonly #info: BookingsStackInfo;
  #next = 0;
  readonly #statuses = new Map<number, number>();
  /** 201 responses so far. */
  created = 0;

  constructor(info: BookingsStackInfo) {
    this.#info = info;
  }

  get handedOut(): number {
    return this.#next;
  }

  /** The next slot's request body, as a client that read availability would send it. */
  nextBody(): string {
    const slot = bookingSlot(this.#next);
    this.#next += 1;
    return JSON.stringify({
      location_slug: BOOKINGS_SCENARIO.location,
      service_ids: [this.#info.serviceId],
      staff_id: this.#info.staffIds[slot.staff],
      client_id: this.#info.clientId,
      starts_at: slot.startsAtIso,
    });
  }

  record(status: number): void {
    if (status === 201) this.created += 1;
    else this.#statuses.set(status, (this.#statuses.get(status) ?? 0) + 1);
  }

  failures(): { count: number; detail: string } {
    const entries = [...this.#statuses].sort(([a], [b]) => a - b);
    const count = entries.reduce((n, [, c]) => n + c, 0);
    return { count, detail: count === 0 ? '' : ` (${entries.map(([s, c]) => `${c} × ${s}`).join(', ')})` };
  }

  /**
   * Stops the run on any 409: every slot requested is free, so a conflict means the slot sequence or
   * the scenario is wrong and the figures would measure refusals.
   */
  assertNoConflict(): void {
    const conflicts = this.#statuses.get(409) ?? 0;
    if (conflicts > 0) {
      throw new Error(
        `${conflicts} bookings answered 409 conflict: the slot sequence is not all free slots.`,
      );
    }
  }
}

/** One booking through fetch before any load, checked to be the slot asked for, confirmed. */
async function bookOnce(target: LoadTarget, feed: SlotFeed): Promise<void> {
  const body = feed.nextBody();
  const headers = { ...target.headers, ...target.requestHeaders?.() };
  const response = await fetch(target.url, { method: 'POST', headers, body });
  const text = await response.text();
  feed.record(response.status);
  if (response.status !== 201)
    throw new Error(`POST ${PATH} answered ${response.status}: ${text.slice(0, 300)}`);
  const asked = JSON.parse(body) as { staff_id: string; starts_at: string };
  const booked = (JSON.parse(text) as { data?: { staff_id?: string; starts_at?: string; status?: string } })
    .data;
  if (
    booked?.staff_id !== asked.staff_id ||
    Date.parse(booked.starts_at ?? '') !== Date.parse(asked.starts_at) ||
    booked.status !== 'confirmed'
  ) {
    throw new Error(`The first booking is not the confirmed slot asked for: ${text.slice(0, 300)}`);
  }
}

/** Disk syncs per booking, checkpoints apart (sqliteSyncs). */
function syncTarget(syncs: Syncs) {
  const { commits, checkpoints, other } = sqliteSyncs(syncs);
  return {
    description: `One booking at a time: at most ${SYNCS_PER_BOOKING} disk sync per booking, checkpoints aside (strace)`,
    measured: `${(commits / TRACED).toFixed(2)} (${syncs.total} fsync/fdatasync for ${TRACED} bookings: ${commits} commits of the WAL, ${checkpoints} checkpoints with their 3 syncs each, ${other} other)`,
    pass: commits / TRACED <= SYNCS_PER_BOOKING,
  };
}

/** `count` bookings one after another over one keep-alive connection, each timed to its 201. */
async function bookOneAtATime(
  target: LoadTarget,
  feed: SlotFeed,
  count: number,
): Promise<{ times: number[]; seconds: number }> {
  const times: number[] = [];
  // node:http, as the load generators: fetch's own work (WHATWG streams, Headers and Response
  // objects) is the client's, not the server's, and was added to every round trip timed.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const start = performance.now();
    for (let i = 0; i < count; i += 1) {
      const headers = { ...target.headers, ...target.requestHeaders?.() };
      const body: unknown = JSON.parse(feed.nextBody());
      const sent = performance.now();
      const answer = await sendJson({ url: target.url, method: 'POST', agent, headers, body });
      times.push(performance.now() - sent);
      feed.record(answer.status);
    }
    feed.assertNoConflict();
    return { times, seconds: (performance.now() - start) / 1000 };
  } finally {
    agent.destroy();
  }
}

async function runRaw(origin: string, spec: RawRun): Promise<RawRunResult> {
  const response = await fetch(`${origin}/insert`, { method: 'POST', body: JSON.stringify(spec) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`The raw writer failed: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as RawRunResult;
}

const perSecond = (r: RawRunResult) => r.inserted / r.seconds;
const rounded = (n: number) => Math.round(n).toLocaleString('en-GB');

function rawRow(label: string, runs: RawRunResult[]): ThroughputRow {
  return timesRow(
    label,
    runs.flatMap((r) => r.times),
    runs.reduce((n, r) => n + r.seconds, 0),
  );
}

const clockOf = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

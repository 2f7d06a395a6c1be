import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { RawResult } from 'autocannon';
import { MAX_KEY_RATE_LIMIT } from '../src/app/api-key-service.ts';
import { runCli, startServer } from '../test/helpers/cli.ts';
import type { BenchContext, Benchmark, BenchmarkResult, ThroughputRow } from './lib/benchmark.ts';
import { BOOKINGS_SCENARIO, bookingSlot, bookingsCatalogue } from './lib/bookings-database.ts';
import { WARM_UP_S } from './lib/compare.ts';
import { PINNING, pinProcess, SERVER_CPU } from './lib/cpu-pinning.ts';
import { type CpuUse, cpuSnapshot, cpuUseBetween } from './lib/cpu-use.ts';
import { sendJson } from './lib/http-request.ts';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './lib/load.ts';
import { startServerProcess } from './lib/server-process.ts';
import { loadRow, timesRow } from './lib/throughput-rows.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';
import { checkArrivals, startWebhookSink } from './lib/webhook-sink.ts';
import type { WebhookOrganisation, WebhooksOrganisation } from './lib/webhooks-database.ts';
import type {
  WebhooksBookingControl,
  WebhooksBookingInfo,
  WebhooksBookingState,
} from './webhooks-booking-server.ts';
import type {
  WebhooksDeliveryControl,
  WebhooksDeliveryInfo,
  WebhooksDeliveryInit,
  WebhooksDeliveryRun,
} from './webhooks-delivery-server.ts';

/**
 * Issue 39's figures for webhooks: what writing booking.created costs POST /v1/bookings, how many
 * deliveries a second one worker makes, and how long after its 201 a booking reaches a receiver.
 * Each is a ratio or a rate against a baseline measured in the same run (the machine is shared).
 */

const PATH = '/v1/bookings';
/** As bookings-endpoint and outbox: a handful of concurrent clients on SQLite's one writer. */
const CONNECTIONS = 16;

// ---------------------------------------------------------------------------------------------------
// webhooks-booking-cost

const BOOKING_SERVER = new URL('./webhooks-booking-server.ts', import.meta.url);
const MIN_BOOKING_RATIO = 0.9;
/** Each side goes first as often: the tables grow through the run, the machine's noise comes and goes. */
const SATURATION_ROUNDS = 10;
/** Bookings per side through the recorded instance, one at a time, after one uncounted each. */
const CENSUS_BOOKINGS = 10;
const SIDES: readonly WebhookOrganisation[] = ['quiet', 'subscribed'];

export const webhooksBookingCost: Benchmark = {
  id: 'webhooks-booking-cost',
  async run(context) {
    context.progress('seeding two organisations, starting the full stack…');
    const server = await startServerProcess<WebhooksBookingInfo>(BOOKING_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
      serveSettings: true,
    });
    try {
      return await measureBookingCost(server.info, context);
    } finally {
      await server.stop();
    }
  },
};

/** Each organisation books the same slot sequence (bookingSlot) in its own diary, one body per slot. */
class Diaries {
  readonly #info: WebhooksBookingInfo;
  readonly #next: Record<WebhookOrganisation, number> = { quiet: 0, subscribed: 0 };
  readonly created: Record<WebhookOrganisation, number> = { quiet: 0, subscribed: 0 };
  readonly others: Record<WebhookOrganisation, Map<number, number>> = {
    quiet: new Map(),
    subscribed: new Map(),
  };

  constructor(info: WebhooksBookingInfo) {
    this.#info = info;
  }

  target(side: WebhookOrganisation, origin = this.#info.origin): LoadTarget {
    const organisation = this.#info.organisations[side];
    return {
      url: `${origin}${PATH}`,
      method: 'POST',
      headers: { authorization: `Bearer ${organisation.writeKey}`, 'content-type': 'application/json' },
      body: () => this.nextBody(side, organisation),
      onStatus: (status) => {
        if (status === 201) this.created[side] += 1;
        else this.others[side].set(status, (this.others[side].get(status) ?? 0) + 1);
      },
    };
  }

  nextBody(side: WebhookOrganisation, organisation: WebhooksOrganisation): string {
    const slot = bookingSlot(this.#next[side]);
    this.#next[side] += 1;
    return JSON.stringify({
      location_slug: BOOKINGS_SCENARIO.location,
      service_ids: [organisation.serviceId],
      staff_id: organisation.staffIds[slot.staff],
      client_id: organisation.clientId,
      starts_at: slot.startsAtIso,
    });
  }

  failures(): { count: number; detail: string } {
    const entries = SIDES.flatMap((side) =>
      [...this.others[side]].map(([status, n]) => ({ side, status, n })),
    );
    const count = entries.reduce((n, e) => n + e.n, 0);
    return { count, detail: entries.map((e) => `${e.n} × ${e.status} (${e.side})`).join(', ') };
  }

  assertNoFailure(): void {
    const { count, detail } = this.failures();
    if (count > 0) throw new Error(`Bookings not answered 201: ${detail}.`);
  }
}

async function control<T>(
  origin: string,
  body: WebhooksBookingControl | WebhooksDeliveryControl,
): Promise<T> {
  const response = await fetch(origin, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`The child's control failed: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as T;
}

/** One booking through fetch, checked to be answered 201 (its body's slot taken from the diaries). */
async function bookThrough(target: LoadTarget): Promise<void> {
  const response = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body: target.body?.() ?? '',
  });
  const text = await response.text();
  target.onStatus?.(response.status);
  if (response.status !== 201)
    throw new Error(`POST ${PATH} answered ${response.status}: ${text.slice(0, 300)}`);
}

async function measureBookingCost(
  info: WebhooksBookingInfo,
  context: BenchContext,
): Promise<BenchmarkResult> {
  const { durationS, progress } = context;
  const diaries = new Diaries(info);
  const targets = { quiet: diaries.target('quiet'), subscribed: diaries.target('subscribed') };

  progress('census: statements per booking through the recorded instance…');
  const statements: Record<WebhookOrganisation, string[]> = { quiet: [], subscribed: [] };
  for (const side of SIDES) {
    const recorded = diaries.target(side, info.recordedOrigin);
    // The first fills the recorded instance's catalogue cache (the measured one's is filled by its warm-up).
    await bookThrough(recorded);
    await control(info.controlOrigin, { op: 'census-begin' });
    for (let i = 0; i < CENSUS_BOOKINGS; i += 1) await bookThrough(recorded);
    statements[side] = (
      await control<{ statements: string[] }>(info.controlOrigin, { op: 'census-end' })
    ).statements;
  }

  progress(`warming up both sides at saturation (${WARM_UP_S} s each)…`);
  let warmUpErrors = 0;
  for (const side of SIDES) {
    const result = await runLoad(targets[side], { connections: CONNECTIONS, durationS: WARM_UP_S });
    warmUpErrors += result.errors + result.timeouts;
    diaries.assertNoFailure();
  }

  const roundS = durationS / SATURATION_ROUNDS;
  const loadBefore = loadavg()[0] ?? 0;
  const cpuBefore = cpuSnapshot();
  const saturation: Record<WebhookOrganisation, RawResult[]> = { quiet: [], subscribed: [] };
  const rounds: Record<WebhookOrganisation, LoadStats>[] = [];
  const cpu: Record<WebhookOrganisation, { ms: number; bookings: number }> = {
    quiet: { ms: 0, bookings: 0 },
    subscribed: { ms: 0, bookings: 0 },
  };
  for (let round = 1; round <= SATURATION_ROUNDS; round += 1) {
    const order = round % 2 === 1 ? SIDES : [...SIDES].reverse();
    const figures: Partial<Record<WebhookOrganisation, LoadStats>> = {};
    for (const side of order) {
      progress(`saturation round ${round}/${SATURATION_ROUNDS}: ${side}, ${roundS} s…`);
      const before = await control<WebhooksBookingState>(info.controlOrigin, { op: 'state' });
      const result = await runLoad(targets[side], { connections: CONNECTIONS, durationS: roundS });
      diaries.assertNoFailure();
      const after = await control<WebhooksBookingState>(info.controlOrigin, { op: 'state' });
      cpu[side].ms += after.cpuMs - before.cpuMs;
      cpu[side].bookings += after.counts[side].bookings - before.counts[side].bookings;
      saturation[side].push(result);
      figures[side] = summarise(targets[side], [result]);
    }
    rounds.push(figures as Record<WebhookOrganisation, LoadStats>);
  }
  const cpuAfter = cpuSnapshot();
  const machine = machineLine(
    cpuBefore && cpuAfter
      ? cpuUseBetween(cpuBefore, cpuAfter, {
          runner: (pid) => pid === process.pid,
          server: (pid) => pid === info.pid,
        })
      : null,
    loadBefore,
  );
  const { counts } = await control<WebhooksBookingState>(info.controlOrigin, { op: 'state' });

  const withStats = summarise(targets.subscribed, saturation.subscribed);
  const withoutStats = summarise(targets.quiet, saturation.quiet);
  const ratio = withStats.requestsPerSecond / withoutStats.requestsPerSecond;
  const roundRatios = rounds.map((r) => r.subscribed.requestsPerSecond / r.quiet.requestsPerSecond);
  const perBooking = (side: WebhookOrganisation) => cpu[side].ms / Math.max(1, cpu[side].bookings);
  const errors =
    warmUpErrors +
    [...saturation.subscribed, ...saturation.quiet].reduce((n, r) => n + r.errors + r.timeouts, 0);
  const failures = diaries.failures();
  const census = (side: WebhookOrganisation) => statements[side].length / CENSUS_BOOKINGS;
  const extra = extraStatements(statements.quiet, statements.subscribed, CENSUS_BOOKINGS);
  const { subscribed: sub, quiet } = counts;
  const rowsPass =
    sub.bookings >= diaries.created.subscribed &&
    sub.events === sub.bookings &&
    sub.pending === sub.bookings &&
    quiet.events === 0 &&
    quiet.pending === 0;

  return {
    kind: 'throughput',
    subject: `POST ${PATH} with one webhook endpoint subscribed to booking.created, against none`,
    method: [
      `One full stack (the real app, production wiring and \`booking serve\`'s V8 settings, clock fixed at ${BOOKINGS_SCENARIO.now}, no logger; a child process, \`NODE_ENV=production\`) on one SQLite file holding the bookings scenario (\`bench/lib/bookings-database.ts\`: ${BOOKINGS_SCENARIO.staff} staff, one 15-minute service) as two organisations alike but for one webhook endpoint (\`bench/lib/webhooks-database.ts\`): **with**, one enabled endpoint subscribed to booking.created, so each booking also writes its event and one pending delivery in its transaction (\`publishCreatedBooking\`: the data built from what was written, the two INSERTs of \`insertEvent\`); **without**, no endpoint, so the cached subscription list says nobody listens and nothing more is written. No worker runs: the events are written and stay pending (\`webhooks-delivery-rate\` measures sending them). autocannon drives POST ${PATH} over ${CONNECTIONS} connections, each organisation booking the same slot sequence in its own diary; after ${WARM_UP_S} s per side, ${SATURATION_ROUNDS} rounds of ${roundS} s per side at saturation, each side first in every other round; the ratio is with / without over all rounds. The statement counts come from ${CENSUS_BOOKINGS} bookings per side, one at a time, through a second instance of the app with \`onQuery\`. Where the difference went (V8 profile of the same REST bookings alternating in one process, on the loaded machine, 2026-11-28): +0.24 ms of CPU per booking (+9 %): executing the two INSERTs 0.14 ms (a 1 KB event row, 800 bytes of it the body, and a delivery row with its three indexes and foreign key), the larger commit 0.05 ms (a booking stores 4.1 KB instead of 2.7 KB), garbage collection 0.04 ms, building the body 0.03 ms; building the two statements with Kysely's query builder cost about 0.05 ms more before \`insertEvent\` bound SQL written out once.`,
    ],
    rows: [
      loadRow('Full stack with one subscribed endpoint (event and delivery written), saturation', withStats),
      loadRow('Same stack, organisation without an endpoint, saturation', withoutStats),
    ],
    ratios: [
      {
        label: 'Bookings/s with / without the endpoint',
        value: `${ratio.toFixed(2)} (per round: ${roundRatios.map((r) => r.toFixed(2)).join(', ')}; median ${median(roundRatios).toFixed(2)})`,
      },
      {
        label: 'The machine during the saturation rounds',
        value: machine,
      },
      {
        label: 'Per booking',
        value: `server CPU with ${perBooking('subscribed').toFixed(3)} ms, without ${perBooking('quiet').toFixed(3)} ms (without / with ${(perBooking('quiet') / perBooking('subscribed')).toFixed(2)}); statements with ${census('subscribed')}, without ${census('quiet')}${extra ? ` (${extra})` : ''}`,
      },
    ],
    targets: [
      {
        description: `Bookings/s with one subscribed endpoint ≥ ${MIN_BOOKING_RATIO} × without (saturation, same server, same run)`,
        measured: `${ratio.toFixed(2)} (${Math.round(withStats.requestsPerSecond)} against ${Math.round(withoutStats.requestsPerSecond)} bookings/s)`,
        pass: ratio >= MIN_BOOKING_RATIO,
      },
      {
        description:
          'Every answer 201, no socket errors; one event and one pending delivery per booking with the endpoint, none without',
        measured: `${(diaries.created.subscribed + diaries.created.quiet).toLocaleString('en-GB')} × 201, ${failures.count} other, ${errors} errors; with: ${sub.events.toLocaleString('en-GB')} events and ${sub.pending.toLocaleString('en-GB')} deliveries for ${sub.bookings.toLocaleString('en-GB')} bookings; without: ${quiet.events} and ${quiet.pending} for ${quiet.bookings.toLocaleString('en-GB')}`,
        pass: failures.count === 0 && errors === 0 && rowsPass,
      },
    ],
  };
}

/** The statements one side ran that the other did not, per booking, by their first words and table. */
function extraStatements(
  without: readonly string[],
  withEndpoint: readonly string[],
  bookings: number,
): string {
  const kinds = (list: readonly string[]) => {
    const counts = new Map<string, number>();
    for (const sql of list) {
      const kind = statementKind(sql);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return counts;
  };
  const a = kinds(without);
  const b = kinds(withEndpoint);
  return [...b]
    .filter(([kind, n]) => n > (a.get(kind) ?? 0))
    .map(([kind, n]) => `+${(n - (a.get(kind) ?? 0)) / bookings} \`${kind}\``)
    .join(', ');
}

function statementKind(sql: string): string {
  const words = sql.trim().toLowerCase().split(/\s+/);
  const verb = words[0] ?? '';
  const table = (after: string) => (words[words.indexOf(after) + 1] ?? '').replaceAll('"', '');
  if (verb === 'insert') return `insert ${table('into')}`;
  if (verb === 'update') return `update ${table('update')}`;
  if (verb === 'select' || verb === 'delete') return `${verb} ${table('from')}`;
  return verb;
}

// ---------------------------------------------------------------------------------------------------
// webhooks-delivery-rate

const DELIVERY_SERVER = new URL('./webhooks-delivery-server.ts', import.meta.url);
const MIN_DELIVERIES_PER_SECOND = 500;
/** Events delivered before timing: JIT, the sender's keep-alive sockets. */
const DELIVERY_WARM_UP = 500;
/** Timed rounds, each this many queued events for the worker and as many POSTs for the baseline. */
const DELIVERY_ROUNDS = 4;
const DELIVERY_BATCH = 1_250;

export const webhooksDeliveryRate: Benchmark = {
  id: 'webhooks-delivery-rate',
  async run(context) {
    const sink = await startWebhookSink();
    try {
      const batches = [DELIVERY_WARM_UP, ...Array.from({ length: DELIVERY_ROUNDS }, () => DELIVERY_BATCH)];
      context.progress(
        `seeding ${batches.reduce((n, b) => n + b, 0).toLocaleString('en-GB')} bookings, each with its booking.created to deliver…`,
      );
      const init: WebhooksDeliveryInit = {
        endpointUrl: `${sink.origin}/hooks`,
        rawUrl: `${sink.origin}/raw`,
        batches,
      };
      const worker = await startServerProcess<WebhooksDeliveryInfo>(DELIVERY_SERVER, init, {
        cpuProfileDir: context.cpuProfileDir,
        serveSettings: true,
      });
      try {
        await control(worker.info.controlOrigin, { op: 'seed' });
        const run = (op: WebhooksDeliveryControl) =>
          control<WebhooksDeliveryRun>(worker.info.controlOrigin, op);
        context.progress(`warm-up: ${DELIVERY_WARM_UP} deliveries, then as many baseline POSTs…`);
        const warmUp = [await run({ op: 'deliver', batch: 0 }), await run({ op: 'raw', batch: 0 })];
        const delivered: WebhooksDeliveryRun[] = [];
        const raw: WebhooksDeliveryRun[] = [];
        const loadBefore = loadavg()[0] ?? 0;
        const cpuBefore = cpuSnapshot();
        for (let round = 1; round <= DELIVERY_ROUNDS; round += 1) {
          const order = round % 2 === 1 ? (['deliver', 'raw'] as const) : (['raw', 'deliver'] as const);
          for (const op of order) {
            context.progress(`round ${round}/${DELIVERY_ROUNDS}: ${op}, ${DELIVERY_BATCH} events…`);
            (op === 'deliver' ? delivered : raw).push(await run({ op, batch: round }));
          }
        }
        const cpuAfter = cpuSnapshot();
        const machine = machineLine(
          cpuBefore && cpuAfter
            ? cpuUseBetween(cpuBefore, cpuAfter, {
                runner: (pid) => pid === process.pid,
                server: (pid) => pid === worker.info.pid,
              })
            : null,
          loadBefore,
        );
        return deliveryReport(warmUp, delivered, raw, sink.arrivals, worker.info, machine);
      } finally {
        await worker.stop();
      }
    } finally {
      await sink.close();
    }
  },
};

function deliveryReport(
  warmUp: WebhooksDeliveryRun[],
  delivered: WebhooksDeliveryRun[],
  raw: WebhooksDeliveryRun[],
  arrivals: Awaited<ReturnType<typeof startWebhookSink>>['arrivals'],
  info: WebhooksDeliveryInfo,
  machine: string,
): BenchmarkResult {
  const row = (label: string, runs: WebhooksDeliveryRun[]): ThroughputRow =>
    timesRow(
      label,
      runs.flatMap((r) => r.postTimes),
      runs.reduce((n, r) => n + r.seconds, 0),
      runs.reduce((n, r) => n + r.counts.retried + r.counts.failed, 0),
    );
  const worker = row('Full stack: the worker delivering (claim, POST, settle), deliveries', delivered);
  const baseline = row('The same POSTs through the same sender, no database', raw);
  const ratio = worker.perSecond / baseline.perSecond;

  // Every event of every batch the worker delivered (warm-up included) reached /hooks once, signed.
  const deliveries = [warmUp[0]!, ...delivered];
  const minuteOf = new Map<string, number>();
  for (const run of deliveries) for (const id of run.eventIds) minuteOf.set(id, info.minutes[run.batch]!);
  const hooks = arrivals.filter((a) => a.path === '/hooks');
  const check = checkArrivals(hooks, new Set(minuteOf.keys()), info.secret, (a) =>
    Math.floor((minuteOf.get(a.eventId) ?? 0) / 1000),
  );
  const notRecorded = deliveries.flatMap((r) =>
    Object.entries(r.recorded)
      .filter(([key]) => key !== 'succeeded/1')
      .map(([key, n]) => `${n} ${key}`),
  );
  const recordedOk =
    deliveries.every((r) => r.recorded['succeeded/1'] === r.size) && notRecorded.length === 0;
  const exactlyOnce =
    check.missing === 0 &&
    check.unexpected === 0 &&
    check.unsigned === 0 &&
    check.distinct === check.received;
  const claims = delivered.reduce((n, r) => n + r.claims, 0);
  const rawArrivals = arrivals.filter((a) => a.path === '/raw').length;
  const inFlight = Math.max(...[...delivered, ...raw].map((r) => r.maxInFlight));

  return {
    kind: 'throughput',
    subject: 'webhook deliveries to a local receiver, one worker',
    method: [
      `A child process (\`NODE_ENV=production\`, \`booking serve\`'s V8 settings) holds the SQLite bookings scenario with one endpoint subscribed to booking.created (\`bench/lib/webhooks-database.ts\`) and books ${(DELIVERY_WARM_UP + DELIVERY_ROUNDS * DELIVERY_BATCH).toLocaleString('en-GB')} bookings through \`createBooking\` before timing, one batch a minute apart, so ${(DELIVERY_WARM_UP + DELIVERY_ROUNDS * DELIVERY_BATCH).toLocaleString('en-GB')} events are queued and each batch falls due at its own minute. The receiver runs in the runner on the other core: node:http on 127.0.0.1 answering 200 as soon as a body has arrived (signatures are checked after the run). **Worker**: the clock set to the batch's minute, the worker's claims (\`deliverDueWebhooks\` with \`httpSender\`, again at once while a claim comes back full; \`startWebhookWorker\` keeps 64 out instead, claiming as places free, at most 16 to one endpoint: claim ${info.batchSize} in one UPDATE … RETURNING and read their events and endpoint, POST all concurrently over at most 32 keep-alive sockets, settle each in a write transaction as its answer comes, SQLite group commit sharing those transactions; ${claims} claims for ${delivered.length * DELIVERY_BATCH} deliveries). **Baseline**: the same signed bodies POSTed through the same sender in groups of ${info.batchSize}, each awaited whole, no database. After ${DELIVERY_WARM_UP} of each untimed, ${DELIVERY_ROUNDS} rounds of ${DELIVERY_BATCH.toLocaleString('en-GB')} per side, the order alternating; the percentiles are of one POST, from the call to the receiver's answer (up to ${inFlight} in flight). What bounds the worker (V8 profile of a round, on the loaded machine, 2026-11-28): the COMMITs of the settles, a quarter of its busy time (\`synchronous = FULL\`: better-sqlite3 waits for the disk on the event loop, one wait per group of settles that came in the same turn), node's HTTP client about 30 %, the claim and settle statements 16 %, garbage collection 7 %; and a claim waits for the slowest of its ${info.batchSize} answers before the next.`,
    ],
    rows: [worker, baseline],
    ratios: [
      {
        label: 'Deliveries/s',
        value: `${Math.round(worker.perSecond)} (rounds ${delivered.map((r) => Math.round(r.size / r.seconds)).join(', ')}), the baseline ${Math.round(baseline.perSecond)} POSTs/s: worker / baseline ${ratio.toFixed(2)}`,
      },
      { label: 'The machine during the timed rounds', value: machine },
    ],
    targets: [
      {
        description: `Deliveries/s by one worker ≥ ${MIN_DELIVERIES_PER_SECOND} (to a receiver answering at once)`,
        measured: `${Math.round(worker.perSecond)}`,
        pass: worker.perSecond >= MIN_DELIVERIES_PER_SECOND,
      },
      {
        description:
          'Every event delivered received exactly once with a valid signature and recorded succeeded after one attempt; every baseline POST answered',
        measured: `${check.received.toLocaleString('en-GB')} received, ${check.distinct.toLocaleString('en-GB')} distinct, ${check.missing} missing, ${check.unexpected} unexpected, ${check.unsigned} not verifying; ${notRecorded.length === 0 ? 'all succeeded/1' : notRecorded.join(', ')}; baseline ${rawArrivals.toLocaleString('en-GB')} received, ${raw.reduce((n, r) => n + r.counts.failed, 0) + warmUp[1]!.counts.failed} failed`,
        pass:
          exactlyOnce &&
          recordedOk &&
          rawArrivals === DELIVERY_ROUNDS * DELIVERY_BATCH + DELIVERY_WARM_UP &&
          [...raw, warmUp[1]!].every((r) => r.counts.failed === 0),
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// webhooks-delay

/** A moderate, steady rate: a busy salon chain's API, far below what the server takes. */
const DELAY_RATE = 20;
const MAX_DELAY_P50_MS = 1000;
/** How long to wait for the last events after the last booking. */
const DRAIN_MS = 10_000;
const REGULAR_PHONE = '+447911123457';

export const webhooksDelay: Benchmark = {
  id: 'webhooks-delay',
  async run(context) {
    const dir = mkdtempSync(path.join(tmpdir(), 'booking-webhooks-delay-'));
    const sink = await startWebhookSink();
    try {
      return await measureDelay(dir, sink, context);
    } finally {
      await sink.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function measureDelay(
  dir: string,
  sink: Awaited<ReturnType<typeof startWebhookSink>>,
  context: BenchContext,
): Promise<BenchmarkResult> {
  const { durationS, progress } = context;
  const env = {
    DATABASE_URL: `sqlite:${path.join(dir, 'booking.sqlite')}`,
    NODE_ENV: 'production',
    WEBHOOK_ALLOW_INSECURE: '1',
  };
  const catalogueFile = path.join(dir, 'catalogue.json');
  writeFileSync(catalogueFile, JSON.stringify(bookingsCatalogue()));
  cli(['import', catalogueFile], env);
  const { key } = JSON.parse(
    cli(
      [
        'keys',
        'create',
        '--org',
        BOOKINGS_SCENARIO.organisation,
        '--label',
        'bench',
        '--scope',
        'read_write',
      ].concat(['--rate-limit', String(MAX_KEY_RATE_LIMIT), '--json']),
      env,
    ),
  ) as { key: string };

  progress('starting `booking serve`, subscribing an endpoint over REST…');
  const server = await startServer(['--port', '0'], env);
  if (PINNING && server.process.pid !== undefined) pinProcess(server.process.pid, SERVER_CPU);
  const agent = new http.Agent({ keepAlive: true });
  try {
    const call = async (method: string, url: string, body?: unknown) => {
      const answer = await sendJson({
        url: `${server.url}${url}`,
        method,
        agent,
        headers: { authorization: `Bearer ${key}` },
        body,
      });
      return { status: answer.status, json: JSON.parse(answer.text) as { data: unknown } };
    };
    const data = async <T>(url: string): Promise<T> => {
      const answer = await call('GET', url);
      if (answer.status !== 200) throw new Error(`GET ${url}: ${answer.status}`);
      return answer.json.data as T;
    };
    const services = await data<{ id: string }[]>(`/v1/locations/${BOOKINGS_SCENARIO.location}/services`);
    const staff = await data<{ id: string; name: string }[]>(
      `/v1/locations/${BOOKINGS_SCENARIO.location}/staff`,
    );
    const staffIds = [...staff].sort((a, b) => a.name.localeCompare(b.name)).map((s) => s.id);
    const client = await data<{ id: string }>(`/v1/clients?phone=${encodeURIComponent(REGULAR_PHONE)}`);
    const subscribed = await call('POST', '/v1/webhook-endpoints', {
      url: `${sink.origin}/hooks`,
      events: ['booking.created'],
    });
    if (subscribed.status !== 201) throw new Error(`POST /v1/webhook-endpoints: ${subscribed.status}`);
    const { secret } = subscribed.json.data as { secret: string };

    let next = 0;
    /** Booking reference → when its 201 arrived, and how long the request took. */
    const answered = new Map<string, { at: number; roundTrip: number }>();
    let failures = 0;
    let firstFailure = '';
    const book = async () => {
      const slot = bookingSlot(next++);
      const sent = performance.now();
      try {
        const answer = await sendJson({
          url: `${server.url}${PATH}`,
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${key}` },
          body: {
            location_slug: BOOKINGS_SCENARIO.location,
            service_ids: [services[0]!.id],
            staff_id: staffIds[slot.staff],
            client_id: client.id,
            starts_at: slot.startsAtIso,
          },
        });
        const at = performance.now();
        if (answer.status !== 201) {
          failures += 1;
          firstFailure ||= `${answer.status} ${answer.text.slice(0, 200)}`;
          return;
        }
        answered.set((JSON.parse(answer.text) as { data: { reference: string } }).data.reference, {
          at,
          roundTrip: at - sent,
        });
      } catch (error) {
        failures += 1;
        firstFailure ||= error instanceof Error ? error.message : String(error);
      }
    };
    /** `count` bookings evenly spaced at DELAY_RATE a second; resolves when all are answered. */
    const paced = async (count: number) => {
      const start = performance.now();
      const pending: Promise<void>[] = [];
      for (let k = 0; k < count; k += 1) {
        const due = start + (k * 1000) / DELAY_RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        pending.push(book());
      }
      await Promise.all(pending);
    };
    const drained = async (expected: number) => {
      const deadline = performance.now() + DRAIN_MS;
      while (sink.arrivals.length < expected && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
    };

    progress(`warm-up: ${WARM_UP_S} s of bookings at ${DELAY_RATE}/s…`);
    await paced(WARM_UP_S * DELAY_RATE);
    await drained(answered.size);
    const warmedUp = new Set(answered.keys());
    const warmUpArrivals = sink.arrivals.length;
    progress(`${durationS} s of bookings at ${DELAY_RATE}/s, each timed to its booking.created…`);
    const loadBefore = loadavg()[0] ?? 0;
    const cpuBefore = cpuSnapshot();
    await paced(durationS * DELAY_RATE);
    await drained(answered.size);
    const cpuAfter = cpuSnapshot();
    const machine = machineLine(
      cpuBefore && cpuAfter
        ? cpuUseBetween(cpuBefore, cpuAfter, {
            runner: (pid) => pid === process.pid,
            server: (pid) => pid === server.process.pid,
          })
        : null,
      loadBefore,
    );

    const timed = [...answered].filter(([id]) => !warmedUp.has(id));
    const arrivalOf = new Map<string, number>();
    const eventIds = new Set<string>();
    let notCreated = 0;
    for (const arrival of sink.arrivals.slice(warmUpArrivals)) {
      const event = JSON.parse(arrival.body) as { type: string; data: { reference: string } };
      if (event.type !== 'booking.created') notCreated += 1;
      arrivalOf.set(event.data.reference, arrival.at);
      eventIds.add(arrival.eventId);
    }
    const delays = timed.flatMap(([id, { at }]) => {
      const arrived = arrivalOf.get(id);
      return arrived === undefined ? [] : [arrived - at];
    });
    const check = checkArrivals(sink.arrivals, new Set(sink.arrivals.map((a) => a.eventId)), secret, () =>
      Math.floor(Date.now() / 1000),
    );
    const delay = summariseTimes(
      'Delay: the 201 of POST /v1/bookings to the receiver getting its booking.created',
      delays,
    );
    const roundTrip = summariseTimes(
      'Baseline: the booking itself, POST /v1/bookings to its 201',
      timed.map(([, t]) => t.roundTrip),
    );
    const p95 = percentile(delays, 95);
    const missing = timed.length - delays.length;
    return {
      kind: 'timing',
      subject: 'booking.created from the 201 to the receiver',
      setting: {
        heading: 'against `booking serve` with its webhook worker',
        detail: `\`booking serve\` in a child process, ${DELAY_RATE} bookings/s`,
      },
      method: [
        `The real \`booking serve\` (\`NODE_ENV=production\`, WEBHOOK_ALLOW_INSECURE=1, real clock) on a SQLite file holding the bookings scenario (\`booking import\`), its webhook worker as deployed (\`startWebhookWorker\` with \`httpSender\`, a pass every 200 ms, at once again after a full batch of 64). An endpoint subscribed to booking.created is created over REST, pointing at a receiver in the runner (node:http on 127.0.0.1, answering 200 at once). The runner books over REST at a steady ${DELAY_RATE} a second (open loop, each for the next free slot; ${WARM_UP_S} s untimed first, then ${durationS} s), notes when each 201 arrives, and the receiver when each booking.created arrives (both on the runner's clock); the delay is the difference, the baseline the booking's own round trip. With a 200 ms poll an event waits about 100 ms on average for the next pass.`,
      ],
      timings: [delay, roundTrip],
      ratios: [
        {
          label: 'Delay',
          value: `p50 ${formatMs(delay.p50)} ms, p95 ${formatMs(p95)} ms (${delays.length} bookings; the booking's own round trip p50 ${formatMs(roundTrip.p50)} ms)`,
        },
        { label: 'The machine meanwhile', value: machine },
      ],
      targets: [
        {
          description: `Delay p50 < ${MAX_DELAY_P50_MS / 1000} s from the 201 to the receiver (worker polling every 200 ms, ${DELAY_RATE} bookings/s)`,
          measured: `${formatMs(delay.p50)} ms (p95 ${formatMs(p95)} ms, max ${formatMs(delay.max)} ms)`,
          pass: delay.p50 < MAX_DELAY_P50_MS && delays.length > 0,
        },
        {
          description:
            'Every booking answered 201 and its booking.created received exactly once, signed, nothing else',
          measured: `${answered.size} × 201, ${failures} other${firstFailure ? ` (${firstFailure})` : ''}; ${check.received} received, ${check.distinct} distinct, ${missing} missing, ${notCreated} of another type, ${check.unsigned} not verifying`,
          pass:
            failures === 0 &&
            missing === 0 &&
            notCreated === 0 &&
            check.unsigned === 0 &&
            check.distinct === check.received &&
            check.received === answered.size,
        },
      ],
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

function cli(args: string[], env: Record<string, string>): string {
  const result = runCli(args, env);
  if (result.status !== 0) throw new Error(`booking ${args[0]} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** How busy the shared machine was: a rate measured while other work takes the cores is that work's too. */
function machineLine(cpu: CpuUse | null, loadBefore: number): string {
  const load = `load average (1 min) ${loadBefore.toFixed(2)} before, ${(loadavg()[0] ?? 0).toFixed(2)} after`;
  if (!cpu) return load;
  const ours = (cpu.groups.runner ?? 0) + (cpu.groups.server ?? 0);
  const outside = Math.max(0, cpu.machineBusy - ours);
  return `${cpu.machineBusy.toFixed(2)} of ${cpu.cores} cores busy, ${outside.toFixed(2)} of them by other work; ${load}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1
    ? (sorted[Math.floor(middle)] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

import { loadavg } from 'node:os';
import type { RawResult } from 'autocannon';
import { startSmtpSink, startTwilioStandIn } from '../test/helpers/message-sinks.ts';
import type { Benchmark, BenchmarkResult, ThroughputRow } from './lib/benchmark.ts';
import { BOOKINGS_SCENARIO, bookingSlot } from './lib/bookings-database.ts';
import { LATENCY_ROUNDS, ROUNDS, WARM_UP_S } from './lib/compare.ts';
import { type CpuUse, cpuSnapshot, cpuUseBetween } from './lib/cpu-use.ts';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './lib/load.ts';
import { runPacedLoad } from './lib/paced-load.ts';
import { startServerProcess } from './lib/server-process.ts';
import { loadRow, medianRow, timesRow } from './lib/throughput-rows.ts';
import type { DeliveryInfo, DeliveryInit, DeliveryRun } from './outbox-delivery-server.ts';
import type { OutboxCounts, OutboxStackInfo, OutboxState } from './outbox-server.ts';

const STACK_SERVER = new URL('./outbox-server.ts', import.meta.url);
const DELIVERY_SERVER = new URL('./outbox-delivery-server.ts', import.meta.url);
const PATH = '/v1/bookings';
/** As bookings-endpoint: a handful of concurrent clients on SQLite's one writer. */
const CONNECTIONS = 16;
/** The issue's target: the outbox write costs POST /v1/bookings at most 10 % of its rate. */
const MIN_RATIO = 0.9;
/**
 * Saturation rounds per side, in the order without-with, with-without, …: a booking may cost a little
 * more as the tables grow, and the machine's noise comes and goes, so each side goes first as often.
 */
const SATURATION_ROUNDS = 8;
/** The fixed-rate phase offers this share of the rate with the outbox write at saturation. */
const LATENCY_SHARE = 0.5;
/** Rows a booking of the client with phone and e-mail writes: confirmed and reminder, by SMS and e-mail. */
const ROWS_PER_BOOKING = 4;
/** Messages per channel delivered before timing: JIT, the SMTP pool's connections. */
const DELIVERY_WARM_UP = 64;
/** Timed deliveries per channel, each of DELIVERY_BATCH messages, the channels alternating. */
const DELIVERY_ROUNDS = 2;
const DELIVERY_BATCH = 600;
const MAIL_FROM = 'Slot Studio <bookings@slot-studio.example>';
const SMS_FROM = '+447700900000';

type Side = 'with' | 'without';

/**
 * Issue 18's figures: what the outbox write costs POST /v1/bookings, and how fast the delivery worker
 * empties the outbox through the real providers' packages to local stand-ins.
 *
 * The two sides of the write are the same server, code and requests in the same run; only the client
 * booked for differs: one with a phone and an e-mail (four outbox rows per booking), one with neither
 * (no row: messages go only to the channels a client has). Target: with ≥ 0.9 × without at saturation.
 */
export const outbox: Benchmark = {
  id: 'outbox',
  async run(context) {
    context.progress('seeding the booking database, starting the full stack…');
    const stack = await startServerProcess<OutboxStackInfo>(STACK_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
    });
    let writes: WritePhase;
    try {
      writes = await measureWrites(stack.info, context);
    } finally {
      await stack.stop();
    }
    context.progress('starting the SMTP sink and the Twilio stand-in, seeding the messages to deliver…');
    const smtp = await startSmtpSink();
    const twilio = await startTwilioStandIn();
    try {
      const batches = deliveryPlan();
      const init: DeliveryInit = {
        smtpUrl: smtp.url,
        mailFrom: MAIL_FROM,
        sms: {
          accountSid: twilio.accountSid,
          authToken: twilio.authToken,
          from: SMS_FROM,
          apiBase: twilio.base,
        },
        batches,
      };
      const worker = await startServerProcess<DeliveryInfo>(DELIVERY_SERVER, init, {
        cpuProfileDir: context.cpuProfileDir,
      });
      let runs: DeliveryRun[];
      try {
        runs = [];
        for (const [batch, planned] of batches.entries()) {
          const what = batch < 2 ? 'warm-up' : `round ${Math.floor((batch - 2) / 2) + 1}/${DELIVERY_ROUNDS}`;
          context.progress(`delivery, ${what}: ${planned.size} messages by ${planned.channel}…`);
          runs.push(await deliver(worker.info.origin, batch));
        }
      } finally {
        await worker.stop();
      }
      const exactlyOnce = checkExactlyOnce(runs, smtp, twilio);
      return report(writes, runs, exactlyOnce);
    } finally {
      await smtp.close();
      await twilio.close();
    }
  },
};

interface WritePhase {
  saturation: Record<Side, RawResult[]>;
  atRate: Record<Side, LoadStats[]>;
  rate: number;
  /** Per saturation round, in order: each side's figures. */
  rounds: Record<Side, LoadStats>[];
  feed: SlotFeed;
  counts: OutboxCounts;
  /** Over the saturation rounds, per side: the server's CPU time and the bookings it stored. */
  serverCpu: Record<Side, { ms: number; bookings: number }>;
  clientIds: Record<Side, string>;
  /** Socket errors and timeouts of the warm-ups (the measured phases' are in their figures). */
  warmUpErrors: number;
  /** The machine during the saturation rounds: its CPU (null without /proc) and 1-minute load averages. */
  machine: { cpu: CpuUse | null; loadBefore: number; loadAfter: number };
  /** Seconds per side of one saturation round and of one fixed-rate round. */
  roundS: number;
  latencyRoundS: number;
}

async function measureWrites(
  info: OutboxStackInfo,
  context: Parameters<Benchmark['run']>[0],
): Promise<WritePhase> {
  const { durationS, progress } = context;
  const clientIds: Record<Side, string> = {
    with: info.clientIds.regular,
    without: info.clientIds.unreachable,
  };
  const feed = new SlotFeed(info);
  const targets = {
    with: feed.target('with', clientIds.with),
    without: feed.target('without', clientIds.without),
  };
  for (const side of ['without', 'with'] as const) await bookOnce(targets[side], feed, side);

  progress(`warming up both sides at saturation (${WARM_UP_S} s each)…`);
  let warmUpErrors = 0;
  for (const side of ['without', 'with'] as const) {
    const result = await runLoad(targets[side], { connections: CONNECTIONS, durationS: WARM_UP_S });
    warmUpErrors += result.errors + result.timeouts;
    feed.assertNoConflict();
  }

  const roundS = durationS / SATURATION_ROUNDS;
  const loadBefore = loadavg()[0] ?? 0;
  const cpuBefore = cpuSnapshot();
  const saturation: Record<Side, RawResult[]> = { with: [], without: [] };
  const rounds: Record<Side, LoadStats>[] = [];
  const serverCpu: Record<Side, { ms: number; bookings: number }> = {
    with: { ms: 0, bookings: 0 },
    without: { ms: 0, bookings: 0 },
  };
  for (let round = 1; round <= SATURATION_ROUNDS; round += 1) {
    const order: Side[] = round % 2 === 1 ? ['without', 'with'] : ['with', 'without'];
    const figures: Partial<Record<Side, LoadStats>> = {};
    for (const side of order) {
      progress(`saturation round ${round}/${SATURATION_ROUNDS}: ${side} the outbox write, ${roundS} s…`);
      const before = await getState(info.stateOrigin);
      const result = await runLoad(targets[side], { connections: CONNECTIONS, durationS: roundS });
      feed.assertNoConflict();
      const after = await getState(info.stateOrigin);
      const stored = (state: OutboxState) => state.counts[clientIds[side]]?.bookings ?? 0;
      serverCpu[side].ms += after.cpuMs - before.cpuMs;
      serverCpu[side].bookings += stored(after) - stored(before);
      saturation[side].push(result);
      figures[side] = summarise(targets[side], [result]);
    }
    rounds.push(figures as Record<Side, LoadStats>);
  }

  const cpuAfter = cpuSnapshot();
  const machine = {
    cpu:
      cpuBefore && cpuAfter
        ? cpuUseBetween(cpuBefore, cpuAfter, {
            runner: (pid) => pid === process.pid,
            server: (pid) => pid === info.pid,
          })
        : null,
    loadBefore,
    loadAfter: loadavg()[0] ?? 0,
  };
  const withRate = summarise(targets.with, saturation.with).requestsPerSecond;
  const rate = Math.max(10, Math.round((LATENCY_SHARE * withRate) / 10) * 10);
  const latencyRoundS = durationS / ROUNDS;
  const atRate: Record<Side, LoadStats[]> = { with: [], without: [] };
  for (let round = 1; round <= LATENCY_ROUNDS; round += 1) {
    const order: Side[] = round % 2 === 1 ? ['without', 'with'] : ['with', 'without'];
    for (const side of order) {
      progress(`latency at ${rate} bookings/s, round ${round}/${LATENCY_ROUNDS}: ${side} the outbox write…`);
      atRate[side].push(
        await runPacedLoad(targets[side], { connections: CONNECTIONS, durationS: latencyRoundS, rate }),
      );
      feed.assertNoConflict();
    }
  }
  const { counts } = await getState(info.stateOrigin);
  return {
    saturation,
    atRate,
    rate,
    rounds,
    feed,
    counts,
    serverCpu,
    clientIds,
    warmUpErrors,
    machine,
    roundS,
    latencyRoundS,
  };
}

/**
 * Hands out the slot sequence of bookingSlot to both sides, one request body each, in order, and
 * counts each side's answers: the sides book the same kind of slots of one growing diary, and no slot
 * is ever asked for twice (a body built but not sent leaves its slot unbooked).
 */
class SlotFeed {
  readonly #info: OutboxStackInfo;
  #next = 0;
  readonly created: Record<Side, number> = { with: 0, without: 0 };
  readonly #others: Record<Side, Map<number, number>> = { with: new Map(), without: new Map() };

  constructor(info: OutboxStackInfo) {
    this.#info = info;
  }

  get handedOut(): number {
    return this.#next;
  }

  target(side: Side, clientId: string): LoadTarget {
    return {
      url: `${this.#info.origin}${PATH}`,
      method: 'POST',
      headers: { authorization: `Bearer ${this.#info.writeKey}`, 'content-type': 'application/json' },
      body: () => this.nextBody(clientId),
      onStatus: (status) => this.record(side, status),
    };
  }

  /** The next slot's request body, as a client that read availability would send it. */
  nextBody(clientId: string): string {
    const slot = bookingSlot(this.#next);
    this.#next += 1;
    return JSON.stringify({
      location_slug: BOOKINGS_SCENARIO.location,
      service_ids: [this.#info.serviceId],
      staff_id: this.#info.staffIds[slot.staff],
      client_id: clientId,
      starts_at: slot.startsAtIso,
    });
  }

  record(side: Side, status: number): void {
    if (status === 201) this.created[side] += 1;
    else this.#others[side].set(status, (this.#others[side].get(status) ?? 0) + 1);
  }

  failures(): { count: number; detail: string } {
    const entries = (['with', 'without'] as const).flatMap((side) =>
      [...this.#others[side]].map(([status, n]) => ({ side, status, n })),
    );
    const count = entries.reduce((n, e) => n + e.n, 0);
    const detail = entries.map((e) => `${e.n} × ${e.status} (${e.side})`).join(', ');
    return { count, detail: count === 0 ? '' : ` (${detail})` };
  }

  /** Stops the run on any 409: every slot asked for is free, so a conflict means the scenario is wrong. */
  assertNoConflict(): void {
    const conflicts = (this.#others.with.get(409) ?? 0) + (this.#others.without.get(409) ?? 0);
    if (conflicts > 0) {
      throw new Error(
        `${conflicts} bookings answered 409 conflict: the slot sequence is not all free slots.`,
      );
    }
  }
}

/** One booking of a side through fetch before any load, checked to be the slot asked for, confirmed. */
async function bookOnce(target: LoadTarget, feed: SlotFeed, side: Side): Promise<void> {
  const body = target.body?.() ?? '';
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body });
  const text = await response.text();
  feed.record(side, response.status);
  if (response.status !== 201)
    throw new Error(`POST ${PATH} answered ${response.status}: ${text.slice(0, 300)}`);
  const asked = JSON.parse(body) as { staff_id: string; starts_at: string; client_id: string };
  const booked = (
    JSON.parse(text) as {
      data?: { staff_id?: string; starts_at?: string; status?: string; client_id?: string };
    }
  ).data;
  if (
    booked?.staff_id !== asked.staff_id ||
    booked.client_id !== asked.client_id ||
    Date.parse(booked.starts_at ?? '') !== Date.parse(asked.starts_at) ||
    booked.status !== 'confirmed'
  ) {
    throw new Error(`The first booking is not the confirmed slot asked for: ${text.slice(0, 300)}`);
  }
}

async function getState(origin: string): Promise<OutboxState> {
  const response = await fetch(`${origin}/state`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`The stack's state failed: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as OutboxState;
}

/** Warm-up by SMS and by e-mail, then the timed rounds: e-mail first in odd rounds, SMS in even ones. */
function deliveryPlan(): DeliveryInit['batches'] {
  const batches: DeliveryInit['batches'] = [
    { channel: 'sms', size: DELIVERY_WARM_UP },
    { channel: 'email', size: DELIVERY_WARM_UP },
  ];
  for (let round = 1; round <= DELIVERY_ROUNDS; round += 1) {
    const order = round % 2 === 1 ? (['email', 'sms'] as const) : (['sms', 'email'] as const);
    for (const channel of order) batches.push({ channel, size: DELIVERY_BATCH });
  }
  return batches;
}

async function deliver(origin: string, batch: number): Promise<DeliveryRun> {
  const response = await fetch(`${origin}/deliver`, { method: 'POST', body: JSON.stringify({ batch }) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`The delivery worker failed: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as DeliveryRun;
}

interface ExactlyOnce {
  email: { expected: number; received: number; accepted: number; problems: string[] };
  sms: { expected: number; received: number; accepted: number; problems: string[] };
}

/**
 * Every message of every batch (warm-ups included) must be recorded sent after one attempt with the
 * provider's id, and the stand-in must have received it exactly once, under its outbox id (the
 * e-mail's Message-ID, the SMS request's idempotency token), and nothing else.
 */
function checkExactlyOnce(
  runs: DeliveryRun[],
  smtp: Awaited<ReturnType<typeof startSmtpSink>>,
  twilio: Awaited<ReturnType<typeof startTwilioStandIn>>,
): ExactlyOnce {
  const recorded = (channel: 'email' | 'sms') => runs.filter((r) => r.channel === channel);
  const problemsOf = (channel: 'email' | 'sms') => {
    const problems: string[] = [];
    for (const run of recorded(channel)) {
      if (run.messages.length !== run.size)
        problems.push(`${run.messages.length} confirmations recorded for ${run.size} bookings`);
      const notSent = run.messages.filter((m) => m.status !== 'sent' || m.attempts !== 1 || !m.providerId);
      if (notSent.length > 0) problems.push(`${notSent.length} not recorded sent after one attempt`);
      const { sent, ...others } = run.counts;
      if (sent !== run.size || Object.values(others).some((n) => n > 0))
        problems.push(`outcomes ${JSON.stringify(run.counts)} for ${run.size} messages`);
      if (run.stillDue > 0) problems.push(`${run.stillDue} still due afterwards`);
    }
    return problems;
  };

  const mails = recorded('email').flatMap((r) => r.messages);
  const emailProblems = problemsOf('email');
  const messageIds = new Map(mails.map((m) => [`<${m.id}@booking-engine.outbox>`, m]));
  const strangers = smtp.received.filter((e) => !messageIds.has(e.messageId)).length;
  if (strangers > 0) emailProblems.push(`${strangers} e-mails received that the outbox did not send`);
  const missing = [...messageIds.keys()].filter((id) => !smtp.accepted.has(id)).length;
  if (missing > 0) emailProblems.push(`${missing} e-mails recorded sent never received`);
  if (smtp.received.length !== smtp.accepted.size)
    emailProblems.push(`${smtp.received.length - smtp.accepted.size} e-mails received twice`);
  const wrongId = mails.filter((m) => m.providerId !== `<${m.id}@booking-engine.outbox>`).length;
  if (wrongId > 0) emailProblems.push(`${wrongId} recorded with another Message-ID`);

  const texts = recorded('sms').flatMap((r) => r.messages);
  const smsProblems = problemsOf('sms');
  const tokens = new Map(texts.map((m) => [m.id, m]));
  const unknown = twilio.requests.filter((r) => !tokens.has(r.token)).length;
  if (unknown > 0) smsProblems.push(`${unknown} SMS requests the outbox did not send`);
  const unsent = [...tokens.keys()].filter((id) => !twilio.accepted.has(id)).length;
  if (unsent > 0) smsProblems.push(`${unsent} SMS recorded sent never received`);
  if (twilio.requests.length !== twilio.accepted.size)
    smsProblems.push(`${twilio.requests.length - twilio.accepted.size} SMS requests repeated`);
  if (twilio.malformed.length > 0) smsProblems.push(`${twilio.malformed.length} malformed requests`);
  const sids = new Map([...twilio.accepted].map(([token, r]) => [token, (r as { sid?: string }).sid]));
  const wrongSid = texts.filter((m) => m.providerId !== sids.get(m.id)).length;
  if (wrongSid > 0) smsProblems.push(`${wrongSid} recorded with another message sid`);

  return {
    email: {
      expected: mails.length,
      received: smtp.received.length,
      accepted: smtp.accepted.size,
      problems: emailProblems,
    },
    sms: {
      expected: texts.length,
      received: twilio.requests.length,
      accepted: twilio.accepted.size,
      problems: smsProblems,
    },
  };
}

function report(writes: WritePhase, runs: DeliveryRun[], exactlyOnce: ExactlyOnce): BenchmarkResult {
  const { saturation, atRate, rate, rounds, feed, counts, clientIds } = writes;
  // summarise needs a URL only to label autocannon's merged result.
  const label: LoadTarget = { url: `http://127.0.0.1${PATH}` };
  const withStats = summarise(label, saturation.with);
  const withoutStats = summarise(label, saturation.without);
  const ratio = withStats.requestsPerSecond / withoutStats.requestsPerSecond;
  const roundRatios = rounds.map((r) => r.with.requestsPerSecond / r.without.requestsPerSecond);

  const timed = runs.slice(2);
  const deliveryRow = (channel: 'email' | 'sms', label: string): ThroughputRow => {
    const of = timed.filter((r) => r.channel === channel);
    const failed = of.reduce((n, r) => n + (r.size - r.counts.sent), 0);
    return timesRow(
      label,
      of.flatMap((r) => r.sendTimes),
      of.reduce((n, r) => n + r.seconds, 0),
      failed,
    );
  };
  const email = deliveryRow('email', 'Delivery by e-mail: nodemailer (pool of 4) to the SMTP sink, messages');
  const sms = deliveryRow('sms', 'Delivery by SMS: the twilio package to the HTTP stand-in, messages');

  const failures = feed.failures();
  const errors =
    writes.warmUpErrors +
    [...saturation.with, ...saturation.without].reduce((n, r) => n + r.errors + r.timeouts, 0) +
    [...atRate.with, ...atRate.without].reduce((n, s) => n + s.errors, 0);
  const withCounts = counts[clientIds.with] ?? { bookings: 0, outbox: 0 };
  const withoutCounts = counts[clientIds.without] ?? { bookings: 0, outbox: 0 };
  // A round's end leaves up to CONNECTIONS requests unanswered to autocannon that the server still
  // books: the database may hold a few more bookings than the 201s counted, never fewer.
  const rowsPass =
    withCounts.bookings >= feed.created.with &&
    withoutCounts.bookings >= feed.created.without &&
    withCounts.outbox === ROWS_PER_BOOKING * withCounts.bookings &&
    withoutCounts.outbox === 0;
  const perRound = rounds
    .map(
      (r, i) =>
        `${i + 1}: ${roundRatios[i]!.toFixed(2)} (${rounded(r.with.requestsPerSecond)} and ${rounded(r.without.requestsPerSecond)})`,
    )
    .join('; ');
  const deliveryProblems = [...exactlyOnce.email.problems, ...exactlyOnce.sms.problems];
  const perBooking = (side: Side) => writes.serverCpu[side].ms / Math.max(1, writes.serverCpu[side].bookings);
  const cpuWith = perBooking('with');
  const cpuWithout = perBooking('without');
  const inFlight = Math.max(...timed.map((r) => r.maxInFlight));

  return {
    kind: 'throughput',
    subject: `the outbox write on POST ${PATH}, and delivery`,
    method: [
      `Write: the full stack of \`bookings-endpoint\` (the real app, \`buildApp\` with the production dependencies of \`src/runtime.ts\`, a clock fixed at ${BOOKINGS_SCENARIO.now}, in-memory rate-limit store, no logger; a child process with \`NODE_ENV=production\`) on the same SQLite scenario (\`bench/lib/bookings-database.ts\`: one location, ${BOOKINGS_SCENARIO.staff} staff, one 15-minute service without deposit), with the clients of \`bench/lib/outbox-database.ts\`. autocannon drives POST ${PATH} over ${CONNECTIONS} keep-alive connections, every request for the next free slot of one sequence shared by both sides, so every answer must be 201. The two sides are the same server, the same code and the same requests; only the client booked for differs. **With the outbox write**: a client with a phone and an e-mail, so each confirmed booking writes ${ROWS_PER_BOOKING} outbox rows (the confirmation and the reminder, by SMS and by e-mail) in one multi-row INSERT in the booking's transaction. **Without**: a client with neither, so \`queueMessages\` finds no channel and writes nothing; everything else the booking does (the availability re-check, the bookings, booking_services, booking_events and booking_pages rows, the group commit, the 201) is the same. The schema requires a phone or an e-mail of every client, so the bench plants that one client with \`PRAGMA ignore_check_constraints\` while seeding; no other row breaks a rule. The difference between the sides is therefore the whole cost of the outbox write (building the rows, the INSERT into the table and its two indexes, the foreign key check, the larger savepoint journal and WAL commit), and nothing the outbox-less code paid before it.`,
      `After one checked booking per side and ${WARM_UP_S} s of each side at saturation, the sides alternate in ${SATURATION_ROUNDS} rounds of ${writes.roundS} s per side at saturation, in the order without-with, with-without, and so on, so that each side goes first as often (the bookings table grows through the run, and noise from other work on the machine comes and goes); bookings/s is bookings over measuring time, each side over all its rounds, and the ratio is with / without. Around each of those rounds the server reports its own CPU time (\`process.cpuUsage\`) and the bookings it stored, which gives each side's CPU time per booking: less disturbed by other work on a shared machine than a rate, but blind to the time a COMMIT waits for the disk. Then they alternate the same way in ${LATENCY_ROUNDS} rounds of ${writes.latencyRoundS} s per side at a fixed ${rate} bookings/s (${Math.round(LATENCY_SHARE * 100)} % of the rate with the write at saturation; open-loop, \`bench/lib/paced-load.ts\`, latency from when each request was due), each percentile the median over the rounds. The server's database held ${(withCounts.bookings + withoutCounts.bookings).toLocaleString('en-GB')} bookings and ${withCounts.outbox.toLocaleString('en-GB')} outbox rows at the end.`,
      `Delivery: a second child process (\`NODE_ENV=production\`) runs the delivery of \`src/app/outbox-delivery.ts\` with the providers of \`sendersFor\`: e-mail through nodemailer (pooled, 4 connections) to an SMTP server (the \`smtp-server\` package), SMS through the \`twilio\` package to an HTTP stand-in answering as Twilio's Messages API (form, basic auth and idempotency token checked), both stand-ins from \`test/helpers/message-sinks.ts\`, running in the runner process on the other core. Its database is the same scenario, seeded through \`createBooking\` with bookings of a client who has only a phone and of one who has only an e-mail, one batch per channel and round, each batch's confirmations due one minute after the previous batch's (the reminders are due in 2031). For each batch the worker's clock is set to its minute and \`deliverAllDue\` (what \`booking outbox deliver\` runs; \`booking serve\`'s worker runs the same \`deliverDueMessages\` batch after batch) delivers everything due, one batch of messages claimed and sent at a time (up to ${inFlight} sends were in flight at once): claim in a write transaction, read the booking and render the message, send, record the outcome. After ${DELIVERY_WARM_UP} messages per channel untimed, the channels alternate in ${DELIVERY_ROUNDS} rounds of ${DELIVERY_BATCH} messages (e-mail first, then SMS first); messages/s is messages over the wall time of deliverAllDue, and the percentiles are those of one provider call (from handing the message to nodemailer or twilio to the provider's acceptance). Every message must then be recorded sent after one attempt, with the provider's id, and received by its stand-in exactly once under its outbox id (Message-ID, idempotency token); nothing else may arrive.`,
    ],
    rows: [
      loadRow(
        `Full stack with the outbox write (phone and e-mail: ${ROWS_PER_BOOKING} rows), saturation`,
        withStats,
      ),
      loadRow('Same stack without it (neither: no row), saturation', withoutStats),
      medianRow(
        `Full stack with the outbox write at ${rate}/s`,
        atRate.with.map((s) => loadRow('', s)),
      ),
      medianRow(
        `Same stack without it at ${rate}/s`,
        atRate.without.map((s) => loadRow('', s)),
      ),
      email,
      sms,
    ],
    ratios: [
      { label: 'Bookings/s with / without the outbox write, saturation', value: ratio.toFixed(2) },
      {
        label: 'Per saturation round (with / without, then each side\u2019s bookings/s)',
        value: `${perRound}; median ${median(roundRatios).toFixed(2)}`,
      },
      {
        label: 'Server CPU time per booking stored at saturation (user and system, the server process)',
        value: `with ${cpuWith.toFixed(3)} ms, without ${cpuWithout.toFixed(3)} ms: without / with ${(cpuWithout / cpuWith).toFixed(2)}`,
      },
      {
        label: 'The machine during the saturation rounds',
        value: machineLine(writes.machine),
      },
      {
        label: 'Delivery, messages/s',
        value: `e-mail ${rounded(email.perSecond)}, SMS ${rounded(sms.perSecond)} (${timed.length} timed batches, ${exactlyOnce.email.expected + exactlyOnce.sms.expected} messages delivered in all, warm-up included)`,
      },
    ],
    targets: [
      {
        description: `Bookings/s with the outbox write ≥ ${MIN_RATIO} × without (saturation, same server, same run)`,
        measured: `${ratio.toFixed(2)} (${Math.round(withStats.requestsPerSecond)} against ${Math.round(withoutStats.requestsPerSecond)} bookings/s)`,
        pass: ratio >= MIN_RATIO,
      },
      {
        description: 'Every response 201 (each request for a distinct free slot), no socket errors',
        measured: `${(feed.created.with + feed.created.without).toLocaleString('en-GB')} × 201, ${failures.count} other${failures.detail}, ${errors} errors`,
        pass: failures.count === 0 && errors === 0,
      },
      {
        description: `Outbox rows: ${ROWS_PER_BOOKING} per booking with the write, none without`,
        measured: `with: ${withCounts.outbox.toLocaleString('en-GB')} rows for ${withCounts.bookings.toLocaleString('en-GB')} bookings stored (${feed.created.with.toLocaleString('en-GB')} answered 201 in time); without: ${withoutCounts.outbox} rows for ${withoutCounts.bookings.toLocaleString('en-GB')} (${feed.created.without.toLocaleString('en-GB')})`,
        pass: rowsPass,
      },
      {
        description:
          'Every message delivered recorded sent after one attempt and accepted by its stand-in exactly once, nothing else received',
        measured: `e-mail: ${exactlyOnce.email.expected} sent, ${exactlyOnce.email.received} received, ${exactlyOnce.email.accepted} distinct; SMS: ${exactlyOnce.sms.expected} sent, ${exactlyOnce.sms.received} received, ${exactlyOnce.sms.accepted} distinct${deliveryProblems.length > 0 ? ` (${deliveryProblems.join('; ')})` : ''}`,
        pass: deliveryProblems.length === 0,
      },
    ],
  };
}

const rounded = (n: number) => Math.round(n).toLocaleString('en-GB');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1
    ? (sorted[Math.floor(middle)] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function machineLine({ cpu, loadBefore, loadAfter }: WritePhase['machine']): string {
  const load = `load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`;
  if (!cpu) return load;
  const ours = (cpu.groups.runner ?? 0) + (cpu.groups.server ?? 0);
  const outside = Math.max(0, cpu.machineBusy - ours);
  return `${cpu.machineBusy.toFixed(2)} of ${cpu.cores} cores busy, ${outside.toFixed(2)} of them outside this benchmark (other work on the shared machine, the kernel); ${load}`;
}

import { loadavg } from 'node:os';
import type { RawResult } from 'autocannon';
import type { Benchmark, BenchmarkResult, Target, ThroughputRow } from './lib/benchmark.ts';
import { BOOKINGS_SCENARIO } from './lib/bookings-database.ts';
import { LATENCY_ROUNDS, ROUNDS, WARM_UP_S } from './lib/compare.ts';
import { type LoadStats, type LoadTarget, runLoad, summarise } from './lib/load.ts';
import { runPacedLoad } from './lib/paced-load.ts';
import {
  censusSlot,
  DIARY_DAYS,
  type DiarySlot,
  diarySlot,
  ORGANISATIONS,
  type Organisation,
  PUBLIC_BOOKING_SCENARIO,
  publicPhone,
} from './lib/public-booking-database.ts';
import { startServerProcess } from './lib/server-process.ts';
import { loadRow, medianRow } from './lib/throughput-rows.ts';
import type {
  Census,
  PublicBookingControl,
  PublicBookingStackInfo,
  PublicBookingState,
  Side,
  SideCounts,
} from './public-booking-server.ts';

const STACK_SERVER = new URL('./public-booking-server.ts', import.meta.url);
const REST_PATH = '/v1/bookings';
const pagePath = (organisation: string) => `/p/${organisation}/book`;
/** As bookings-endpoint and outbox: a handful of concurrent clients on SQLite's one writer. */
const CONNECTIONS = 16;
/**
 * Saturation rounds: the three sides take each place in the order twice (rest-code-none,
 * code-none-rest, none-rest-code, then the same backwards), as the tables grow and the machine's noise
 * comes and goes.
 */
const SATURATION_ROUNDS = 6;
/** The fixed-rate phase offers this share of the slowest side's rate at saturation, to every side. */
const LATENCY_SHARE = 0.5;
/** Bookings per side made one at a time through the recorded instance, whose statements are counted. */
const CENSUS_BOOKINGS = 20;
/**
 * The claim's target: the code step costs the public booking at most 15 % of its rate. Its own work is
 * a few microseconds (the code, the token, their hashes); the rest is the scenario's: every booking of
 * the code step's organisation stays an unproven hold, and in this packed diary each slot check reads
 * thousands of them (the page without it confirms at once). Statements and rows, above, are exact.
 */
const MIN_CODE_RATIO = 0.85;
/**
 * What one REST booking of the client on file with a phone writes: the booking, its one segment, its
 * first event, its page's token row, and the confirmation and the reminder by SMS. The same as before
 * issue 38 (commit 732bbd9), when the public page's code step did not exist.
 */
const REST_ROWS: Record<string, number> = {
  bookings: 1,
  booking_services: 1,
  booking_events: 1,
  booking_pages: 1,
  'outbox (confirmed)': 1,
  'outbox (reminder)': 1,
};
/**
 * The SQL statements one REST booking runs when it is the only write of its transaction, key lookup,
 * BEGIN and COMMIT included: as many as before issue 38 (commit 732bbd9, the same census). Fewer is
 * fine; more is work added to the hot path.
 */
const REST_STATEMENTS = 10;

const SIDES: readonly Side[] = ['rest', 'code', 'none'];
const SIDE_NAMES: Record<Side, string> = {
  rest: `REST POST ${REST_PATH}`,
  code: 'public page with the code step',
  none: 'public page without it',
};
/** The status each side answers a booking with: 201 Created, or the page's 303 to the booking's page. */
const EXPECTED: Record<Side, number> = { rest: 201, code: 303, none: 303 };

/**
 * Issue 38's figure: what the public page's code step costs, and that the hot booking path does not
 * pay for it. One server, one run, three sides booking the same kind of slot (one 15-minute service,
 * any staff member, at the next free start of the diary): REST POST /v1/bookings for a client on
 * file with a phone (the hot path, which the code step must leave alone), the public page of an
 * organisation asking the code (a pending_confirmation hold, a client record of its own, the contact
 * and its hashed code in contact_proofs, and one outbox row: the code by SMS), and the public page of
 * an organisation asking none (the same, confirmed at once, with the confirmation and the reminder by
 * SMS instead of the code). A census of single bookings through a recorded instance counts the SQL
 * statements and the rows of each.
 */
export const publicBooking: Benchmark = {
  id: 'public-booking',
  async run(context) {
    context.progress('seeding the two organisations, starting the full stack and its recorded instance…');
    const stack = await startServerProcess<PublicBookingStackInfo>(STACK_SERVER, null, {
      cpuProfileDir: context.cpuProfileDir,
      serveSettings: true,
    });
    try {
      return report(await measure(stack.info, context));
    } finally {
      await stack.stop();
    }
  },
};

interface Measured {
  census: Record<Side, Census>;
  saturation: Record<Side, RawResult[]>;
  /** Per saturation round, in order: each side's figures. */
  rounds: Record<Side, LoadStats>[];
  atRate: Record<Side, LoadStats[]>;
  rate: number;
  feed: Feed;
  /** Over the saturation rounds, per side: the server's CPU time and the bookings it stored. */
  serverCpu: Record<Side, { ms: number; bookings: number }>;
  final: PublicBookingState;
  warmUpErrors: number;
  /** The machine's 1-minute load average before the saturation rounds, after them, and after the fixed-rate ones. */
  loadAverage: { before: number; between: number; after: number };
  roundS: number;
  latencyRoundS: number;
}

async function measure(
  info: PublicBookingStackInfo,
  context: Parameters<Benchmark['run']>[0],
): Promise<Measured> {
  const { durationS, progress } = context;
  const feed = new Feed(info);
  const targets = Object.fromEntries(SIDES.map((side) => [side, feed.targets(side, info.origin)])) as Record<
    Side,
    LoadTarget[]
  >;
  // A side's run: its targets one after the other, sharing the time (REST: half at each organisation).
  const load = async (side: Side, seconds: number) => {
    const results: RawResult[] = [];
    for (const target of targets[side]) {
      results.push(
        await runLoad(target, { connections: CONNECTIONS, durationS: seconds / targets[side].length }),
      );
      feed.assertNoRefusal();
    }
    return results;
  };

  progress(
    `checking one booking per side and organisation, then ${CENSUS_BOOKINGS} per side through the recorded instance…`,
  );
  for (const side of SIDES) for (const target of targets[side]) await bookOnce(target, feed, side);
  const checked = await control<PublicBookingState>(info, { op: 'state' });
  for (const side of SIDES) {
    const one = perBookingCounts(side);
    const n = targets[side].length;
    const expected = {
      bookings: n,
      outbox: n * one.outbox,
      clients: n * one.clients,
      proofs: n * one.proofs,
    };
    if (JSON.stringify(checked.counts[side]) !== JSON.stringify(expected)) {
      throw new Error(
        `The first ${SIDE_NAMES[side]} bookings stored ${JSON.stringify(checked.counts[side])}, not ${JSON.stringify(expected)}.`,
      );
    }
  }
  progress(
    `reading availability of the ${DIARY_DAYS} days booked at each organisation, as clients do before they book…`,
  );
  await readAvailability(info);

  const census = {} as Record<Side, Census>;
  for (const side of SIDES) {
    const recorded = feed.targets(side, info.recordedOrigin, 'census');
    // Uncounted: the recorded instance's first booking at each organisation reads what the measured
    // instance has cached (its own cache is per database handle).
    for (const target of recorded) await bookOnce(target, feed, side);
    await control(info, { op: 'census-begin' });
    for (let i = 0; i < CENSUS_BOOKINGS; i += 1) await bookOnce(recorded[i % recorded.length]!, feed, side);
    census[side] = await control<Census>(info, { op: 'census-end' });
  }

  progress(`warming up each side at saturation (${WARM_UP_S} s each)…`);
  let warmUpErrors = 0;
  for (const side of SIDES) {
    for (const result of await load(side, WARM_UP_S)) warmUpErrors += result.errors + result.timeouts;
  }

  const roundS = durationS / SATURATION_ROUNDS;
  const loadBefore = loadavg()[0] ?? 0;
  const saturation: Record<Side, RawResult[]> = { rest: [], code: [], none: [] };
  const rounds: Record<Side, LoadStats>[] = [];
  const serverCpu: Record<Side, { ms: number; bookings: number }> = {
    rest: { ms: 0, bookings: 0 },
    code: { ms: 0, bookings: 0 },
    none: { ms: 0, bookings: 0 },
  };
  for (let round = 1; round <= SATURATION_ROUNDS; round += 1) {
    const figures: Partial<Record<Side, LoadStats>> = {};
    for (const side of orderOf(round)) {
      progress(
        `saturation round ${round}/${SATURATION_ROUNDS}: ${SIDE_NAMES[side]}, ${roundS.toFixed(2)} s…`,
      );
      const before = await control<PublicBookingState>(info, { op: 'state' });
      const results = await load(side, roundS);
      const after = await control<PublicBookingState>(info, { op: 'state' });
      serverCpu[side].ms += after.cpuMs - before.cpuMs;
      serverCpu[side].bookings += after.counts[side].bookings - before.counts[side].bookings;
      saturation[side].push(...results);
      figures[side] = summarise(LABEL, results);
    }
    rounds.push(figures as Record<Side, LoadStats>);
  }
  const loadAfter = loadavg()[0] ?? 0;

  const slowest = Math.min(...SIDES.map((side) => summarise(LABEL, saturation[side]).requestsPerSecond));
  const rate = Math.max(10, Math.round((LATENCY_SHARE * slowest) / 10) * 10);
  const latencyRoundS = durationS / ROUNDS;
  const atRate: Record<Side, LoadStats[]> = { rest: [], code: [], none: [] };
  for (let round = 1; round <= LATENCY_ROUNDS; round += 1) {
    for (const side of orderOf(round)) {
      progress(`latency at ${rate} bookings/s, round ${round}/${LATENCY_ROUNDS}: ${SIDE_NAMES[side]}…`);
      for (const target of targets[side]) {
        const seconds = latencyRoundS / targets[side].length;
        atRate[side].push(await runPacedLoad(target, { connections: CONNECTIONS, durationS: seconds, rate }));
        feed.assertNoRefusal();
      }
    }
  }
  const final = await control<PublicBookingState>(info, { op: 'state' });
  return {
    census,
    saturation,
    rounds,
    atRate,
    rate,
    feed,
    serverCpu,
    final,
    warmUpErrors,
    loadAverage: { before: loadBefore, between: loadAfter, after: loadavg()[0] ?? 0 },
    roundS,
    latencyRoundS,
  };
}

/** summarise needs a URL only to label autocannon's merged result. */
const LABEL: LoadTarget = { url: 'http://127.0.0.1/' };

/** Round r's order of the sides: each takes each place as often over six rounds. */
function orderOf(round: number): Side[] {
  const shift = (round - 1) % SIDES.length;
  const rotated = [...SIDES.slice(shift), ...SIDES.slice(0, shift)];
  return round > SIDES.length ? rotated.reverse() : rotated;
}

/** What one booking of a side adds to SideCounts. */
function perBookingCounts(side: Side): SideCounts {
  if (side === 'rest') return { bookings: 1, outbox: 2, clients: 0, proofs: 0 };
  // The code: one message. Without it: the confirmation and the reminder, to the phone given.
  return { bookings: 1, outbox: side === 'code' ? 1 : 2, clients: 1, proofs: 1 };
}

/**
 * Hands out the next free slot of each organisation's diary (diarySlot, or censusSlot for the census),
 * one request body each, in order, and counts each side's answers. Each organisation's diary is one
 * sequence shared by the sides that book there: the page (asking the code at slot-studio, none at
 * slot-studio-direct) and REST, which books half its time at each, so both diaries fill alike and
 * each holds REST bookings among the page's. No staff member is named: the sequences give each start
 * to as many bookings as there are staff, so "any staff member" always finds one free, on every side.
 * Every public booking gives a phone no other did.
 */
class Feed {
  readonly #info: PublicBookingStackInfo;
  readonly #next: Record<'diary' | 'census', Record<Organisation, number>> = {
    diary: { withCode: 0, withoutCode: 0 },
    census: { withCode: 0, withoutCode: 0 },
  };
  #phones = 0;
  readonly answered: Record<Side, number> = { rest: 0, code: 0, none: 0 };
  readonly #others: Record<Side, Map<number, number>> = { rest: new Map(), code: new Map(), none: new Map() };

  constructor(info: PublicBookingStackInfo) {
    this.#info = info;
  }

  get handedOut(): Record<Organisation, number> & { phones: number } {
    return { ...this.#next.diary, phones: this.#phones };
  }

  /** A side's targets: REST one per organisation, the page its organisation's form. */
  targets(side: Side, origin: string, sequence: 'diary' | 'census' = 'diary'): LoadTarget[] {
    const at: Organisation[] =
      side === 'rest' ? [...ORGANISATIONS] : [side === 'code' ? 'withCode' : 'withoutCode'];
    return at.map((organisation): LoadTarget => {
      const { slug, writeKey } = this.#info.organisations[organisation];
      const headers: Record<string, string> =
        side === 'rest'
          ? { authorization: `Bearer ${writeKey}`, 'content-type': 'application/json' }
          : // A browser posting the page's form sends its origin (page-shell.ts refuseCrossSiteForm).
            { 'content-type': 'application/x-www-form-urlencoded', origin };
      return {
        url: `${origin}${side === 'rest' ? REST_PATH : pagePath(slug)}`,
        method: 'POST',
        headers,
        body: () => this.nextBody(side, organisation, sequence),
        onStatus: (status) => this.record(side, status),
        expectedStatus: EXPECTED[side],
      };
    });
  }

  /** The next slot's request body: what a client that read availability sends, or the page's form. */
  nextBody(side: Side, organisation: Organisation, sequence: 'diary' | 'census'): string {
    const next = this.#next[sequence];
    const slot: DiarySlot = (sequence === 'diary' ? diarySlot : censusSlot)(next[organisation]);
    next[organisation] += 1;
    const { serviceId, textedClientId } = this.#info.organisations[organisation];
    if (side === 'rest') {
      return JSON.stringify({
        location_slug: PUBLIC_BOOKING_SCENARIO.location,
        service_ids: [serviceId],
        client_id: textedClientId,
        starts_at: slot.startsAtIso,
      });
    }
    const phone = publicPhone(this.#phones);
    this.#phones += 1;
    return new URLSearchParams({
      location: PUBLIC_BOOKING_SCENARIO.location,
      services: serviceId,
      starts_at: slot.startsAtIso,
      first_name: 'Pat',
      last_name: 'Public',
      phone,
    }).toString();
  }

  record(side: Side, status: number): void {
    if (status === EXPECTED[side]) this.answered[side] += 1;
    else this.#others[side].set(status, (this.#others[side].get(status) ?? 0) + 1);
  }

  failures(): { count: number; detail: string } {
    const entries = SIDES.flatMap((side) =>
      [...this.#others[side]].map(([status, n]) => ({ side, status, n })),
    );
    const count = entries.reduce((n, e) => n + e.n, 0);
    const detail = entries.map((e) => `${e.n} × ${e.status} (${SIDE_NAMES[e.side]})`).join(', ');
    return { count, detail: count === 0 ? '' : ` (${detail})` };
  }

  /**
   * Stops the run on any answer but the one expected: every slot asked for is free and every phone
   * new, so a 409 means the slot sequence is wrong and a 429 a cap the scenario should have raised;
   * the figures would measure refusals.
   */
  assertNoRefusal(): void {
    const { count, detail } = this.failures();
    if (count > 0) throw new Error(`${count} bookings not answered as expected${detail}.`);
  }
}

/** One booking through fetch, checked: 201 with the slot asked for, confirmed, or 303 to its page. */
async function bookOnce(target: LoadTarget, feed: Feed, side: Side): Promise<void> {
  const body = target.body?.() ?? '';
  const response = await fetch(target.url, {
    method: 'POST',
    headers: target.headers,
    body,
    redirect: 'manual',
  });
  const text = await response.text();
  feed.record(side, response.status);
  if (response.status !== EXPECTED[side]) {
    throw new Error(`${SIDE_NAMES[side]} answered ${response.status}: ${text.slice(0, 300)}`);
  }
  if (side === 'rest') {
    const asked = JSON.parse(body) as { starts_at: string };
    const booked = (JSON.parse(text) as { data?: { starts_at?: string; status?: string } }).data;
    if (Date.parse(booked?.starts_at ?? '') !== Date.parse(asked.starts_at) || booked?.status !== 'confirmed')
      throw new Error(`The REST booking is not the confirmed slot asked for: ${text.slice(0, 300)}`);
  } else if (!/^\/p\/manage\/[A-Za-z0-9_-]{43}$/.test(response.headers.get('location') ?? '')) {
    throw new Error(
      `The page did not send the customer to the booking's page: ${response.headers.get('location')}`,
    );
  }
}

/**
 * GET availability of every day of the diary once, through the measured instance, as the REST side's
 * clients would have before booking: the booking then reuses the day's calendars the read left in the
 * catalogue cache (readCatalogue), as it does on a serving instance, rather than reading them on its
 * first booking of each day. The page's booking reads them afresh every time, whatever was read.
 */
async function readAvailability(info: PublicBookingStackInfo): Promise<void> {
  const asks = ORGANISATIONS.flatMap((organisation) =>
    Array.from({ length: DIARY_DAYS }, (_, day) => ({ organisation, date: diarySlot(day).date })),
  );
  const readers = 4;
  await Promise.all(
    Array.from({ length: readers }, async (_, reader) => {
      for (let i = reader; i < asks.length; i += readers) {
        const { organisation, date } = asks[i]!;
        const { serviceId, writeKey } = info.organisations[organisation];
        const query = new URLSearchParams({ service_ids: serviceId, date });
        const response = await fetch(
          `${info.origin}/v1/locations/${PUBLIC_BOOKING_SCENARIO.location}/availability?${query}`,
          { headers: { authorization: `Bearer ${writeKey}` } },
        );
        const text = await response.text();
        if (response.status !== 200)
          throw new Error(`Availability of ${date} answered ${response.status}: ${text.slice(0, 300)}`);
      }
    }),
  );
}

async function control<T>(info: PublicBookingStackInfo, body: PublicBookingControl): Promise<T> {
  const response = await fetch(info.controlOrigin, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`The stack's control failed: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as T;
}

/**
 * A statement by what it does and to which table: "insert outbox", "select contact_proofs", "begin";
 * a SELECT by the table of its own FROM, not of a subquery's.
 */
function statementKind(text: string): string {
  let flat = text.trim().replace(/\s+/g, ' ');
  while (/\([^()]*\)/.test(flat)) flat = flat.replace(/\([^()]*\)/g, '');
  const verb = (/^(\w+)/.exec(flat)?.[1] ?? '?').toLowerCase();
  const table = (pattern: RegExp) => pattern.exec(flat)?.[1];
  const named =
    verb === 'insert'
      ? table(/^insert into "?(\w+)"?/i)
      : verb === 'update'
        ? table(/^update "?(\w+)"?/i)
        : verb === 'delete'
          ? table(/^delete from "?(\w+)"?/i)
          : verb === 'select' || verb === 'with'
            ? table(/\bfrom "?(\w+)"?/i)
            : undefined;
  return named ? `${verb} ${named}` : verb;
}

/** Statements per booking by kind, in the order first seen. */
function statementsPerBooking(census: Census): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const text of census.statements) {
    const kind = statementKind(text);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  for (const [kind, n] of kinds) kinds.set(kind, n / CENSUS_BOOKINGS);
  return kinds;
}

function rowsPerBooking(census: Census): Record<string, number> {
  return Object.fromEntries(Object.entries(census.rows).map(([table, n]) => [table, n / CENSUS_BOOKINGS]));
}

const sameRecord = (a: Record<string, number>, b: Record<string, number>) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

function report(m: Measured): BenchmarkResult {
  const { feed, rate, final } = m;
  const saturation = Object.fromEntries(
    SIDES.map((side) => [side, summarise(LABEL, m.saturation[side])]),
  ) as Record<Side, LoadStats>;
  const perSecond = (side: Side) => saturation[side].requestsPerSecond;
  const codeOverRest = perSecond('code') / perSecond('rest');
  const codeOverNone = perSecond('code') / perSecond('none');
  const cpuPerBooking = (side: Side) => m.serverCpu[side].ms / Math.max(1, m.serverCpu[side].bookings);

  // autocannon counts the page's 303 among its non-2xx; any answer but the one expected stopped the
  // run (Feed.assertNoRefusal), so what can fail here is the socket.
  const row = (label: string, s: LoadStats): ThroughputRow => ({ ...loadRow(label, s), failures: s.errors });
  const atRateRow = (label: string, side: Side) =>
    medianRow(
      label,
      m.atRate[side].map((s) => loadRow('', s)),
    );

  const statements = Object.fromEntries(
    SIDES.map((side) => [side, statementsPerBooking(m.census[side])]),
  ) as Record<Side, Map<string, number>>;
  const rows = Object.fromEntries(SIDES.map((side) => [side, rowsPerBooking(m.census[side])])) as Record<
    Side,
    Record<string, number>
  >;
  const total = (side: Side) => [...statements[side].values()].reduce((n, k) => n + k, 0);
  const touches = (side: Side, table: string) =>
    [...statements[side].keys()].some((k) => k.endsWith(` ${table}`));

  const restStatements = total('rest');
  const restPass =
    sameRecord(rows.rest, REST_ROWS) &&
    restStatements <= REST_STATEMENTS &&
    !touches('rest', 'contact_proofs');
  // The page without the code step confirms, and announces it as REST does; with it, the code instead.
  const { 'outbox (confirmed)': confirmed, 'outbox (reminder)': reminder, ...noneElse } = rows.none;
  const codeStepPass =
    confirmed === 1 &&
    reminder === 1 &&
    sameRecord(rows.code, { ...noneElse, 'outbox (verification_code)': 1 }) &&
    sameRecord(Object.fromEntries(statements.code), Object.fromEntries(statements.none));

  const expectedTotals = (side: Side): SideCounts => {
    const one = perBookingCounts(side);
    const n = final.counts[side].bookings;
    return { bookings: n, outbox: one.outbox * n, clients: one.clients * n, proofs: one.proofs * n };
  };
  const storedPass =
    SIDES.every((side) => sameRecord({ ...final.counts[side] }, { ...expectedTotals(side) })) &&
    SIDES.every((side) => final.counts[side].bookings >= feed.answered[side]);
  const failures = feed.failures();
  const errors =
    m.warmUpErrors +
    SIDES.reduce(
      (n, side) =>
        n +
        m.saturation[side].reduce((k, r) => k + r.errors + r.timeouts, 0) +
        m.atRate[side].reduce((k, s) => k + s.errors, 0),
      0,
    );

  const censusTable = [
    '| Per booking | REST | Page, code step | Page, no code step |',
    '| --- | ---: | ---: | ---: |',
    ...censusRows('SQL statements', statements),
    ...censusRows('Rows written', rows),
  ].join('\n');

  const totals = final.counts;
  const perRound = m.rounds
    .map(
      (r, i) =>
        `${i + 1}: ${(r.code.requestsPerSecond / r.rest.requestsPerSecond).toFixed(2)} and ${(r.code.requestsPerSecond / r.none.requestsPerSecond).toFixed(2)}`,
    )
    .join('; ');
  const { withCode, withoutCode, phones } = feed.handedOut;
  const targets: Target[] = [
    {
      description: `The hot path unchanged: a REST booking writes ${describeRows(REST_ROWS)} and runs at most ${REST_STATEMENTS} statements (as before issue 38), none on contact_proofs`,
      measured: `${describeRows(rows.rest)}; ${formatCount(restStatements)} statements${touches('rest', 'contact_proofs') ? ', some on contact_proofs' : ''}`,
      pass: restPass,
    },
    {
      description:
        'The code step adds no statement, and writes one outbox row (the code) where the page without it writes two (the confirmation and the reminder); every other row the same',
      measured: `with the code step ${formatCount(total('code'))} statements, ${describeRows(rows.code)}; without ${formatCount(total('none'))}, ${describeRows(rows.none)}`,
      pass: codeStepPass,
    },
    {
      description: `Bookings/s on the page with the code step ≥ ${MIN_CODE_RATIO} × without it (saturation, same server, same run)`,
      measured: `${codeOverNone.toFixed(2)} (${Math.round(perSecond('code'))} against ${Math.round(perSecond('none'))})`,
      pass: codeOverNone >= MIN_CODE_RATIO,
    },
    {
      description: 'Every answer the one expected (201 REST, 303 page), no socket errors',
      measured: `${SIDES.map((side) => `${feed.answered[side].toLocaleString('en-GB')} × ${EXPECTED[side]}`).join(', ')}; ${failures.count} other${failures.detail}, ${errors} errors`,
      pass: failures.count === 0 && errors === 0,
    },
    {
      description:
        'Stored over the run, per booking: REST 2 outbox rows; the page 1 client record and 1 contact_proofs row, and 1 outbox row with the code step, 2 without',
      measured: SIDES.map(
        (side) =>
          `${SIDE_NAMES[side]}: ${totals[side].bookings.toLocaleString('en-GB')} bookings, ${totals[side].outbox.toLocaleString('en-GB')} outbox, ${totals[side].clients.toLocaleString('en-GB')} clients, ${totals[side].proofs.toLocaleString('en-GB')} contact_proofs`,
      ).join('; '),
      pass: storedPass,
    },
  ];

  return {
    kind: 'throughput',
    subject: `POST ${pagePath('{org}')} with the code step, against POST ${REST_PATH}`,
    method: [
      `What the public page's code step (issue 38) costs, and that REST's booking path does not pay for it. One full stack (the real app, production wiring, \`booking serve\`'s V8 settings, clock fixed at ${BOOKINGS_SCENARIO.now}, no logger; a child process, \`NODE_ENV=production\`) on one SQLite file holding the bookings scenario (${BOOKINGS_SCENARIO.staff} staff, one 15-minute service) as two organisations that differ only in \`policies.public_verification\` (\`bench/lib/public-booking-database.ts\`). Three sides book the same slot shape, the service at a free start with any staff member: **REST**, POST ${REST_PATH} for a client on file with a phone only, half the time at each organisation (confirmed; the confirmation and the reminder by SMS); **page, code step**, the form POST ${pagePath(PUBLIC_BOOKING_SCENARIO.withCode)} (a pending_confirmation hold on a client record of its own, its contact_proofs row with the code's hashes, and the code by SMS, its one message); **page, no code step**, the same form at ${pagePath(PUBLIC_BOOKING_SCENARIO.withoutCode)} (\`none\`: confirmed, the same client record and contact_proofs row without hashes, the confirmation and the reminder by SMS). Each form gives a new phone (+44 7400 000000 onwards, ${phones.toLocaleString('en-GB')} in this run), so the per-contact caps (left at 2 live holds, 3 a day) are read but never refuse; the load all comes from 127.0.0.1, so each catalogue raises \`public_attempts_per_address_per_hour\` and \`public_bookings_per_organisation_per_hour\` to their most, 100,000, and the server the pages' per-address limit (120 a minute) to a billion.`,
      `Each organisation's diary is one sequence over ${DIARY_DAYS.toLocaleString('en-GB')} days, day after day (\`diarySlot\`; ${withCode.toLocaleString('en-GB')} and ${withoutCode.toLocaleString('en-GB')} bookings in this run): "any staff member" reads its day's bookings, and the bookings scenario's day-by-day sequence (1,152 a day) made that read most of a booking's cost, differently for each side. Before the load the server reads availability of every day once, as clients do before booking, which leaves the calendars in the catalogue cache a REST booking reuses (the page reads them every time). The census: after one uncounted booking per organisation, ${CENSUS_BOOKINGS} bookings per side one at a time through a second instance of the app on its own connection opened with \`openDatabase\`'s \`onQuery\`, which notes every statement; table counts before and after give the rows. Then ${WARM_UP_S} s per side at saturation (autocannon, ${CONNECTIONS} connections) and ${SATURATION_ROUNDS} rounds of ${m.roundS.toFixed(2)} s per side, each side in each place of the order twice, the server reporting its CPU time and the bookings stored around each; then ${LATENCY_ROUNDS} rounds of ${m.latencyRoundS} s per side at ${rate} bookings/s (half the slowest side's saturated rate; open-loop, \`bench/lib/paced-load.ts\`), each percentile the median over the rounds. The machine is shared (2 cores): its load average (1 min) was ${m.loadAverage.before.toFixed(2)} before the saturation rounds, ${m.loadAverage.between.toFixed(2)} after them and ${m.loadAverage.after.toFixed(2)} after the fixed-rate ones; above 2, the fixed-rate tails show the stalls of other work on the machine as much as this server's.`,
      `Per booking, from the census (the whole request, when it is the only write of its transaction):\n\n${censusTable}`,
    ],
    rows: [
      row('Full stack: page with the code step, saturation', saturation.code),
      row(`REST POST ${REST_PATH}, saturation`, saturation.rest),
      atRateRow(`Full stack: page with the code step at ${rate}/s`, 'code'),
      atRateRow(`REST POST ${REST_PATH} at ${rate}/s`, 'rest'),
      row('Page without the code step, saturation', saturation.none),
      atRateRow(`Page without the code step at ${rate}/s`, 'none'),
    ],
    ratios: [
      {
        label: 'Bookings/s at saturation, page with the code step / REST',
        value: `${codeOverRest.toFixed(2)}; page with the code step / without it: ${codeOverNone.toFixed(2)}`,
      },
      { label: 'Per saturation round (code step / REST and code step / without it)', value: perRound },
      {
        label: 'Server CPU time per booking stored at saturation (user and system)',
        value: `REST ${cpuPerBooking('rest').toFixed(3)} ms, page with the code step ${cpuPerBooking('code').toFixed(3)} ms, without it ${cpuPerBooking('none').toFixed(3)} ms: code step / REST ${(cpuPerBooking('code') / cpuPerBooking('rest')).toFixed(2)}, code step / without it ${(cpuPerBooking('code') / cpuPerBooking('none')).toFixed(2)}`,
      },
    ],
    targets,
  };
}

/**
 * A part of the census table: its total per side, then its kinds (statements by verb and table, rows
 * by table), those that every side has alike folded into one row.
 */
function censusRows(
  title: string,
  perSide: Record<Side, Map<string, number> | Record<string, number>>,
): string[] {
  const of = (side: Side) => {
    const counts = perSide[side];
    return counts instanceof Map ? counts : new Map(Object.entries(counts));
  };
  const kinds = [...new Set(SIDES.flatMap((side) => [...of(side).keys()]))];
  const alike = kinds.filter((k) => SIDES.every((side) => of(side).get(k) === of('rest').get(k)));
  const cells = (count: (side: Side) => number) =>
    SIDES.map((side) => (count(side) === 0 ? '' : formatCount(count(side)))).join(' | ');
  const sum = (side: Side, among: readonly string[]) => among.reduce((n, k) => n + (of(side).get(k) ?? 0), 0);
  return [
    `| **${title}** | ${SIDES.map((side) => `**${formatCount(sum(side, kinds))}**`).join(' | ')} |`,
    ...(alike.length > 0
      ? [`| ${alike.map((k) => `\`${k}\``).join(', ')} (alike) | ${cells((side) => sum(side, alike))} |`]
      : []),
    ...kinds
      .filter((k) => !alike.includes(k))
      .map((k) => `| \`${k}\` | ${cells((side) => of(side).get(k) ?? 0)} |`),
  ];
}

function describeRows(rows: Record<string, number>): string {
  return Object.entries(rows)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([table, n]) => `${formatCount(n)} ${table}`)
    .join(', ');
}

/** A per-booking count: whole when it is (it should be), else two decimals, which shows it is not. */
function formatCount(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

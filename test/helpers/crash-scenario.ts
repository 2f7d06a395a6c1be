import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import { DateTime } from 'luxon';
import { type Db, openDatabase, sqliteFileOf } from '../../src/data/database.ts';
import { checkIntegrity, type IntegrityReport } from '../../src/data/integrity-check.ts';
import { type RunningServer, runCli, startServer } from './cli.ts';
import { copyTestDatabase, databaseNameOf, dropDatabase, postgresUrlOf } from './postgres-test-server.ts';
import { freshDatabaseUrl, onPostgres } from './temp-database.ts';

/**
 * The crash test as a reusable scenario: a real `booking serve` process takes a booking load, is
 * killed with SIGKILL while requests are in flight (no shutdown handler runs: on SQLite, the WAL is
 * left as it was; on PostgreSQL, the server's connections drop with their transactions open), is
 * restarted on the same database, and every promise the API made before the kill is checked against
 * what the restarted server and the database hold.
 *
 * What counts as a promise: a 201 the client received in full. A request whose answer did not arrive
 * (its socket died with the process) has an unknown outcome: it may have been committed or not, and
 * an idempotent retry must settle it either way, with exactly one booking per key in the end.
 */
export interface CrashScenarioOptions {
  /** A fresh directory for the catalogue and, on SQLite, the database file. */
  dir: string;
  /**
   * Concurrent load workers. Each is one customer registered through POST /v1/clients and keeps one
   * booking request in flight at a time, so this is also how many requests are in flight at the kill.
   */
  clients: number;
  /**
   * The server is killed as soon as this many bookings were answered 201: with the next request sent
   * (with `abandonInFlight`, as the last of these answers starts to arrive, and that one is abandoned
   * unread).
   */
  killAfterCreated: number;
  /**
   * At the kill, also abandon the requests still outstanding on the client side, as a client whose
   * connection drops does. Answers already on their way are then never read, so requests the server
   * committed just before dying (at least the one whose answer triggered the kill) are among the
   * unknown ones, and their retries must replay the stored 201. Without this, such answers are
   * usually still read: the kernel delivers what the dead server had written, and only requests of
   * the next, uncommitted group stay unknown.
   */
  abandonInFlight?: boolean;
  /**
   * A database made by `prepareCrashDatabase`, copied for the round instead of importing the catalogue
   * again: rounds of the scenario then spend their time on the crash, not on the command line.
   */
  prepared?: PreparedDatabase;
  /** Where the round's database is made; by default, where the test run's databases are. */
  databases?: CrashDatabases;
  /**
   * A webhook receiver: before the load, an endpoint subscribed to booking.created is made for it
   * (the servers allow loopback endpoints), and once everything settled the database must hold one
   * booking.created per booking and none without one: the event commits with its booking or not at all.
   */
  webhooks?: {
    url: string;
    /** Told the endpoint's secret, to verify signatures with. */
    onSecret(secret: string): void;
    /**
     * The references whose booking.created the receiver took (answered 2xx) so far. Given, every
     * booking that must exist has to have been taken before the restarted server stops: what the
     * killed server had claimed and not settled is sent again once its lease (30 s) lapses, so this
     * can add that much to the round.
     */
    createdReferences?: () => ReadonlySet<string>;
  };
}

/** A database of the scenario: its DATABASE_URL, and how to remove it once done with. */
export interface CrashDatabase {
  url: string;
  /** Removes a PostgreSQL database (a SQLite file goes with its directory). */
  drop(): Promise<void>;
}

export interface PreparedDatabase extends CrashDatabase {
  /** Holds the crash catalogue and this key, and nothing is connected to it (a SQLite file has no WAL). */
  apiKey: string;
}

/** How the scenario makes its databases: empty ones, and copies of a prepared one for each round. */
export interface CrashDatabases {
  empty(dir: string): Promise<CrashDatabase>;
  copy(prepared: PreparedDatabase, dir: string): Promise<CrashDatabase>;
}

/** `booking.sqlite` in the directory given; a closed SQLite file is copied as it is. */
export const sqliteFiles: CrashDatabases = {
  async empty(dir) {
    return { url: `sqlite:${path.join(dir, 'booking.sqlite')}`, drop: async () => undefined };
  },
  async copy(prepared, dir) {
    const database = await sqliteFiles.empty(dir);
    const [from, to] = [sqliteFileOf(prepared.url), sqliteFileOf(database.url)];
    if (from === null || to === null) throw new Error(`${prepared.url} is not a SQLite file`);
    if (from !== to) copyFileSync(from, to);
    return database;
  },
};

/**
 * New databases on the suite's PostgreSQL server (their directory unused), copies made with CREATE
 * DATABASE ... TEMPLATE. Nothing to recover there after a kill: the server process dies, the database
 * server does not, and it rolls back the transactions of the connections that went with the process.
 */
const postgresDatabases: CrashDatabases = {
  empty: (dir) => freshDatabaseUrl(dir),
  async copy(prepared) {
    const name = await copyTestDatabase(databaseNameOf(prepared.url));
    return { url: postgresUrlOf(name), drop: () => dropDatabase(name) };
  },
};

/**
 * The databases the test run uses: PostgreSQL in the suite's PostgreSQL run, SQLite files otherwise,
 * and always outside vitest (the benchmarks), where the PostgreSQL test server is not set up.
 */
export function testRunDatabases(): CrashDatabases {
  return onPostgres ? postgresDatabases : sqliteFiles;
}

export interface CrashScenarioReport {
  /** Booking requests sent before the kill. */
  attempted: number;
  /** Bookings answered 201 in full, before or just after the kill (the kill takes a moment to land). */
  answered201: number;
  /** Requests answered 409 (slots are distinct, so none are expected; recorded, not failed). */
  answered409: number;
  /** Requests answered with anything else: always a problem. */
  answeredOther: number;
  /** Of the answered ones, those whose answer arrived after SIGKILL was sent. */
  answeredAfterKill: number;
  /** Requests sent before the kill that got no whole answer: their outcome was unknown. */
  inFlightAtKill: number;
  /** How those requests failed on the client side (socket errors, or abandoned), with counts. */
  inFlightErrors: Record<string, number>;
  /** Of those, the ones the restarted server had committed (it held their idempotency record). */
  committedOfInFlight: number;
  /** Idempotent replays sent after the restart. */
  replayed: number;
  /** Replays whose status or body differed from the first answer, or that did not settle a request. */
  replayMismatches: number;
  /** Bookings answered 201 that GET /v1/bookings/{reference} did not find after the restart. */
  missing: number;
  /** Bookings answered 201 that GET found with another value in some field. */
  changed: number;
  /** Idempotency keys whose final answer is 201: the number of bookings that must exist. */
  keysWith201: number;
  /** Rows in `bookings` once everything settled. */
  bookingsInDatabase: number;
  /** Stored 2xx responses in `idempotency_records` once everything settled. */
  storedResponses: number;
  /** The invariants right after the restart (on SQLite, its WAL recovery), before any replay wrote. */
  integrityAfterRecovery: IntegrityReport;
  /** The invariants once everything settled and the server stopped. */
  integrity: IntegrityReport;
  /**
   * Size of the -wal file the killed server left behind (the restart had to recover it); null on
   * PostgreSQL, whose write-ahead log belongs to the database server, which was not killed.
   */
  walBytesAtKill: number | null;
  /** From spawning the second server to its listening line (on SQLite, includes the WAL recovery). */
  restartMs: number;
  /** From the start of the load to the SIGKILL. */
  killedAtMs: number;
  /**
   * Where the time went: set-up (the command line unless prepared, the first start, clients and
   * availability), load until the killed process exited, restart, checks and replays, final check.
   */
  phaseMs: { setUp: number; load: number; restart: number; verify: number; finalCheck: number };
  /** With `webhooks`: the booking.created events, and (with createdReferences) their delivery. */
  webhooks: {
    /** booking.created events in the database once everything settled (one per booking). */
    events: number;
    /** Bookings that must exist whose booking.created the receiver had not taken by the deadline. */
    undelivered: number | null;
    /** From the restarted server's start until they were found all taken (looked for after the replays). */
    deliveredAfterRestartMs: number | null;
  } | null;
  /** Every broken promise, described (at most MAX_PROBLEMS). */
  problems: string[];
}

const ORG = 'crash-salon';
const LOCATION = 'crash-street';

/** The crash catalogue's organisation and location, for other scenarios on it. */
export { LOCATION as CRASH_LOCATION, ORG as CRASH_ORGANISATION };

const ZONE = 'Europe/London';
const MAX_PROBLEMS = 30;
/** How long the restarted server has to deliver every booking's booking.created (`webhooks`). */
const WEBHOOK_DEADLINE_MS = 45_000;
/** Staff of the crash catalogue, unless told otherwise: about 6,000 free slots in two weeks. */
const DEFAULT_STAFF = 12;
/** Free slots kept beyond the kill threshold, so every worker still has a request in flight at the kill. */
const SLOTS_PER_WORKER_AFTER_KILL = 6;

interface BookingBody {
  location_slug: string;
  service_ids: string[];
  staff_id: string;
  client_id: string;
  starts_at: string;
  notes: string;
}

interface Attempt {
  key: string;
  body: BookingBody;
  /** The exact bytes sent, so a replay sends the very same request. */
  bodyText: string;
  answer?: { status: number; text: string; afterKill: boolean };
  /** Why no answer arrived (socket error after the kill, usually). */
  error?: string;
}

interface Answer {
  status: number;
  text: string;
}

interface Service {
  id: string;
  name: string;
}

interface Slot {
  starts_at: string;
  ends_at: string;
  staff_id: string;
}

export async function runCrashScenario(options: CrashScenarioOptions): Promise<CrashScenarioReport> {
  const databases = options.databases ?? testRunDatabases();
  const lap = stopwatch();
  const database = options.prepared
    ? await databases.copy(options.prepared, options.dir)
    : await databases.empty(options.dir);
  try {
    const apiKey = options.prepared?.apiKey ?? importCrashCatalogue(database.url, options.dir, DEFAULT_STAFF);
    return await crashAndVerify(database.url, apiKey, options, lap);
  } finally {
    await database.drop();
  }
}

async function crashAndVerify(
  url: string,
  apiKey: string,
  options: CrashScenarioOptions,
  lap: () => number,
): Promise<CrashScenarioReport> {
  const env: Record<string, string> = {
    DATABASE_URL: url,
    ...(options.webhooks && { WEBHOOK_ALLOW_INSECURE: '1' }),
  };
  const file = sqliteFileOf(url);
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };

  const first = await startServer(['--port', '0'], env);
  let load: LoadOutcome;
  let setUp: number;
  try {
    const api = apiClient(first.url, apiKey);
    if (options.webhooks) await subscribeReceiver(api, options.webhooks);
    const clientIds = await registerClients(api, options.clients);
    const slotsNeeded = options.killAfterCreated + options.clients * SLOTS_PER_WORKER_AFTER_KILL;
    const requests = await bookingRequests(api, slotsNeeded);
    setUp = lap();
    load = await runLoadAndKill(api, first, requests, clientIds, options);
  } finally {
    // Whatever went wrong, the first server must not outlive the scenario (a no-op once killed).
    if (first.process.exitCode === null && first.process.signalCode === null) await first.stop('SIGKILL');
  }
  const walBytesAtKill = file === null ? null : existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0;
  const loadMs = lap();

  // On SQLite, the new process recovers the WAL the killed one left when it opens the file.
  const restarting = performance.now();
  const second = await startServer(['--port', '0'], env);
  const restartMs = lap();
  const api = apiClient(second.url, apiKey);
  // A second connection to the database, for what the API cannot show: the recovered state before
  // any replay writes to it, and which of the unknown requests had been committed.
  const probe = openDatabase(env.DATABASE_URL);
  const answered = load.attempts.filter((attempt) => attempt.answer !== undefined);
  const unknown = load.attempts.filter((attempt) => attempt.answer === undefined);
  /** The reference each idempotency key finally stands for, when its final answer is a 201. */
  const finalReferences = new Map<string, string>();
  let integrityAfterRecovery: IntegrityReport;
  let committedOfInFlight = 0;
  let replayed = 0;
  let replayMismatches = 0;
  let missing = 0;
  let changed = 0;
  let webhooks: CrashScenarioReport['webhooks'] = null;
  try {
    integrityAfterRecovery = await checkIntegrity(probe.db, Date.now());
    const storedBeforeReplay = await storedResponsesOf(
      probe.db,
      unknown.map((attempt) => attempt.key),
    );

    // Every answered 201 is there, exactly as answered. A confirmed booking without a deposit has no
    // field that changes by itself with time: status stays confirmed (only pending holds lapse),
    // pending_confirmation stays null, updated_at moves only when something changes the booking, and
    // there are no fees; GET answers with the same deposit (none) and payment_url (none) as the 201.
    await inParallel(answered, async (attempt) => {
      const { status, text } = attempt.answer!;
      if (status !== 201) return;
      const created = JSON.parse(text).data as Record<string, unknown>;
      finalReferences.set(attempt.key, String(created.reference));
      const expected = created;
      const { deposit, payment_url } = created;
      if (deposit !== null || payment_url !== null) {
        problem(
          `${created.reference}: a booking without deposit was answered with ${deposit}, ${payment_url}`,
        );
      }
      const got = await api.request('GET', `/bookings/${created.reference}`);
      if (got.status !== 200) {
        missing++;
        problem(`${created.reference} was answered 201 but GET answers ${got.status} ${got.text}`);
        return;
      }
      const stored = JSON.parse(got.text).data as Record<string, unknown>;
      // The booking's page link names the address the server was reached at, which the restart moves.
      for (const body of [stored, expected]) {
        if (typeof body.booking_page_url === 'string')
          body.booking_page_url = new URL(body.booking_page_url).pathname;
      }
      if (!isDeepStrictEqual(stored, expected)) {
        changed++;
        problem(`${created.reference} differs in ${differingFields(expected, stored).join(', ')}`);
      }
    });

    // An answered request replayed with its key and body gets the very same answer, byte for byte,
    // and writes nothing (the final count of bookings proves that).
    await inParallel(answered, async (attempt) => {
      const first = attempt.answer!;
      const replay = await api.request('POST', '/bookings', attempt.bodyText, attempt.key);
      replayed++;
      if (replay.status !== first.status || replay.text !== first.text) {
        replayMismatches++;
        problem(
          `replay of ${attempt.key}: ${replay.status} ${replay.text}, first ${first.status} ${first.text}`,
        );
      }
    });

    // A request of unknown outcome is settled by its retry: the stored 201 if it had been committed,
    // a new booking if not. A second retry then returns the first retry's answer, byte for byte:
    // either way exactly one booking exists per key.
    await inParallel(unknown, async (attempt) => {
      const stored = storedBeforeReplay.get(attempt.key);
      if (stored) committedOfInFlight++;
      const retry = await api.request('POST', '/bookings', attempt.bodyText, attempt.key);
      const again = await api.request('POST', '/bookings', attempt.bodyText, attempt.key);
      replayed += 2;
      if (retry.status !== 201) {
        replayMismatches++;
        problem(`retry of unknown ${attempt.key} answered ${retry.status} ${retry.text}`);
        return;
      }
      const reference = String(JSON.parse(retry.text).data.reference);
      finalReferences.set(attempt.key, reference);
      if (again.status !== retry.status || again.text !== retry.text) {
        replayMismatches++;
        problem(`second retry of ${attempt.key}: ${again.status} ${again.text}, first ${retry.text}`);
      }
      if (stored && (stored.status !== 201 || stored.reference !== reference)) {
        replayMismatches++;
        problem(
          `retry of committed ${attempt.key} gave ${reference}, stored ${stored.status} ${stored.reference}`,
        );
      }
      const got = await api.request('GET', `/bookings/${reference}`);
      if (got.status !== 200) {
        missing++;
        problem(`${reference}, settled by a retry, is not found: ${got.status}`);
      }
    });
    // Every booking that must exist had its booking.created delivered, by the killed server before
    // the kill or by this one after it.
    const taken = options.webhooks?.createdReferences;
    if (options.webhooks) webhooks = { events: 0, undelivered: null, deliveredAfterRestartMs: null };
    if (webhooks && taken) {
      const wanted = [...new Set(finalReferences.values())];
      const deadline = Date.now() + WEBHOOK_DEADLINE_MS;
      while (wanted.some((reference) => !taken().has(reference)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const undelivered = wanted.filter((reference) => !taken().has(reference));
      for (const reference of undelivered) problem(`${reference}: its booking.created was never delivered`);
      webhooks.undelivered = undelivered.length;
      webhooks.deliveredAfterRestartMs = Math.round(performance.now() - restarting);
    }
  } finally {
    await probe.close();
    await second.stop();
  }
  const verify = lap();

  // The database on its own, with no server: the invariants, and one booking per key answered 201, each
  // with its stored response (nothing written halfway: no booking without its record, no record
  // without its booking).
  const final = openDatabase(env.DATABASE_URL);
  let integrity: IntegrityReport;
  let bookingsInDatabase: number;
  let storedResponses: number;
  try {
    integrity = await checkIntegrity(final.db, Date.now());
    const bookings = await final.db.selectFrom('bookings').select('reference').execute();
    const records = await final.db
      .selectFrom('idempotency_records')
      .select(['idempotency_key', 'status_code', 'response_body'])
      .execute();
    const successes = records.filter((record) => record.status_code >= 200 && record.status_code < 300);
    bookingsInDatabase = bookings.length;
    storedResponses = successes.length;
    const inDatabase = new Set(bookings.map((row) => row.reference));
    const inRecords = new Set(successes.map((record) => referenceOf(record.response_body)));
    const answeredReferences = new Set(finalReferences.values());
    for (const reference of answeredReferences) {
      if (!inDatabase.has(reference)) problem(`${reference}, answered 201, is not in the bookings table`);
      if (!inRecords.has(reference)) problem(`${reference}, answered 201, has no stored response`);
    }
    for (const reference of inDatabase) {
      if (!answeredReferences.has(reference))
        problem(`${reference} is in the database but was never answered`);
      if (!inRecords.has(reference)) problem(`${reference} is in the database without its stored response`);
    }
    for (const record of successes) {
      if (!finalReferences.has(record.idempotency_key)) {
        problem(`key ${record.idempotency_key} has a stored ${record.status_code} that no answer settled`);
      }
    }
    if (webhooks) {
      // One booking.created per booking, none for a booking that is not there: written with it or not at all.
      const events = await final.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('type', '=', 'booking.created')
        .execute();
      webhooks.events = events.length;
      const ofEvents = events.map((event) => String(JSON.parse(event.payload).data.reference));
      for (const reference of new Set(ofEvents)) {
        const times = ofEvents.filter((r) => r === reference).length;
        if (times !== 1) problem(`${reference} has ${times} booking.created events`);
        if (!inDatabase.has(reference)) problem(`${reference} has a booking.created but no booking`);
      }
      for (const reference of inDatabase) {
        if (!ofEvents.includes(reference)) problem(`${reference} has no booking.created event`);
      }
    }
  } finally {
    await final.close();
  }
  const finalCheck = lap();

  for (const attempt of answered) {
    const { status, text } = attempt.answer!;
    if (status !== 201 && status !== 409) problem(`${attempt.key} was answered ${status} ${text}`);
  }
  const answers = answered.map((attempt) => attempt.answer!);
  return {
    attempted: load.attempts.length,
    answered201: answers.filter((answer) => answer.status === 201).length,
    answered409: answers.filter((answer) => answer.status === 409).length,
    answeredOther: answers.filter((answer) => answer.status !== 201 && answer.status !== 409).length,
    answeredAfterKill: answers.filter((answer) => answer.afterKill).length,
    inFlightAtKill: unknown.length,
    inFlightErrors: countBy(unknown.map((attempt) => attempt.error ?? 'none')),
    committedOfInFlight,
    replayed,
    replayMismatches,
    missing,
    changed,
    keysWith201: finalReferences.size,
    bookingsInDatabase,
    storedResponses,
    integrityAfterRecovery,
    integrity,
    walBytesAtKill,
    webhooks,
    restartMs,
    killedAtMs: load.killedAtMs,
    phaseMs: { setUp, load: loadMs, restart: restartMs, verify, finalCheck },
    problems,
  };
}

/** Milliseconds since the previous call (or since it was made), for the phase timings. */
function stopwatch(): () => number {
  let last = performance.now();
  return () => {
    const now = performance.now();
    const elapsed = Math.round(now - last);
    last = now;
    return elapsed;
  };
}

/** Checks and replays are independent per key: a few at a time keep the verification short. */
const VERIFY_CONCURRENCY = 16;

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: VERIFY_CONCURRENCY }, lane));
}

/**
 * A catalogue with room for thousands of bookings: one location (no deposit, no booking protection),
 * staff working 08:00 to 20:00 every day, a 15-minute trim and a 15-minute wash. Half the staff take
 * single-service bookings, the other half two-service ones, so whole bookings of several services are
 * part of what the crash must not tear apart.
 */
export function crashCatalogue(staffCount: number) {
  const day = [['08:00', '20:00']];
  const week = { mon: day, tue: day, wed: day, thu: day, fri: day, sat: day, sun: day };
  return {
    organisation: {
      slug: ORG,
      name: 'Crash Salon',
      currency: 'GBP',
      booking_reference_prefix: 'CR',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: 'street',
        slug: LOCATION,
        name: 'Crash Street',
        timezone: ZONE,
        active: true,
        policy: { slot_interval_minutes: 15, min_notice_minutes: 60, max_advance_days: 60 },
        booking_protection: { applies: false },
      },
    ],
    services: [
      {
        ref: 'trim',
        name: 'Trim',
        duration_minutes: 15,
        price: { amount: 1500, currency: 'GBP' },
        locations: ['street'],
      },
      {
        ref: 'wash',
        name: 'Wash',
        duration_minutes: 15,
        price: { amount: 800, currency: 'GBP' },
        locations: ['street'],
      },
    ],
    staff: Array.from({ length: staffCount }, (_, i) => ({
      ref: `stylist-${i}`,
      name: `Stylist ${String(i).padStart(2, '0')}`,
      services: ['trim', 'wash'],
      working_hours: { street: week },
    })),
    clients: [],
  };
}

/**
 * A database (a file in `dir` on SQLite) with the crash catalogue of `staff` staff members and a key
 * without a practical rate limit, made with the real command line. Each command closes the database
 * (on SQLite, which checkpoints its WAL), so it can be copied as it is.
 */
export async function prepareCrashDatabase(
  dir: string,
  staff = DEFAULT_STAFF,
  databases: CrashDatabases = testRunDatabases(),
): Promise<PreparedDatabase> {
  const database = await databases.empty(dir);
  try {
    return { ...database, apiKey: importCrashCatalogue(database.url, dir, staff) };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Imports the crash catalogue into an empty database (which the import migrates) and returns a key. */
function importCrashCatalogue(url: string, dir: string, staff: number): string {
  const env = { DATABASE_URL: url };
  const catalogue = path.join(dir, 'catalogue.json');
  writeFileSync(catalogue, JSON.stringify(crashCatalogue(staff)));
  const imported = runCli(['import', catalogue], env);
  if (imported.status !== 0) throw new Error(`import failed: ${imported.stderr}`);
  const args = ['keys', 'create', '--org', ORG, '--label', 'crash', '--scope', 'read_write'];
  const created = runCli([...args, '--rate-limit', '1000000', '--json'], env);
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  return JSON.parse(created.stdout).key;
}

export interface ApiClient {
  /** The response as soon as its headers arrived; its body may still be on the way. */
  send(
    method: string,
    url: string,
    body?: string,
    idempotencyKey?: string,
    signal?: AbortSignal,
  ): Promise<Response>;
  /** The whole answer: status and body. */
  request(method: string, url: string, body?: string, idempotencyKey?: string): Promise<Answer>;
  get<T>(url: string): Promise<T>;
}

export function apiClient(baseUrl: string, apiKey: string): ApiClient {
  const send = (method: string, url: string, body?: string, idempotencyKey?: string, signal?: AbortSignal) =>
    fetch(`${baseUrl}/v1${url}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
      },
      ...(body !== undefined && { body }),
      ...(signal && { signal }),
    });
  const request = async (method: string, url: string, body?: string, idempotencyKey?: string) => {
    const response = await send(method, url, body, idempotencyKey);
    return { status: response.status, text: await response.text() };
  };
  return {
    send,
    request,
    async get<T>(url: string) {
      const answer = await request('GET', url);
      if (answer.status !== 200) throw new Error(`GET ${url} answered ${answer.status} ${answer.text}`);
      return (JSON.parse(answer.text) as { data: T }).data;
    },
  };
}

async function registerClients(api: ApiClient, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const body = { first_name: 'Crash', last_name: `Customer ${i}`, email: `crash-${i}@example.com` };
      const answer = await api.request('POST', '/clients', JSON.stringify(body));
      if (answer.status !== 201) throw new Error(`POST /clients answered ${answer.status} ${answer.text}`);
      return JSON.parse(answer.text).data.id as string;
    }),
  );
}

/** An endpoint for the receiver, subscribed to booking.created; its secret goes to the receiver. */
async function subscribeReceiver(
  api: ApiClient,
  webhooks: NonNullable<CrashScenarioOptions['webhooks']>,
): Promise<void> {
  const body = JSON.stringify({ url: webhooks.url, events: ['booking.created'] });
  const answer = await api.request('POST', '/webhook-endpoints', body);
  if (answer.status !== 201)
    throw new Error(`POST /webhook-endpoints answered ${answer.status} ${answer.text}`);
  webhooks.onSecret(JSON.parse(answer.text).data.secret);
}

export interface BookingRequest {
  serviceIds: string[];
  slot: Slot;
}

/**
 * `count` bookable requests over distinct, non-overlapping slots, from what availability offers each
 * staff member a week and more ahead (the server runs on the real clock), taken from the staff in
 * turn so concurrent requests spread over all of them.
 */
export async function bookingRequests(api: ApiClient, count: number): Promise<BookingRequest[]> {
  const services = await api.get<Service[]>(`/locations/${LOCATION}/services`);
  const trim = services.find((service) => service.name === 'Trim')!.id;
  const wash = services.find((service) => service.name === 'Wash')!.id;
  const staff = await api.get<{ id: string }[]>(`/locations/${LOCATION}/staff`);
  const from = DateTime.now().setZone(ZONE).plus({ days: 7 }).toISODate()!;
  const perStaff: BookingRequest[][] = [];
  for (const [index, member] of staff.entries()) {
    const serviceIds = index % 2 === 0 ? [trim] : [trim, wash];
    const query = `service_ids=${serviceIds.join(',')}&date=${from}&days=14&staff_id=${member.id}`;
    const { slots } = await api.get<{ slots: Slot[] }>(`/locations/${LOCATION}/availability?${query}`);
    // Two-service slots start every 15 minutes but last 30: keep only slots that do not overlap.
    const own: BookingRequest[] = [];
    let freeFrom = 0;
    for (const slot of slots) {
      if (Date.parse(slot.starts_at) < freeFrom) continue;
      own.push({ serviceIds, slot });
      freeFrom = Date.parse(slot.ends_at);
    }
    perStaff.push(own);
  }
  const requests: BookingRequest[] = [];
  for (let round = 0; requests.length < count; round++) {
    const before = requests.length;
    for (const own of perStaff) {
      const next = own[round];
      if (next && requests.length < count) requests.push(next);
    }
    if (requests.length === before) {
      throw new Error(`only ${requests.length} free slots ahead; the scenario needs ${count}`);
    }
  }
  return requests;
}

interface LoadOutcome {
  attempts: Attempt[];
  killedAtMs: number;
}

/**
 * `clientIds.length` workers book in parallel, one request in flight each, every request with a key
 * of its own. Once `killAfterCreated` were answered 201, SIGKILL is sent: with the next request sent
 * (the others wait for their answers), or, with `abandonInFlight`, as the headers of the 201 that
 * reaches the count arrive (and every request is abandoned); from then on nobody starts one.
 */
async function runLoadAndKill(
  api: ApiClient,
  server: RunningServer,
  requests: BookingRequest[],
  clientIds: string[],
  options: CrashScenarioOptions,
): Promise<LoadOutcome> {
  const attempts: Attempt[] = [];
  const abandon = new AbortController();
  let next = 0;
  let created = 0;
  let killed = false;
  let killedAtMs = 0;
  let exited: Promise<number | null> | undefined;
  const started = performance.now();

  const kill = () => {
    killed = true;
    killedAtMs = Math.round(performance.now() - started);
    exited = server.stop('SIGKILL');
    if (options.abandonInFlight) abandon.abort();
  };
  const worker = async (clientId: string) => {
    while (!killed) {
      const request = requests[next++];
      if (!request) return;
      const body: BookingBody = {
        location_slug: LOCATION,
        service_ids: request.serviceIds,
        staff_id: request.slot.staff_id,
        client_id: clientId,
        starts_at: request.slot.starts_at,
        notes: `crash test booking ${attempts.length}`,
      };
      const attempt: Attempt = { key: randomUUID(), body, bodyText: JSON.stringify(body) };
      attempts.push(attempt);
      const answering = api.send('POST', '/bookings', attempt.bodyText, attempt.key, abandon.signal);
      // Enough answered: the kill goes with this request on its way, so that one at least is in flight
      // whatever else the server answered in the same group commit (it may have answered every other
      // request at once, just before the client read the 201 that reached the count).
      if (!options.abandonInFlight && created >= options.killAfterCreated && !killed) kill();
      try {
        const response = await answering;
        const last = response.status === 201 && created + 1 >= options.killAfterCreated;
        if (last && options.abandonInFlight && !killed) kill();
        // An answer counts only once its body was read whole: a 201 whose body the client abandoned
        // promised nothing to it, though the server committed the booking before sending it.
        attempt.answer = { status: response.status, text: await response.text(), afterKill: killed };
      } catch (error) {
        attempt.error = describeError(error);
        continue;
      }
      if (attempt.answer.status === 201) created += 1;
    }
  };
  await Promise.all(clientIds.map(worker));
  if (!killed) throw new Error(`the load ran out of slots after ${created} bookings, before the kill`);
  await exited;
  return { attempts, killedAtMs };
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  return cause ? `${error.message}: ${cause.code ?? cause.message}` : error.message;
}

/** The stored responses of these keys, as the database holds them now. */
async function storedResponsesOf(
  db: Db,
  keys: string[],
): Promise<Map<string, { status: number; reference: string | null }>> {
  const stored = new Map<string, { status: number; reference: string | null }>();
  if (keys.length === 0) return stored;
  const rows = await db
    .selectFrom('idempotency_records')
    .select(['idempotency_key', 'status_code', 'response_body'])
    .where('idempotency_key', 'in', keys)
    .execute();
  for (const row of rows) {
    stored.set(row.idempotency_key, { status: row.status_code, reference: referenceOf(row.response_body) });
  }
  return stored;
}

function referenceOf(responseBody: string): string | null {
  const reference = (JSON.parse(responseBody) as { data?: { reference?: unknown } }).data?.reference;
  return typeof reference === 'string' ? reference : null;
}

function differingFields(expected: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  const fields = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  return [...fields]
    .filter((field) => !isDeepStrictEqual(expected[field], actual[field]))
    .map((field) => `${field} (${JSON.stringify(expected[field])} became ${JSON.stringify(actual[field])})`);
}

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { WEEKDAYS } from '../../src/app/catalogue-import/format/local-times.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { openDatabase, sqliteFileOf } from '../../src/data/database.ts';
import { checkIntegrity, type IntegrityReport } from '../../src/data/integrity-check.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { holdInUseLock } from '../../src/data/postgres.ts';
import { type SqliteConnection, SqliteDatabase } from '../../src/data/sqlite-driver.ts';
import type { Database as Tables } from '../../src/data/tables.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import {
  type CliResult,
  REPO_ROOT,
  type RunningServer,
  runCliAsync as runCliIn,
  startServer,
} from '../helpers/cli.ts';
import { freshDatabaseUrl, onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking check`, `booking backup` and `booking restore` as an operator runs them: real processes on
 * real files, a backup taken from under a `booking serve` that is taking bookings, and a server started
 * on the restored file. The databases are set up in process (migrate, import, a key) to keep the file
 * quick; everything under test runs in child processes. Servers use the real clock, so bookings are
 * taken a week or more ahead. `booking check` runs on both databases; backup and restore are tested on
 * each database with its own means (SQLite's backup API into files; pg_dump archives).
 */
let dir: string;
/** The test's database: a SQLite file in `dir` (not created yet), or a migrated PostgreSQL database. */
let database: { url: string; drop(): Promise<void> };
let env: Record<string, string>;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-ops-'));
  database = await freshDatabaseUrl(dir, { migrated: true });
  // The restore test books a colour, which needs a deposit: the built-in checkout takes it.
  env = { DATABASE_URL: database.url, PAYMENT_PROVIDER: 'local' };
});
afterEach(async () => {
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The test's SQLite file, for the tests of what only SQLite has. */
function databaseFile(): string {
  const file = sqliteFileOf(database.url);
  if (file === null)
    throw new Error('This test works on a SQLite file; mark it describe.skipIf(onPostgres).');
  return file;
}

/** `booking <args>` in a child process, on this test's database unless told otherwise. */
const runCliAsync = (args: string[], extraEnv: Record<string, string> = env) => runCliIn(args, extraEnv);

/** A catalogue in the import format, validated by the import itself. */
type Catalogue = Record<string, unknown>;

/** Ana and Bo cut at Soho every day, so two weeks hold a couple of hundred one-hour slots. */
function everyDayCatalogue(): Catalogue {
  const catalogue = smallCatalogue();
  const everyDay = (from: string, to: string) =>
    Object.fromEntries(WEEKDAYS.map((day) => [day, [[from, to]]]));
  const [ana, bo, ...others] = catalogue.staff;
  return {
    ...catalogue,
    staff: [
      { ...ana, working_hours: { soho: everyDay('09:00', '17:00') } },
      { ...bo, working_hours: { soho: everyDay('10:00', '18:00') } },
      ...others,
    ],
  };
}

/**
 * Migrates the test's database, imports `catalogue` and returns a read_write key without a practical
 * rate limit.
 */
async function createBookingDatabase(catalogue: Catalogue = everyDayCatalogue()): Promise<string> {
  const handle = openDatabase(database.url);
  try {
    await migrateToLatest(handle.db);
    await importCatalogue(handle.db, catalogue, Date.now());
    const input = { organisationSlug: 'acme-hair', label: 'e2e', scope: 'read_write' as const };
    return (await createApiKey(handle.db, { ...input, rateLimitPerMinute: 100_000 }, Date.now())).key;
  } finally {
    await handle.close();
  }
}

/** Checks a database file without writing to it (openDatabase would switch it to WAL). */
async function checkFileReadOnly(at: string): Promise<IntegrityReport> {
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: new SqliteDatabase(at, { readonly: true, fileMustExist: true }) }),
  });
  try {
    return await checkIntegrity(db, Date.now());
  } finally {
    await db.destroy();
  }
}

function readOnly<T>(at: string, read: (sqlite: SqliteConnection) => T): T {
  const sqlite = new SqliteDatabase(at, { readonly: true, fileMustExist: true });
  try {
    return read(sqlite);
  } finally {
    sqlite.close();
  }
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

const referencesIn = (at: string) =>
  readOnly(at, (sqlite) =>
    (sqlite.prepare('SELECT reference FROM bookings').all() as { reference: string }[]).map(
      (row) => row.reference,
    ),
  );

interface Api {
  call<T>(method: string, url: string, body?: unknown): Promise<{ status: number; json: T }>;
  get<T>(url: string): Promise<T>;
}

function apiOf(server: RunningServer, key: string): Api {
  const call = async <T>(method: string, url: string, body?: unknown) => {
    const response = await fetch(`${server.url}/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as T };
  };
  return {
    call,
    async get<T>(url: string) {
      const response = await call<{ data: T }>('GET', url);
      if (response.status !== 200) throw new Error(`GET ${url}: ${JSON.stringify(response.json)}`);
      return response.json.data;
    },
  };
}

interface Service {
  id: string;
  name: string;
  staff: { id: string; name: string }[];
}

interface BookingBody {
  location_slug: string;
  service_ids: string[];
  staff_id: string;
  client_id: string;
  starts_at: string;
}

const HOUR = 3_600_000;

/**
 * One-hour cut slots (45 min plus the 15 min buffer) that do not touch each other, for every staff
 * member, from a week ahead: each can be booked by a request of its own, in any order.
 */
async function freeCutSlots(api: Api): Promise<BookingBody[]> {
  const services = await api.get<Service[]>('/locations/soho/services');
  const cut = services.find((service) => service.name === 'Cut')!;
  const client = await api.get<{ id: string }>('/clients?phone=%2B447911123456');
  const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
  const bodies: BookingBody[] = [];
  for (const staff of cut.staff) {
    const query = `service_ids=${cut.id}&date=${from}&days=14&staff_id=${staff.id}`;
    const { slots } = await api.get<{ slots: { starts_at: string }[] }>(
      `/locations/soho/availability?${query}`,
    );
    let freeFrom = 0;
    for (const slot of slots) {
      const startsAt = Date.parse(slot.starts_at);
      if (startsAt < freeFrom) continue;
      freeFrom = startsAt + HOUR;
      bodies.push({
        location_slug: 'soho',
        service_ids: [cut.id],
        staff_id: staff.id,
        client_id: client.id,
        starts_at: slot.starts_at,
      });
    }
  }
  return bodies;
}

describe('booking check', () => {
  /** Ana's two imported cuts, and the references the check will name. */
  const IMPORTED = ['AC-CHK234', 'AC-CHK567'];

  function withTwoBookings(): Catalogue {
    return {
      ...smallCatalogue(),
      bookings: IMPORTED.map((reference, i) => ({
        reference,
        location: 'soho',
        services: ['cut'],
        staff: 'ana',
        client: 'jo',
        starts_at: `2026-11-24T${10 + i}:00`,
        status: 'confirmed',
      })),
    };
  }

  /**
   * A second copy of a booking (row, services and creation event) in the same slot, written with the
   * overlap guards dropped: the double booking they exist to prevent, complete in every other respect,
   * so only no_double_booking can see it. SQLite's guards are two triggers; PostgreSQL's are a trigger
   * and the exclusion constraint of the same name.
   */
  async function writeDoubleBooking(reference: string, copyReference: string): Promise<void> {
    const { db, dialect, close } = openDatabase(database.url);
    try {
      if (dialect === 'postgres') {
        await sql`ALTER TABLE bookings DROP CONSTRAINT bookings_no_overlap`.execute(db);
      } else {
        await sql`DROP TRIGGER bookings_no_overlap_insert`.execute(db);
        await sql`DROP TRIGGER bookings_no_overlap_update`.execute(db);
      }
      const tables = await db.introspection.getTables();
      const columns = (table: string) =>
        tables.find((found) => found.name === table)!.columns.map((column) => column.name);
      const copyId = randomUUID();
      await db.transaction().execute(async (trx) => {
        const copy = async (table: string, idColumn: string, values: Record<string, string>) => {
          const names = columns(table);
          const selected = names.map((name) => (name in values ? sql`${values[name]}` : sql.ref(name)));
          const rows = sql`SELECT ${sql.join(selected)} FROM ${sql.table(table)}
            WHERE ${sql.ref(idColumn)} = (SELECT id FROM bookings WHERE reference = ${reference})`;
          const into = sql.join(names.map((name) => sql.ref(name)));
          await sql`INSERT INTO ${sql.table(table)} (${into}) ${rows}`.execute(trx);
        };
        await copy('bookings', 'id', { id: copyId, reference: copyReference });
        await copy('booking_services', 'booking_id', { booking_id: copyId });
        await copy('booking_events', 'booking_id', { booking_id: copyId });
      });
    } finally {
      await close();
    }
  }

  it('prints ok for every check of an imported database, also as JSON; exits 1 naming a double booking', async () => {
    await createBookingDatabase(withTwoBookings());

    const [text, json] = await Promise.all([runCliAsync(['check']), runCliAsync(['check', '--json'])]);
    expect(text.status, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toBe('2 bookings, 2 live.');
    const checks = ['storage', 'no_double_booking', 'booking_segments', 'event_log', 'idempotency_records'];
    expect(lines.slice(1).map((line) => line.match(/^(\S+)\s+(\w+):/)?.slice(1))).toEqual(
      checks.map((check) => ['ok', check]),
    );
    expect(json.status, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as IntegrityReport;
    expect(report).toMatchObject({ ok: true, bookings: 2, liveBookings: 2 });
    expect(
      report.findings.map(({ check, violations, examples }) => ({ check, violations, examples })),
    ).toEqual(checks.map((check) => ({ check, violations: 0, examples: [] })));

    await writeDoubleBooking(IMPORTED[0]!, 'AC-DXB234');
    const failedText = await runCliAsync(['check']);
    expect(failedText.status, failedText.stdout).toBe(1);
    expect(failedText.stdout).toContain('3 bookings, 3 live.');
    expect(failedText.stdout).toMatch(/^FAIL no_double_booking: /m);
    const example = failedText.stdout.split('\n').find((line) => line.includes(' overlap for staff '));
    expect(example).toContain(IMPORTED[0]);
    expect(example).toContain('AC-DXB234');
    for (const check of checks.filter((name) => name !== 'no_double_booking')) {
      expect(failedText.stdout).toMatch(new RegExp(`^ok\\s+${check}: `, 'm'));
    }
    expect(failedText.stderr).toContain('error: The database breaks the invariants listed above.');
  });

  // A typo in DATABASE_URL's path: the check reads, so it must say there is nothing there, and name where.
  it.skipIf(onPostgres)('says there is no database at a path with no file, making none', async () => {
    const missing = path.join(dir, 'bookng.sqlite');
    const run = await runCliAsync(['check'], { ...env, DATABASE_URL: `sqlite:${missing}` });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `error: There is no booking database at ${missing}. Check DATABASE_URL, or make one there with \`booking migrate\`.\n`,
    );
    expect(existsSync(missing)).toBe(false);
  });

  // booking backup said "There is no database at ...", other words than every other command's.
  it.skipIf(onPostgres)(
    'backs up no database from a path with no file, saying so as the check does',
    async () => {
      const missing = path.join(dir, 'typo', 'bookng.sqlite');
      const copy = path.join(dir, 'copy.sqlite');
      const run = await runCliAsync(['backup', copy], { ...env, DATABASE_URL: `sqlite:${missing}` });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `error: There is no booking database at ${missing}. Check DATABASE_URL, or make one there with \`booking migrate\`.\n`,
      );
      expect(existsSync(path.dirname(missing))).toBe(false);
      expect(existsSync(copy)).toBe(false);
    },
  );

  // Any failure to read the migrations table was taken for its absence: a server down, a wrong password
  // or database name were all said as "not a booking database", as if the data were gone.
  it.skipIf(onPostgres)(
    'says why it cannot reach a database, keeping "not a booking database" for one without its tables',
    async () => {
      const [down, stranger] = await Promise.all([
        runCliAsync(['check'], { DATABASE_URL: 'postgres://booking@127.0.0.1:9/booking' }),
        (async () => {
          const other = path.join(dir, 'other.sqlite');
          const handle = new SqliteDatabase(other);
          handle.exec('CREATE TABLE notes (body TEXT)');
          handle.close();
          return runCliAsync(['check'], { DATABASE_URL: `sqlite:${other}` });
        })(),
      ]);
      expect(down.status).toBe(1);
      expect(down.stderr).toBe(
        'error: Cannot reach PostgreSQL at 127.0.0.1:9 (DATABASE_URL): the connection was refused. Start PostgreSQL there, or correct DATABASE_URL.\n',
      );
      expect(stranger.status).toBe(1);
      expect(stranger.stderr).toBe(
        `error: SQLite ${path.join(dir, 'other.sqlite')} is not a booking database.\n`,
      );
    },
  );

  it('into a reader that stops at once (`| head -1`): no stack trace, and the status of the check', async () => {
    await createBookingDatabase(withTwoBookings());
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'check'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader goes away before the first line is written: every write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // 'close' waits for all of stderr to be read, which 'exit' may precede.
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|^\s+at /m);
    expect(status).toBe(0);
  });
});

describe.skipIf(onPostgres)('booking backup', () => {
  /** Clients booking at once, each one request at a time with a pause, until the backup has finished. */
  const CLIENTS = 3;
  const PAUSE_MS = 60;
  /** The backup starts once this many bookings were answered, so it copies a database being written. */
  const BOOKED_BEFORE_BACKUP = 12;

  it('copies a serving database while bookings are made, into a checked, standalone file', async () => {
    const file = databaseFile();
    const key = await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    const server = await startServer(['--port', '0'], env);
    const refused: unknown[] = [];
    let answeredBeforeBackup: string[] = [];
    /** Answered 201 to requests sent before the backup process had exited. */
    const bookedBeforeExit: string[] = [];
    let answeredWhileBackupRan = 0;
    let bookedAfterExit: string[] = [];
    let backup: Promise<CliResult> | undefined;
    let backupExited = false;
    try {
      const api = apiOf(server, key);
      const slots = await freeCutSlots(api);
      expect(slots.length).toBeGreaterThan(100);
      let next = 0;
      const book = async (body: BookingBody) => {
        const response = await api.call<{ data?: { reference: string } }>('POST', '/bookings', body);
        if (response.status !== 201) refused.push(response.json);
        return response.json.data?.reference;
      };
      const client = async () => {
        while (!backupExited && next < slots.length) {
          const reference = await book(slots[next++]!);
          if (reference === undefined) continue;
          bookedBeforeExit.push(reference);
          if (backup !== undefined && !backupExited) answeredWhileBackupRan += 1;
          if (bookedBeforeExit.length === BOOKED_BEFORE_BACKUP) {
            answeredBeforeBackup = [...bookedBeforeExit];
            backup = runCliAsync(['backup', backupFile]).finally(() => {
              backupExited = true;
            });
          }
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      expect(backup).toBeDefined();
      const result = await backup!;
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Backed up to \S+: \d+ pages, \d+ KiB, integrity checked\.$/m);
      expect(result.stdout).toContain(backupFile);
      // Bookings taken once the backup is over, which it cannot hold.
      const after = await Promise.all(slots.slice(next, next + CLIENTS).map(book));
      bookedAfterExit = after.filter((reference) => reference !== undefined);
    } finally {
      await server.stop();
    }
    expect(refused).toEqual([]);
    // Bookings went on being made while the backup process ran, not only before it.
    expect(answeredWhileBackupRan).toBeGreaterThan(0);
    expect(bookedAfterExit).toHaveLength(CLIENTS);

    // A single self-contained file, readable by its owner only: rollback journal mode, no WAL, no
    // leftover partial copy beside it.
    expect(readdirSync(dir).filter((name) => name.includes('backup.sqlite'))).toEqual(['backup.sqlite']);
    expect(modeOf(backupFile)).toBe(0o600);
    expect(readOnly(backupFile, (sqlite) => sqlite.pragma('journal_mode', { simple: true }))).toBe('delete');

    const report = await checkFileReadOnly(backupFile);
    expect(report.findings.filter((finding) => finding.violations > 0)).toEqual([]);
    expect(report.ok).toBe(true);

    // One consistent snapshot taken while the backup ran: every booking answered before it started,
    // and only bookings requested before it exited. (Not "answered before it exited": a booking
    // committed just before the snapshot may have its 201 read here after the exit.)
    const inBackup = referencesIn(backupFile);
    expect(report.bookings).toBe(inBackup.length);
    expect(inBackup).toEqual(expect.arrayContaining(answeredBeforeBackup));
    expect(bookedBeforeExit).toEqual(expect.arrayContaining(inBackup));
    expect(inBackup.filter((reference) => bookedAfterExit.includes(reference))).toEqual([]);
    // The server's own file holds every booking answered, backup or not.
    expect(referencesIn(file).sort()).toEqual([...bookedBeforeExit, ...bookedAfterExit].sort());

    // `booking check` on the backup only reads it: no migration, no switch to WAL, not a byte changed.
    const before = readFileSync(backupFile);
    const checked = await runCliAsync(['check'], { DATABASE_URL: `sqlite:${backupFile}` });
    expect(checked.status, checked.stderr).toBe(0);
    expect(readFileSync(backupFile).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith('backup.sqlite'))).toEqual(['backup.sqlite']);
  }, 60_000);

  it('refuses to overwrite an existing file and to write into a missing folder', async () => {
    await createBookingDatabase();
    const existing = path.join(dir, 'precious.sqlite');
    writeFileSync(existing, 'an earlier backup');
    const missingFolder = path.join(dir, 'no-such-folder');

    const [overwrite, nowhere] = await Promise.all([
      runCliAsync(['backup', existing]),
      runCliAsync(['backup', path.join(missingFolder, 'backup.sqlite')]),
    ]);
    expect(overwrite.status).toBe(1);
    expect(overwrite.stderr).toContain(`error: ${existing} exists; choose a new file name for the backup.`);
    expect(readFileSync(existing, 'utf8')).toBe('an earlier backup');
    expect(nowhere.status).toBe(1);
    expect(nowhere.stderr).toContain(`error: The folder ${missingFolder} does not exist.`);
    expect(existsSync(missingFolder)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['booking.sqlite', 'precious.sqlite']);
  });

  it('writes through no link planted where it works, and leaves a file only its owner can read', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'nightly.sqlite');
    // Someone who can write to the folder plants links at every name a backup process might use for
    // its temporary copy (the names of earlier versions: <file>.partial-<pid>, for the next pids).
    const victims = path.join(dir, 'victims');
    mkdirSync(victims);
    const lastPid = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
    for (let pid = lastPid + 1; pid <= lastPid + 400; pid++) {
      symlinkSync(path.join(victims, `written-through-${pid}`), `${backupFile}.partial-${pid}`);
    }
    const result = await runCliAsync(['backup', backupFile]);
    expect(result.status, result.stderr).toBe(0);
    expect(readdirSync(victims)).toEqual([]);
    expect(lstatSync(backupFile).isFile()).toBe(true);
    expect(modeOf(backupFile)).toBe(0o600);
    const report = await checkFileReadOnly(backupFile);
    expect(report.ok).toBe(true);
  });
});

describe.skipIf(onPostgres)('the database file', () => {
  it('is readable by its owner only, with its WAL, and an older one left readable by others is tightened', async () => {
    const file = databaseFile();
    const migrated = await runCliAsync(['migrate']);
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(modeOf(file)).toBe(0o600);

    const key = await createBookingDatabase();
    const server = await startServer(['--port', '0'], env);
    try {
      await apiOf(server, key).get('/locations');
      for (const companion of [`${file}-wal`, `${file}-shm`])
        expect(modeOf(companion), companion).toBe(0o600);
    } finally {
      await server.stop();
    }
    chmodSync(file, 0o644);
    expect((await runCliAsync(['keys', 'list', '--org', 'acme-hair'])).status).toBe(0);
    expect(modeOf(file)).toBe(0o600);
  });
});

describe.skipIf(onPostgres)('booking restore', () => {
  it('refuses a database a server is using, so that nothing it answered is lost, and restores it once stopped', async () => {
    const key = await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    const server = await startServer(['--port', '0'], env);
    let answeredAfterBackup: string;
    try {
      const api = apiOf(server, key);
      const [first, second] = await freeCutSlots(api);
      expect((await api.call('POST', '/bookings', first)).status).toBe(201);
      const backup = await runCliAsync(['backup', backupFile]);
      expect(backup.status, backup.stderr).toBe(0);
      const later = await api.call<{ data: { reference: string } }>('POST', '/bookings', second);
      expect(later.status).toBe(201);
      answeredAfterBackup = later.json.data.reference;

      const refused = await runCliAsync(['restore', backupFile]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('is in use by another process');
      // The booking answered 201 is still there, for the server and in its file.
      expect((await api.call('GET', `/bookings/${answeredAfterBackup}`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(referencesIn(databaseFile())).toContain(answeredAfterBackup);

    // Stopped, the operator restores on purpose: the database is the backup again, and stays private.
    const restored = await runCliAsync(['restore', backupFile]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(referencesIn(databaseFile())).not.toContain(answeredAfterBackup);
    expect(referencesIn(databaseFile())).toHaveLength(1);
    expect(modeOf(databaseFile())).toBe(0o600);
  }, 60_000);

  it('restores a backup into a new database that a server then serves, and refuses other files', async () => {
    const key = await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    const answered = new Map<string, Record<string, unknown>>();
    const server = await startServer(['--port', '0'], env);
    try {
      const api = apiOf(server, key);
      const [first, second] = await freeCutSlots(api);
      const colour = (await api.get<Service[]>('/locations/soho/services')).find((s) => s.name === 'Colour')!;
      const bodies = [first!, { ...second!, service_ids: [...second!.service_ids, colour.id] }];
      for (const body of bodies) {
        const response = await api.call<{ data: Record<string, unknown> }>('POST', '/bookings', body);
        expect(response.status, JSON.stringify(response.json)).toBe(201);
        answered.set(response.json.data.reference as string, response.json.data);
      }
      const backup = await runCliAsync(['backup', backupFile]);
      expect(backup.status, backup.stderr).toBe(0);
    } finally {
      await server.stop();
    }

    const restored = path.join(dir, 'restored.sqlite');
    const restoredEnv = { DATABASE_URL: `sqlite:${restored}`, PAYMENT_PROVIDER: 'local' };
    const restore = await runCliAsync(['restore', backupFile], restoredEnv);
    expect(restore.status, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(`Restored ${restored} from ${backupFile}`);
    expect(modeOf(restored)).toBe(0o600);

    const restoredServer = await startServer(['--port', '0'], restoredEnv);
    try {
      const api = apiOf(restoredServer, key);
      for (const [reference, booking] of answered) {
        // The same booking, its links (the checkout, its page) at the restored server's address.
        const { payment_url: paymentUrl, booking_page_url: pageUrl, ...expected } = booking;
        const {
          payment_url: restoredUrl,
          booking_page_url: restoredPage,
          ...restoredBooking
        } = (await api.get(`/bookings/${reference}`)) as Record<string, unknown>;
        expect(restoredBooking).toEqual(expected);
        const path = (url: unknown) => (typeof url === 'string' ? new URL(url).pathname : url);
        expect(path(restoredUrl)).toEqual(path(paymentUrl));
        expect(path(restoredPage)).toEqual(path(pageUrl));
      }
      expect([...answered.values()].map((booking) => booking.status)).toEqual([
        'confirmed',
        'pending_payment',
      ]);
    } finally {
      await restoredServer.stop();
    }

    const notSqlite = path.join(dir, 'notes.txt');
    writeFileSync(notSqlite, 'This is not a database, but it is long enough to have a header.\n'.repeat(20));
    const notBooking = path.join(dir, 'other.sqlite');
    const other = new SqliteDatabase(notBooking);
    other.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1);');
    other.close();
    const before = readFileSync(restored);
    const [notSqliteResult, notBookingResult] = await Promise.all([
      runCliAsync(['restore', notSqlite], restoredEnv),
      runCliAsync(['restore', notBooking], restoredEnv),
    ]);
    expect(notSqliteResult.status).toBe(1);
    expect(notSqliteResult.stderr).toContain(
      `error: ${notSqlite} is not a usable SQLite database: file is not a database`,
    );
    expect(notBookingResult.status).toBe(1);
    expect(notBookingResult.stderr).toContain(`error: ${notBooking} is not a booking database`);
    expect(readFileSync(restored).equals(before)).toBe(true);
    expect(existsSync(`${restored}-wal`)).toBe(false);
  }, 60_000);
});

describe.skipIf(onPostgres)('booking restore that fails', () => {
  it('leaves a new target path as it was, without a file, and an existing database unchanged', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    const whole = readFileSync(backupFile);
    const notSqlite = path.join(dir, 'notes.txt');
    writeFileSync(notSqlite, 'This is not a database, but it is long enough to have a header.\n'.repeat(20));
    const truncated = path.join(dir, 'truncated.sqlite');
    writeFileSync(truncated, whole.subarray(0, whole.length / 2));
    const corrupt = path.join(dir, 'corrupt.sqlite');
    writeFileSync(
      corrupt,
      Buffer.concat([whole.subarray(0, 8192), Buffer.alloc(8192, 0x5a), whole.subarray(16384)]),
    );

    const target = path.join(dir, 'new.sqlite');
    const targetEnv = { DATABASE_URL: `sqlite:${target}`, PAYMENT_PROVIDER: 'local' };
    const untouched = () =>
      readdirSync(dir).filter((name) => name.startsWith('new.sqlite') || name.startsWith('.new.sqlite'));
    for (const backup of [notSqlite, truncated, corrupt]) {
      const refused = await runCliAsync(['restore', backup], targetEnv);
      expect(refused.status, backup).toBe(1);
      expect(untouched(), backup).toEqual([]);
    }
    // A copy that fails midway, as on a full disk: a whole backup, no room for it.
    const full = await runCliIn(['restore', backupFile], targetEnv, { maxFileBlocks: 64 });
    expect(full.status).toBe(1);
    expect(untouched()).toEqual([]);
    expect(full.stderr).toContain(`error: ${backupFile} could not be copied to ${target}`);
    expect(full.stderr).not.toMatch(/\n\s+at /);
    // With room, the same restore goes through.
    expect((await runCliAsync(['restore', backupFile], targetEnv)).status).toBe(0);
    expect(untouched()).toEqual(['new.sqlite']);

    // Over an existing database, a copy that fails leaves it as it was.
    const before = readFileSync(databaseFile());
    const over = await runCliIn(['restore', backupFile], env, { maxFileBlocks: 64 });
    expect(over.status).toBe(1);
    expect(over.stderr).toContain(`error: ${backupFile} could not be copied to ${databaseFile()}`);
    expect(readFileSync(databaseFile()).equals(before)).toBe(true);
    expect((await runCliAsync(['check'])).status).toBe(0);
  }, 60_000);
});

describe.skipIf(onPostgres)('booking restore into a path whose database was moved without its WAL', () => {
  it('refuses, naming the -wal and -shm files left there, rather than let SQLite replay them over the backup', async () => {
    await createBookingDatabase();
    const file = databaseFile();
    const backupFile = path.join(dir, 'backup.sqlite');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    // A process that wrote after the backup and was cut short: its changes are in the -wal file still.
    const writer = new SqliteDatabase(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.prepare(`UPDATE organisations SET name = 'Written after the backup'`).run();
    const wal = readFileSync(`${file}-wal`);
    const shm = readFileSync(`${file}-shm`);
    writer.close();
    // The operator moves the database aside, but not its -wal and -shm.
    rmSync(file);
    writeFileSync(`${file}-wal`, wal);
    writeFileSync(`${file}-shm`, shm);
    expect(wal.length).toBeGreaterThan(0);

    const refused = await runCliAsync(['restore', backupFile]);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `error: ${file} does not exist, but ${file}-wal and ${file}-shm do: they belong to a database moved away without them, and SQLite would replay them over the restored one. Move them aside with it (or delete them), then restore again.`,
    );
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(`${file}-wal`).equals(wal)).toBe(true);

    // Moved aside, the restore is the backup, with nothing of the other database in it.
    rmSync(`${file}-wal`);
    rmSync(`${file}-shm`);
    const restored = await runCliAsync(['restore', backupFile]);
    expect(restored.status, restored.stderr).toBe(0);
    const reader = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    try {
      expect(reader.prepare('SELECT name FROM organisations').pluck().all()).not.toContain(
        'Written after the backup',
      );
    } finally {
      reader.close();
    }
    expect((await runCliAsync(['check'])).status).toBe(0);
  }, 60_000);
});

describe.skipIf(onPostgres)('booking restore over a damaged database', () => {
  it('says how to go on (move the damaged file aside), and restores once it is', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    const file = databaseFile();
    // A disk that failed under it: the first pages overwritten.
    writeFileSync(file, Buffer.alloc(8192, 0x5a));

    const refused = await runCliAsync(['restore', backupFile]);
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `error: ${file} is damaged (file is not a database), so whether a process still uses it cannot be told: stop every booking process, move ${file} and any ${file}-wal and ${file}-shm aside, then restore again.`,
    );
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(`${file}${suffix}`)) rmSync(`${file}${suffix}`);
    }
    const restored = await runCliAsync(['restore', backupFile]);
    expect(restored.status, restored.stderr).toBe(0);
    expect((await runCliAsync(['check'])).status).toBe(0);
  }, 60_000);
});

describe.skipIf(onPostgres)('booking restore of a backup from a newer version', () => {
  it('is refused, leaving the database this version can still open', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.sqlite');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    // As a newer version would have written it: one migration more than this version has.
    const newer = new SqliteDatabase(backupFile);
    newer
      .prepare(
        `INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-01-01-0001-future', '2099-01-01')`,
      )
      .run();
    newer.close();
    const before = readFileSync(databaseFile());

    const result = await runCliAsync(['restore', backupFile]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `error: ${backupFile} was written by a newer version of booking (it has the migration 9999-01-01-0001-future this version lacks)`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(databaseFile()).equals(before)).toBe(true);
    expect((await runCliAsync(['migrate'])).status).toBe(0);
  }, 60_000);
});

describe.runIf(onPostgres)('backup and restore on PostgreSQL', () => {
  it('backs up a serving database with pg_dump, refuses to restore while it is served, restores once stopped', async () => {
    const key = await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.dump');
    const server = await startServer(['--port', '0'], env);
    let answeredBeforeBackup: string;
    let answeredAfterBackup: string;
    try {
      const api = apiOf(server, key);
      const [first, second] = await freeCutSlots(api);
      const before = await api.call<{ data: { reference: string } }>('POST', '/bookings', first);
      expect(before.status).toBe(201);
      answeredBeforeBackup = before.json.data.reference;
      const backup = await runCliAsync(['backup', backupFile]);
      expect(backup.status, backup.stderr).toBe(0);
      expect(backup.stdout).toMatch(
        /^Backed up to \S+: \d+ tables, \d+ KiB, archive read back by pg_restore\.$/m,
      );
      expect(modeOf(backupFile)).toBe(0o600);
      const later = await api.call<{ data: { reference: string } }>('POST', '/bookings', second);
      expect(later.status).toBe(201);
      answeredAfterBackup = later.json.data.reference;

      const refused = await runCliAsync(['restore', backupFile]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/is in use by 1 booking process/);
      expect((await api.call('GET', `/bookings/${answeredAfterBackup}`)).status).toBe(200);
    } finally {
      await server.stop();
    }

    const restored = await runCliAsync(['restore', backupFile]);
    expect(restored.status, restored.stderr).toBe(0);
    const handle = openDatabase(database.url);
    try {
      const references = (await handle.db.selectFrom('bookings').select('reference').execute()).map(
        (row) => row.reference,
      );
      expect(references).toEqual([answeredBeforeBackup]);
    } finally {
      await handle.close();
    }
    // The restored database serves, and `booking check` finds it whole.
    const checked = await runCliAsync(['check']);
    expect(checked.status, checked.stdout).toBe(0);
    const again = await startServer(['--port', '0'], env);
    try {
      expect((await apiOf(again, key).call('GET', `/bookings/${answeredBeforeBackup}`)).status).toBe(200);
    } finally {
      await again.stop();
    }
  }, 90_000);

  it('counts only the processes using its own database: those of another database on the server neither count nor refuse', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.dump');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    // Two processes at work on another database of the same server, and one on this one.
    const other = await freshDatabaseUrl(dir, { migrated: true });
    const elsewhere = [await holdInUseLock(other.url), await holdInUseLock(other.url)];
    try {
      const here = await holdInUseLock(database.url);
      const refused = await runCliAsync(['restore', backupFile]);
      await here();
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/is in use by 1 booking process\(es\)/);
      const restored = await runCliAsync(['restore', backupFile]);
      expect(restored.status, restored.stderr).toBe(0);
    } finally {
      for (const release of elsewhere) await release();
      await other.drop();
    }
  }, 60_000);

  it('refuses files that are not a booking database’s pg_dump archive, changing nothing', async () => {
    await createBookingDatabase();
    const notArchive = path.join(dir, 'notes.txt');
    writeFileSync(notArchive, 'not an archive');
    const result = await runCliAsync(['restore', notArchive]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`error: ${notArchive} is not a pg_dump archive`);
    expect((await runCliAsync(['check'])).status).toBe(0);
  });

  it('refuses an archive from a newer version, changing nothing', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.dump');
    const future = '9999-01-01-0001-future';
    const handle = openDatabase(database.url);
    try {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${future}, '2099-01-01')`.execute(
        handle.db,
      );
      expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
      await sql`DELETE FROM kysely_migration WHERE name = ${future}`.execute(handle.db);
      await sql`UPDATE services SET name = 'After the backup: ' || name`.execute(handle.db);
    } finally {
      await handle.close();
    }

    const result = await runCliAsync(['restore', backupFile]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `error: ${backupFile} was written by a newer version of booking (it has the migration ${future} this version lacks)`,
    );
    const after = openDatabase(database.url);
    try {
      const names = await sql<{ name: string }>`SELECT name FROM services`.execute(after.db);
      expect(names.rows.every((row) => row.name.startsWith('After the backup: '))).toBe(true);
    } finally {
      await after.close();
    }
    expect((await runCliAsync(['migrate'])).status).toBe(0);
  }, 60_000);

  it('leaves the old data whole when the archive breaks off half-way (its table of contents still reads)', async () => {
    await createBookingDatabase();
    const backupFile = path.join(dir, 'backup.dump');
    expect((await runCliAsync(['backup', backupFile])).status).toBe(0);
    // Cut short at the end, as a copy that ran out of disk: pg_restore lists it, but fails in its data.
    const whole = readFileSync(backupFile);
    const truncated = path.join(dir, 'truncated.dump');
    writeFileSync(truncated, whole.subarray(0, whole.length - 100), { mode: 0o600 });
    const state = async () => {
      const handle = openDatabase(database.url);
      try {
        const names = await sql<{ name: string }>`SELECT name FROM services ORDER BY name`.execute(handle.db);
        const indexes = await sql<{ n: string }>`
          SELECT count(*) AS n FROM pg_indexes WHERE schemaname = 'public'`.execute(handle.db);
        return { names: names.rows.map((row) => row.name), indexes: Number(indexes.rows[0]!.n) };
      } finally {
        await handle.close();
      }
    };
    const handle = openDatabase(database.url);
    await sql`UPDATE services SET name = 'After the backup: ' || name`.execute(handle.db);
    await handle.close();
    const before = await state();

    const result = await runCliAsync(['restore', truncated]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('error: pg_restore failed');
    expect(await state()).toEqual(before);
    expect((await runCliAsync(['check'])).status).toBe(0);
  }, 60_000);
});

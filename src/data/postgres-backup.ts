import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { BackupError, type BackupOutcome, newBackupFile, refuseNewerBackup } from './backup-files.ts';
import { DATABASE_IN_USE_LOCK, nodePostgres } from './postgres.ts';

/**
 * `booking backup` and `booking restore` on PostgreSQL, with PostgreSQL's own client tools (pg_dump,
 * pg_restore, psql of the server's major version, on PATH): a backup is a pg_dump archive (custom
 * format) of the database, published like a SQLite backup (private, whole, never over a file); a
 * restore replaces everything in the database's public schema with the archive's, in one transaction,
 * and only while no booking process uses the database.
 */
export async function backupPostgres(
  url: string,
  destination: string,
): Promise<BackupOutcome & { checked: string }> {
  return newBackupFile(destination, async (partial) => {
    const { dbname, env } = connectionOf(url);
    await run(
      'pg_dump',
      [
        '--format=custom',
        '--no-owner',
        '--no-privileges',
        // The rate-limit windows (an unlogged table) are not worth keeping.
        '--no-unlogged-table-data',
        `--file=${partial}`,
        `--dbname=${dbname}`,
      ],
      env,
    );
    return { contents: `${await bookingTables(partial)} tables`, checked: 'archive read back by pg_restore' };
  });
}

/**
 * Replaces the database's public schema with the archive's, after checking the archive is a booking
 * database and that no booking process holds the database (the shared in-use lock every `booking`
 * process takes, see holdInUseLock): a running server would go on answering from data the restore
 * removes. The exclusive lock is held until the restore is done, so a process starting meanwhile waits
 * for it. The schema is dropped and the archive replayed by psql in one transaction: a failure leaves
 * the old data.
 */
export async function restorePostgres(archive: string, url: string): Promise<BackupOutcome> {
  if (!existsSync(archive)) throw new BackupError(`There is no backup at ${archive}.`);
  const tables = await bookingTables(archive);
  refuseNewerBackup(archive, await appliedMigrations(archive));
  const lock = new (nodePostgres().Client)({ connectionString: url });
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    const taken = await lock.query<{ taken: boolean }>(
      `SELECT pg_try_advisory_lock(${DATABASE_IN_USE_LOCK}) AS taken`,
    );
    if (!taken.rows[0]?.taken) {
      // pg_locks lists the whole server's locks: only the holders in this database are its users
      // (an advisory lock is per database, as the refusal above is), never this connection itself.
      const holders = await lock.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND pid <> pg_backend_pid()
           AND ((classid::bigint << 32) | objid::bigint) = ${DATABASE_IN_USE_LOCK}`,
      );
      throw new BackupError(
        `${describe(url)} is in use by ${holders.rows[0]?.n ?? 'some'} booking process(es) (booking serve, booking mcp or another command); stop them, then restore.`,
      );
    }
    const { dbname, env } = connectionOf(url);
    await pipe(
      ['pg_restore', ['--no-owner', '--no-privileges', '--file=-', archive]],
      ['psql', ['--no-psqlrc', '--quiet', '--set=ON_ERROR_STOP=1', '--file=-', `--dbname=${dbname}`]],
      env,
      {
        before: 'BEGIN;\nDROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n',
        afterWhole: 'COMMIT;\n',
      },
    );
  } finally {
    await lock.end().catch(() => undefined);
  }
  return { file: describe(url), contents: `${tables} tables`, bytes: statSync(archive).size };
}

/** The number of tables in a pg_dump archive, which must be a booking database's (it has migrations). */
async function bookingTables(archive: string): Promise<number> {
  let listing: string;
  try {
    listing = await run('pg_restore', ['--list', archive], {});
  } catch (error) {
    if (error instanceof BackupError && error.message.includes('not installed')) throw error;
    throw new BackupError(`${archive} is not a pg_dump archive: ${(error as Error).message}`);
  }
  const tables = [...listing.matchAll(/^\d+; \d+ \d+ TABLE public (\S+) /gm)].map((match) => match[1]);
  if (!tables.includes('kysely_migration')) {
    throw new BackupError(`${archive} is not a booking database (it has no migrations).`);
  }
  return tables.length;
}

/** The names in the archive's kysely_migration table: its COPY data, one row a line, name first. */
async function appliedMigrations(archive: string): Promise<string[]> {
  const data = await run('pg_restore', ['--data-only', '--table=kysely_migration', '--file=-', archive], {});
  const rows = /^COPY public\.kysely_migration \(([^)]*)\) FROM stdin;\n([\s\S]*?)^\\\.$/m.exec(data);
  if (!rows) return [];
  const nameColumn = rows[1]!.split(', ').indexOf('name');
  return rows[2]!
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t')[nameColumn]!);
}

/** The URL without its password (which goes to PGPASSWORD, out of every process list). */
function connectionOf(url: string): { dbname: string; env: Record<string, string> } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  return { dbname: parsed.toString(), env: password ? { PGPASSWORD: password } : {} };
}

function describe(url: string): string {
  const parsed = new URL(url);
  return `PostgreSQL ${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/** Runs a PostgreSQL client tool; its stdout, or a BackupError with what it said on stderr. */
function run(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', (error) => reject(toolError(command, error)));
    child.once('close', (status) => {
      if (status === 0) resolve(stdout);
      else reject(new BackupError(`${command} failed: ${firstLines(stderr)}`));
    });
  });
}

/**
 * `producer | consumer`, the consumer given `wrap.before` first and `wrap.afterWhole` last only when the
 * producer finished without error; fails when either does, with what it said. pg_restore breaking off
 * half-way (an archive cut short) still ends psql's input cleanly, and psql --single-transaction
 * would then commit what it had been given: the schema dropped, part of the data, no indexes. The
 * COMMIT written here only after pg_restore succeeded leaves psql, otherwise, ending with the
 * transaction open, which PostgreSQL rolls back.
 */
function pipe(
  producer: [string, string[]],
  consumer: [string, string[]],
  env: Record<string, string>,
  wrap: { before: string; afterWhole: string },
): Promise<void> {
  const options = { env: { ...process.env, ...env } };
  const from = spawn(producer[0], producer[1], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const to = spawn(consumer[0], consumer[1], { ...options, stdio: ['pipe', 'ignore', 'pipe'] });
  to.stdin.write(wrap.before);
  from.stdout.pipe(to.stdin, { end: false });
  // 'close' comes after the producer's output has all been read, so written to the consumer before this.
  from.once('close', (status) => to.stdin.end(status === 0 ? wrap.afterWhole : undefined));
  // psql stopping early (an error) must not crash this process with EPIPE on its stdin.
  to.stdin.on('error', () => undefined);
  const finished = ([command]: [string, string[]], child: ReturnType<typeof spawn>) =>
    new Promise<void>((resolve, reject) => {
      let stderr = '';
      child.stderr?.on('data', (chunk) => {
        stderr += chunk;
      });
      child.once('error', (error) => reject(toolError(command, error)));
      child.once('close', (status) => {
        if (status === 0) resolve();
        else reject(new BackupError(`${command} failed: ${firstLines(stderr)}`));
      });
    });
  return Promise.all([finished(producer, from), finished(consumer, to)]).then(() => undefined);
}

function toolError(command: string, error: NodeJS.ErrnoException): Error {
  if (error.code === 'ENOENT') {
    return new BackupError(
      `${command} is not installed; backups of PostgreSQL need its client tools (pg_dump, pg_restore, psql) of the server's major version.`,
    );
  }
  return error;
}

function firstLines(text: string): string {
  return text.trim().split('\n').slice(0, 3).join(' ') || '(no message)';
}

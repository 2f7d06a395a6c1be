import { chmodSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { BackupError, type BackupOutcome, newBackupFile, refuseNewerBackup } from './backup-files.ts';
import { noDatabaseAt } from './database.ts';
import { SQLITE_BUSY_TIMEOUT_MS } from './db.ts';
import { PRIVATE_FILE_MODE } from './private-files.ts';
import { type SqliteConnection, SqliteDatabase } from './sqlite-driver.ts';

/** sqlite3_backup_step's page count: this many means "all remaining pages in one step". */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a live SQLite database to `destination` with SQLite's online backup API, while other
 * connections (a running `booking serve`) go on reading and writing.
 *
 * The copy is taken in one backup step, which reads one consistent snapshot: in WAL mode that holds
 * no lock writers wait on, and it cannot be restarted forever by a busy writer, as a page-by-page
 * backup is each time another connection commits. The copy is checked (integrity_check, and it must
 * hold the schema's migrations) and turned into a single self-contained file (rollback journal instead
 * of WAL) before it is published (newBackupFile: private, whole, never over an existing file).
 */
export async function backupSqliteFile(
  source: string,
  destination: string,
): Promise<BackupOutcome & { checked: string }> {
  if (!existsSync(source)) throw new BackupError(noDatabaseAt(source));
  return newBackupFile(destination, async (partial) => {
    const live = new SqliteDatabase(source, { fileMustExist: true });
    try {
      live.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      await live.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      live.close();
    }
    const { pages } = verifyBookingDatabase(partial, { makeSelfContained: true });
    return { contents: `${pages} pages`, checked: 'integrity checked' };
  });
}

/**
 * Replaces the database at `target` with the backup, after checking the backup is a whole booking
 * database and that nothing has the target open: a running server would go on answering from its own
 * view of the data (a booking it answered 201 would vanish under it, or be written into the restored
 * data as if the restore had not happened). The copy goes through SQLite's backup API into the
 * target, so the target's own WAL is handled by SQLite and a copy that fails (a full disk) or a crash
 * mid-restore leaves the old or the new database, never a mix. A target that does not exist yet is
 * written beside its path and linked into place whole (newBackupFile): a restore that fails leaves no
 * file there, where an empty one would pass for a database the next command migrates as new. Such a
 * path with another database's -wal, -shm or -journal file still beside it is refused (SQLite would
 * replay them over the restored data: refuseLeftCompanions).
 */
export async function restoreSqliteFile(backup: string, target: string): Promise<BackupOutcome> {
  if (!existsSync(backup)) throw new BackupError(`There is no backup at ${backup}.`);
  const { pages, migrations } = verifyBookingDatabase(backup, { makeSelfContained: false });
  refuseNewerBackup(backup, migrations);
  const resolved = path.resolve(target);
  const contents = `${pages} pages`;
  if (!existsSync(resolved)) {
    refuseLeftCompanions(resolved);
    const { file, bytes } = await newBackupFile(
      resolved,
      async (partial) => {
        await copyBackup(backup, partial, resolved);
        return { contents, checked: 'copied' };
      },
      'the backup was restored',
    );
    return { file, contents, bytes };
  }
  refuseIfInUse(resolved);
  await copyBackup(backup, resolved, resolved);
  chmodSync(resolved, PRIVATE_FILE_MODE);
  return { file: resolved, contents, bytes: statSync(resolved).size };
}

/** Copies the backup's pages into the database file `into`, said as the restore of `target`. */
async function copyBackup(backup: string, into: string, target: string): Promise<void> {
  const source = new SqliteDatabase(backup, { readonly: true, fileMustExist: true });
  try {
    await source.backup(into, { progress: () => ALL_PAGES });
  } catch (error) {
    throw new BackupError(
      `${backup} could not be copied to ${target} (${(error as Error).message}); nothing was restored.`,
    );
  } finally {
    source.close();
  }
}

/** What SQLite keeps beside a database file: its WAL, the WAL's shared memory, a rollback journal. */
const COMPANIONS = ['-wal', '-shm', '-journal'] as const;

/**
 * Throws when files SQLite keeps beside a database lie at a path with no database: left by one moved
 * or deleted without them. A whole file linked in beside them would be read with them: SQLite replays
 * a WAL (or rolls back a journal) it finds over whatever database file is at its path, so the restored
 * data would take pages of the other database. They may hold that database's last transactions, so
 * they are not deleted here: the operator moves them.
 */
function refuseLeftCompanions(target: string): void {
  const left = COMPANIONS.map((suffix) => `${target}${suffix}`).filter((file) => existsSync(file));
  if (left.length === 0) return;
  const one = left.length === 1;
  const names = one ? left[0]! : `${left.slice(0, -1).join(', ')} and ${left.at(-1)!}`;
  const them = one ? 'it' : 'them';
  throw new BackupError(
    `${target} does not exist, but ${names} ${one ? 'does' : 'do'}: ${one ? 'it belongs' : 'they belong'} to a database moved away without ${them}, and SQLite would replay ${them} over the restored one. Move ${them} aside with it (or delete ${them}), then restore again.`,
  );
}

/**
 * Throws when another connection has the database open. Every connection to a WAL database holds a
 * shared lock as long as it is open, even idle (a `booking serve` keeps one for its whole life), so
 * an exclusive lock can be had only when nobody else is there. Taken without waiting, and let go at
 * once: the restore follows immediately.
 */
function refuseIfInUse(file: string): void {
  let probe: SqliteConnection;
  try {
    probe = new SqliteDatabase(file, { fileMustExist: true });
  } catch (error) {
    throw new BackupError(`${file} cannot be opened: ${(error as Error).message}`);
  }
  try {
    probe.pragma('busy_timeout = 0');
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('BEGIN EXCLUSIVE');
    probe.exec('COMMIT');
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
      throw new BackupError(
        `${file} is in use by another process (a running booking serve, booking mcp or another command); stop it, then restore.`,
      );
    }
    // A damaged file is what a restore is most often for: the way on is said, not only the refusal.
    // Still refused: SQLite reads the file before it locks it, so a process using it goes unseen.
    if (/^SQLITE_(CORRUPT|NOTADB)/.test((error as { code?: string }).code ?? '')) {
      throw new BackupError(
        `${file} is damaged (${(error as Error).message}), so whether a process still uses it cannot be told: stop every booking process, move ${file} and any ${file}-wal and ${file}-shm aside, then restore again.`,
      );
    }
    throw new BackupError(`${file} cannot be checked: ${(error as Error).message}`);
  } finally {
    probe.close();
  }
}

/**
 * Opens `file`, checks it page by page and for the schema's migrations; returns its page count and
 * the migrations it has applied.
 */
function verifyBookingDatabase(
  file: string,
  options: { makeSelfContained: boolean },
): { pages: number; migrations: string[] } {
  let copy: SqliteConnection;
  try {
    copy = new SqliteDatabase(file, { fileMustExist: true, readonly: !options.makeSelfContained });
  } catch (error) {
    throw new BackupError(`${file} cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
  try {
    const integrity = copy.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${file} fails SQLite's integrity check: ${integrity}`);
    const migrations = copy
      .prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'`)
      .get() as { n: number };
    if (migrations.n === 0)
      throw new BackupError(`${file} is not a booking database (it has no migrations).`);
    const applied = copy.prepare('SELECT name FROM kysely_migration').pluck().all() as string[];
    if (options.makeSelfContained) copy.pragma('journal_mode = DELETE');
    return { pages: copy.pragma('page_count', { simple: true }) as number, migrations: applied };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} is not a usable SQLite database: ${(error as Error).message}`);
  } finally {
    copy.close();
  }
}

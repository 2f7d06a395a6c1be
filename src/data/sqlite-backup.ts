import { existsSync, linkSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { type SqliteConnection, SqliteDatabase } from './sqlite-driver.ts';

export interface BackupOutcome {
  file: string;
  pages: number;
  bytes: number;
}

/** Thrown for a backup or restore the operator can fix (missing file, not a booking database, ...). */
export class BackupError extends Error {}

/** sqlite3_backup_step's page count: this many means "all remaining pages in one step". */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies a live SQLite database to `destination` with SQLite's online backup API, while other
 * connections (a running `booking serve`) go on reading and writing.
 *
 * The copy is taken in one backup step, which reads one consistent snapshot: in WAL mode that holds
 * no lock writers wait on, and it cannot be restarted forever by a busy writer, as a page-by-page
 * backup is each time another connection commits. The copy is written beside the destination, checked
 * (integrity_check, and it must hold the schema's migrations), turned into a single self-contained file
 * (rollback journal instead of WAL) and only then linked into place, so a file at `destination` is
 * always a whole, verified backup, and one that appeared there meanwhile is not overwritten.
 */
export async function backupSqliteFile(source: string, destination: string): Promise<BackupOutcome> {
  if (!existsSync(source)) throw new BackupError(`There is no database at ${source}.`);
  const target = path.resolve(destination);
  if (existsSync(target)) throw new BackupError(`${target} exists; choose a new file name for the backup.`);
  if (!existsSync(path.dirname(target)))
    throw new BackupError(`The folder ${path.dirname(target)} does not exist.`);

  const partial = `${target}.partial-${process.pid}`;
  const live = new SqliteDatabase(source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    await live.backup(partial, { progress: () => ALL_PAGES });
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    live.close();
  }
  try {
    const pages = verifyBookingDatabase(partial, { makeSelfContained: true });
    publishWithoutOverwriting(partial, target);
    return { file: target, pages, bytes: statSync(target).size };
  } finally {
    rmSync(partial, { force: true });
  }
}

/**
 * Replaces the database at `target` with the backup, after checking the backup is a whole booking
 * database. The copy goes through SQLite's backup API into the target, so the target's own WAL is
 * handled by SQLite and a crash mid-restore leaves the old or the new database, never a mix. The
 * service must be stopped first (docs/operating.md): a running server would go on from
 * the restored data without knowing its caches are stale.
 */
export async function restoreSqliteFile(backup: string, target: string): Promise<BackupOutcome> {
  if (!existsSync(backup)) throw new BackupError(`There is no backup at ${backup}.`);
  const pages = verifyBookingDatabase(backup, { makeSelfContained: false });
  const resolved = path.resolve(target);
  const source = new SqliteDatabase(backup, { readonly: true, fileMustExist: true });
  try {
    await source.backup(resolved, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
  return { file: resolved, pages, bytes: statSync(resolved).size };
}

/** A hard link fails if `target` exists, where a rename would silently replace it. */
function publishWithoutOverwriting(partial: string, target: string): void {
  try {
    linkSync(partial, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new BackupError(`${target} appeared while the backup was taken; it was left as it is.`);
    }
    throw error;
  }
}

/** Opens `file`, checks it page by page and for the schema's migrations; returns its page count. */
function verifyBookingDatabase(file: string, options: { makeSelfContained: boolean }): number {
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
    if (options.makeSelfContained) copy.pragma('journal_mode = DELETE');
    return copy.pragma('page_count', { simple: true }) as number;
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} is not a usable SQLite database: ${(error as Error).message}`);
  } finally {
    copy.close();
  }
}

import { chmodSync, existsSync, linkSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { migrationUnknownHere } from './migrate.ts';
import { createPrivateFile, PRIVATE_FILE_MODE } from './private-files.ts';

export interface BackupOutcome {
  file: string;
  /** What the file holds, in words: "812 pages", "17 tables". */
  contents: string;
  bytes: number;
}

/** How a backup was checked before it was published, in words. */
export interface WrittenBackup {
  contents: string;
  checked: string;
}

/** Thrown for a backup or restore the operator can fix (missing file, not a booking database, ...). */
export class BackupError extends Error {}

/**
 * Refuses to restore a backup a newer version wrote: restored, it would replace a database this
 * version can use with one it cannot open (every command would fail on its unknown migration).
 */
export function refuseNewerBackup(backup: string, appliedMigrations: Iterable<string>): void {
  const unknown = migrationUnknownHere(appliedMigrations);
  if (unknown !== null) {
    throw new BackupError(
      `${backup} was written by a newer version of booking (it has the migration ${unknown} this version lacks); restore it with that version or a later one.`,
    );
  }
}

/**
 * Writes a new backup file at `destination` through `write`, which fills the private file it is given
 * and says what it holds. The file is written in a folder made for it beside the destination (mode
 * 0700, a random name: nothing planted beforehand, a symlink say, can be written through), is readable
 * by its owner only (0600), and is linked into place only when `write` has finished and checked it:
 * a file at `destination` is always a whole backup, and an existing file is never overwritten. A
 * `write` that fails, or a process cut short, leaves nothing at `destination`. `doing`: what the file is
 * written for, in words ("the backup was taken", or a restore into a new database file).
 */
export async function newBackupFile(
  destination: string,
  write: (partial: string) => Promise<WrittenBackup>,
  doing = 'the backup was taken',
): Promise<BackupOutcome & { checked: string }> {
  const target = path.resolve(destination);
  if (existsSync(target)) throw new BackupError(`${target} exists; choose a new file name for the backup.`);
  if (!existsSync(path.dirname(target)))
    throw new BackupError(`The folder ${path.dirname(target)} does not exist.`);
  const workspace = mkdtempSync(path.join(path.dirname(target), `.${path.basename(target)}.partial-`));
  try {
    const partial = path.join(workspace, 'backup');
    createPrivateFile(partial);
    const written = await write(partial);
    chmodSync(partial, PRIVATE_FILE_MODE);
    publishWithoutOverwriting(partial, target, doing);
    return { file: target, ...written, bytes: statSync(target).size };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** A hard link fails if `target` exists, where a rename would silently replace it. */
function publishWithoutOverwriting(partial: string, target: string, doing: string): void {
  try {
    linkSync(partial, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new BackupError(`${target} appeared while ${doing}; it was left as it is.`);
    }
    throw error;
  }
}

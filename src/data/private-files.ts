import { chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs';

/**
 * The booking database holds personal data (names, phones, e-mails, notes) and key hashes: its file,
 * its WAL and shared-memory files and every backup are readable and writable by their owner only.
 */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `file`, empty and private. Refuses anything already there, a symlink included (O_EXCL with
 * O_NOFOLLOW): a file created here is never someone else's planted link.
 */
export function createPrivateFile(file: string): void {
  const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
  closeSync(openSync(file, flags, PRIVATE_FILE_MODE));
}

/**
 * Makes a SQLite database file private: created so when missing (SQLite then gives its WAL and
 * shared-memory files the same mode), tightened when an earlier version left it readable by others.
 */
export function privateDatabaseFile(file: string): void {
  if (!existsSync(file)) {
    try {
      createPrivateFile(file);
    } catch (error) {
      // Another process created it meanwhile: it is tightened below like any existing file.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  for (const path of [file, `${file}-wal`, `${file}-shm`]) tighten(path);
}

function tighten(path: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return;
  }
  if ((mode & 0o077) === 0) return;
  try {
    chmodSync(path, mode & 0o700);
  } catch {
    // Not ours to change (another user's file opened read-write through group rights): left as it is.
  }
}

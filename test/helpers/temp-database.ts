import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DatabaseHandle, openDatabase } from '../../src/data/database.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';

export interface TempDatabase extends DatabaseHandle {
  /** The DATABASE_URL of this database, for child processes. */
  url: string;
  file: string;
  dir: string;
  /** Closes the database and removes its directory. */
  dispose(): Promise<void>;
}

/** A real, migrated SQLite file in a fresh temporary directory. */
export async function createTempDatabase(): Promise<TempDatabase> {
  const dir = mkdtempSync(path.join(tmpdir(), 'booking-test-'));
  const file = path.join(dir, 'booking.sqlite');
  const url = `sqlite:${file}`;
  const handle = openDatabase(url);
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    file,
    dir,
    async dispose() {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

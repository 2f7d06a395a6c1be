import { sql } from 'kysely';
import type { Db } from '../data/database.ts';
import { storageProblemOf } from '../data/storage-health.ts';

/**
 * Whether the database is ready to serve: it answers a trivial query, and its storage has not just
 * refused a write (a full disk, a read-only file: reads would go on while every booking fails).
 * Throws the driver's error, or the storage's, when it is not.
 */
export async function checkDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
  const problem = storageProblemOf(db);
  if (problem) throw problem;
}

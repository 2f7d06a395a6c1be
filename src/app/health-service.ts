import { sql } from 'kysely';
import type { Db } from '../data/database.ts';

/** Whether the database answers a trivial query; throws the driver's error when it does not. */
export async function checkDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

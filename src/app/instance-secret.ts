import { randomBytes } from 'node:crypto';
import type { Db } from '../data/database.ts';

const SECRET_KEY = 'cursor_secret';

/**
 * The secret that signs cursors: BOOKING_SECRET when set, otherwise one generated on first use and
 * kept in the database, so cursors survive restarts and are shared by every process on that database.
 */
export async function resolveInstanceSecret(db: Db, configured: string | null): Promise<string> {
  if (configured) return configured;
  await db
    .insertInto('instance_settings')
    .values({ key: SECRET_KEY, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db
    .selectFrom('instance_settings')
    .select('value')
    .where('key', '=', SECRET_KEY)
    .executeTakeFirstOrThrow();
  return row.value;
}

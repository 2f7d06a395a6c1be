import { randomBytes } from 'node:crypto';
import type { Db } from '../data/database.ts';

/**
 * The secrets that sign pagination cursors. BOOKING_SECRET, when set, signs every organisation's.
 * Otherwise each organisation has its own, generated on first use and kept in `cursor_secrets` (a
 * row of the organisation's data like any other), so cursors survive restarts and every instance on
 * the database reads the cursors the others made. A stored secret never changes, so each process
 * reads it once.
 */
export class CursorSecrets {
  readonly #db: Db;
  readonly #configured: string | null;
  readonly #stored = new Map<string, Promise<string>>();

  constructor(db: Db, configured: string | null) {
    this.#db = db;
    this.#configured = configured;
  }

  of(organisationId: string): Promise<string> {
    if (this.#configured) return Promise.resolve(this.#configured);
    let secret = this.#stored.get(organisationId);
    if (secret === undefined) {
      secret = storedSecret(this.#db, organisationId);
      this.#stored.set(organisationId, secret);
      // A failed read is not remembered: the next request tries again.
      secret.catch(() => this.#stored.delete(organisationId));
    }
    return secret;
  }
}

/** The organisation's stored secret; the first instance to ask stores one, and all read that one. */
async function storedSecret(db: Db, organisationId: string): Promise<string> {
  await db
    .insertInto('cursor_secrets')
    .values({ organisation_id: organisationId, secret: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('organisation_id').doNothing())
    .execute();
  const row = await db
    .selectFrom('cursor_secrets')
    .select('secret')
    .where('organisation_id', '=', organisationId)
    .executeTakeFirstOrThrow();
  return row.secret;
}

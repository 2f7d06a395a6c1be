import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/app/rate-limiter.ts';
import {
  checkPassword,
  createUser,
  setPassword,
  whilePasswordHolds,
} from '../../src/app/staff-account-service.ts';
import { writeTransaction } from '../../src/data/write-transaction.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A console sign-in or an app's consent checks the password (a slow hash), then writes the session or
 * the connector. A password changed (or the account disabled) between the two ended every session and
 * connector there was: what the check then writes with the old password must not stand either.
 */
const OLD = 'correct horse battery';
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function checkedOwner() {
  t = await startTestApp({ catalogues: [smallCatalogue()] });
  await createUser(
    t.database.db,
    { organisationSlug: 'acme-hair', email: 'owner@acme.test', role: 'owner', password: OLD },
    t.clock.nowMs(),
  );
  const checked = await checkPassword(
    t.database.db,
    new MemoryRateLimitStore(),
    { organisationSlug: 'acme-hair', email: 'owner@acme.test', password: OLD, address: '203.0.113.9' },
    t.clock.nowMs(),
  );
  if (!checked.ok) throw new Error('the right password was refused');
  return checked.user;
}

describe('a sign-in whose password changed after it was checked', () => {
  it('writes nothing once the password is another', async () => {
    const user = await checkedOwner();
    await setPassword(
      t.database.db,
      { organisationSlug: 'acme-hair', email: 'owner@acme.test', password: 'a different long secret' },
      t.clock.nowMs(),
    );
    let written = false;
    const held = await whilePasswordHolds(t.database.db, user, async () => {
      written = true;
    });
    expect({ held, written }).toEqual({ held: false, written: false });
  });

  it('writes while the password is still the one checked', async () => {
    const user = await checkedOwner();
    expect(await whilePasswordHolds(t.database.db, user, async () => undefined)).toBe(true);
  });

  it.skipIf(!onPostgres)(
    'waits for a password change under way and then writes nothing (PostgreSQL, read committed)',
    async () => {
      const user = await checkedOwner();
      let changing!: () => void;
      const changed = new Promise<void>((resolve) => {
        changing = resolve;
      });
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The change has updated the hash and ended the sessions, and has not committed yet.
      const change = writeTransaction(t.database.db, async (trx) => {
        await trx
          .updateTable('users')
          .set({ password_hash: '$argon2id$changed' })
          .where('id', '=', user.id)
          .execute();
        await trx.deleteFrom('user_sessions').where('user_id', '=', user.id).execute();
        changing();
        await released;
      });
      await changed;
      const session = whilePasswordHolds(t.database.db, user, (trx) =>
        trx
          .insertInto('user_sessions')
          .values({
            id: 'raced',
            organisation_id: user.organisation_id,
            user_id: user.id,
            csrf_token: 'x',
            created_at: 0,
            last_seen_at: 0,
          })
          .execute(),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      await change;
      expect(await session).toBe(false);
      const left = await t.database.db.selectFrom('user_sessions').select('id').execute();
      expect(left).toEqual([]);
    },
  );
});

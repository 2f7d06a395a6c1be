import { afterEach, expect, it } from 'vitest';
import { OauthRecordStore } from '../../src/app/oauth-records.ts';
import { createTempDatabase, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * An authorization code is spent once, even when two token requests redeem it at the same moment (on
 * two instances both pass the library's "not spent yet?" look-up): spending it is the check, and the
 * second is refused with the library's invalid_grant. A refresh token keeps its grace for a retry.
 */
let database: TempDatabase | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

const SPENT = 'authorization code already consumed';

it('refuses the second spending of one authorization code, not of a refresh token', async () => {
  database = await createTempDatabase();
  const now = () => Date.parse('2026-11-23T09:00:00Z');
  const store = (kind: string) => new OauthRecordStore(database!.db, kind, now, () => new Error(SPENT));
  const codes = store('AuthorizationCode');
  await codes.upsert('code-1', { grantId: 'grant-1', clientId: 'client-1', accountId: 'org/user' }, 60);
  // Both requests found it unspent; they spend it at once.
  const spent = await Promise.allSettled([codes.consume('code-1'), codes.consume('code-1')]);
  expect(spent.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
  expect(spent.find((s) => s.status === 'rejected')).toMatchObject({ reason: { message: SPENT } });
  expect(await codes.find('code-1')).toMatchObject({ consumed: expect.any(Number) });

  const refresh = store('RefreshToken');
  await refresh.upsert(
    'refresh-1',
    { grantId: 'grant-1', clientId: 'client-1', accountId: 'org/user' },
    3600,
  );
  await refresh.consume('refresh-1');
  await expect(refresh.consume('refresh-1')).resolves.toBeUndefined();
});

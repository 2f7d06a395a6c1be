import { Migrator } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { CLIENT_UNUSED_MS, hashOf, sweepOauthRecords } from '../../src/app/oauth-records.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { emptyDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Migration 0031 names the client of each OAuth record (oauth_records.client_id) from the JSON the
 * record already holds, so clients registered before it are swept as new ones: kept while a grant of
 * theirs lives, removed a day after they were last seen in use.
 */
const t0 = Date.parse('2026-12-01T09:00:00Z');
const day = 24 * 3_600_000;

const empty = emptyDatabasePerTest('oauth-client-lifetime-');

describe('migration 0031: the client of each OAuth record', () => {
  it('fills client_id from the stored JSON; the sweep then keeps a client in use and removes an unused one', async () => {
    const { db } = empty;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('2026-11-29-0030-postgres-overlap-guard')).error).toBeUndefined();
    const row = (kind: string, id: string, payload: object, expiresAt: number | null, grantId?: string) => ({
      kind,
      id_hash: hashOf(id),
      organisation_id: '',
      grant_id: grantId ?? null,
      uid: null,
      payload: JSON.stringify(payload),
      expires_at: expiresAt,
      consumed_at: null,
    });
    await db
      .insertInto('oauth_records')
      .values([
        row('Client', 'used', { client_id: 'used', redirect_uris: ['https://a.example/cb'] }, null),
        row('Client', 'unused', { client_id: 'unused', redirect_uris: ['https://b.example/cb'] }, null),
        row(
          'RegistrationAccessToken',
          'rat-unused',
          { clientId: 'unused', kind: 'RegistrationAccessToken' },
          null,
        ),
        row('Grant', 'grant-1', { clientId: 'used', accountId: 'o/u' }, t0 + 300 * day, 'grant-1'),
        row('Interaction', 'sign-in', { params: { client_id: 'unused' } }, t0 - 1),
        row('ServerSecrets', 'server-secrets', { cookieKey: 'k' }, null),
      ] as never)
      .execute();
    await migrateToLatest(db);

    const clients = await db
      .selectFrom('oauth_records')
      .select(['kind', 'client_id'])
      .orderBy('kind')
      .execute();
    expect(clients).toEqual([
      { kind: 'Client', client_id: expect.any(String) },
      { kind: 'Client', client_id: expect.any(String) },
      { kind: 'Grant', client_id: 'used' },
      { kind: 'Interaction', client_id: 'unused' },
      { kind: 'RegistrationAccessToken', client_id: 'unused' },
      { kind: 'ServerSecrets', client_id: null },
    ]);
    const registered = async () =>
      (await db.selectFrom('oauth_records').select('client_id').where('kind', '=', 'Client').execute())
        .map((r) => r.client_id)
        .sort();
    expect(await registered()).toEqual(['unused', 'used']);

    await sweepOauthRecords(db, t0);
    expect(await registered()).toEqual(['unused', 'used']);
    await sweepOauthRecords(db, t0 + CLIENT_UNUSED_MS + 1);
    expect(await registered()).toEqual(['used']);
    // Its registration access token went with it; the server's secrets stay.
    expect(
      (await db.selectFrom('oauth_records').select('kind').orderBy('kind').execute()).map((r) => r.kind),
    ).toEqual(['Client', 'Grant', 'ServerSecrets']);
  });

  it("runs over records whose JSON holds a \\u0000 or a lone surrogate, which PostgreSQL's jsonb cannot read", async () => {
    const { db } = empty;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo('2026-11-29-0030-postgres-overlap-guard')).error).toBeUndefined();
    // Anyone may register a client with any name, and a sign-in keeps the authorize request's
    // parameters (its state) as sent: JSON.stringify writes a NUL character as \u0000, and half an
    // emoji (a name cut short) as \ud83d.
    const row = (kind: string, id: string, payload: object) => ({
      kind,
      id_hash: hashOf(id),
      organisation_id: '',
      grant_id: null,
      uid: null,
      payload: JSON.stringify(payload),
      expires_at: null,
      consumed_at: null,
    });
    await db
      .insertInto('oauth_records')
      .values([
        row('Client', 'nul-name', { client_name: 'a\u0000b', client_id: 'nul-name' }),
        row('Client', 'plain', { client_id: 'plain' }),
        row('Client', 'half-emoji', { client_name: 'a\ud83d', client_id: 'half-emoji' }),
        row('Interaction', 'sign-in', { params: { state: '\u0000', client_id: 'nul-name' } }),
        row('Grant', 'grant-1', { clientId: 'plain', note: 'x\u0000' }),
        row('Session', 'session-1', { note: '\u0000' }),
      ] as never)
      .execute();
    await migrateToLatest(db);

    const named = await db
      .selectFrom('oauth_records')
      .select(['kind', 'client_id'])
      .orderBy('kind')
      .execute();
    expect(named.map((r) => [r.kind, r.client_id]).sort()).toEqual([
      ['Client', 'half-emoji'],
      ['Client', 'nul-name'],
      ['Client', 'plain'],
      ['Grant', 'plain'],
      ['Interaction', 'nul-name'],
      ['Session', null],
    ]);
  });
});

import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Db } from '../data/database.ts';
import * as records from '../data/oauth-repository.ts';
import { NO_ORGANISATION } from '../data/rate-limit-counters.ts';

/**
 * The storage adapter of the OAuth authorization server (oidc-provider's Adapter interface): one
 * instance per kind of record (its "model": Session, Interaction, Client, AuthorizationCode, Grant,
 * AccessToken, RefreshToken...), all in the table oauth_records, shared by every instance of the
 * server (PostgreSQL), so any instance answers any step of a sign-in.
 *
 * A record is found by a SHA-256 of its id and stored without it: an access or refresh token's id is
 * the token itself (opaque tokens), so the database holds no usable token, as api_keys holds no key.
 * A grant's records carry its organisation (from the account id, `<organisation id>/<user id>`), and
 * its id, so revoking the grant deletes them all at once.
 */
export class OauthRecordStore {
  readonly #db: Db;
  readonly #kind: string;
  readonly #now: () => number;

  constructor(db: Db, kind: string, now: () => number) {
    this.#db = db;
    this.#kind = kind;
    this.#now = now;
  }

  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> {
    if (this.#kind === 'Interaction') await this.#sweep();
    // A token's id is the token: kept out of the payload. Other records (a session's uid look-up) keep it.
    const { jti: _jti, ...rest } = payload;
    const stored = TOKEN_KINDS.has(this.#kind) ? rest : payload;
    const accountId = typeof payload.accountId === 'string' ? payload.accountId : undefined;
    await records.upsertRecord(this.#db, {
      kind: this.#kind,
      id_hash: hashOf(id),
      organisation_id: (accountId && organisationOfAccount(accountId)) ?? NO_ORGANISATION,
      // A Grant is its own grant: revoking it deletes it with its codes and tokens.
      grant_id: this.#kind === 'Grant' ? id : typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      payload: JSON.stringify(stored),
      expires_at: typeof expiresIn === 'number' ? this.#now() + expiresIn * 1000 : null,
      consumed_at: null,
    });
  }

  async find(id: string): Promise<Record<string, unknown> | undefined> {
    return this.#present(id, await records.findRecord(this.#db, this.#kind, hashOf(id)));
  }

  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    const row = await records.findRecordByUid(this.#db, this.#kind, uid);
    // Only Sessions are found by uid, and a session's id is what its cookie holds: the payload keeps it.
    return row ? this.#present(String(JSON.parse(row.payload).jti ?? ''), row) : undefined;
  }

  async findByUserCode(): Promise<undefined> {
    // The device flow is not enabled.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await records.consumeRecord(this.#db, this.#kind, hashOf(id), this.#now());
  }

  async destroy(id: string): Promise<void> {
    await records.deleteRecord(this.#db, this.#kind, hashOf(id));
  }

  /**
   * The library revokes a whole grant when a client revokes its refresh token (RFC 7009) or a code is
   * used twice: its records go, and its connector shows as revoked in the console.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await records.deleteRecordsOfGrant(this.#db, grantId);
    await records.revokeConnectorById(this.#db, grantId, this.#now());
  }

  /**
   * Expired records are never read again (find treats them as absent); they are deleted at most every
   * SWEEP_EVERY_MS per database, when a sign-in starts (every one makes an Interaction).
   */
  async #sweep(): Promise<void> {
    const now = this.#now();
    if (now - (lastSweeps.get(this.#db) ?? 0) < SWEEP_EVERY_MS) return;
    lastSweeps.set(this.#db, now);
    // Housekeeping: a database that cannot write just now must not refuse the sign-in.
    await records.deleteExpiredRecords(this.#db, now).catch(() => undefined);
  }

  #present(id: string, row: records.OauthRecordRow | undefined): Record<string, unknown> | undefined {
    if (!row) return undefined;
    if (row.expires_at !== null && row.expires_at <= this.#now()) return undefined;
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    if (payload.jti === undefined && TOKEN_KINDS.has(this.#kind)) payload.jti = id;
    if (row.consumed_at !== null) payload.consumed = Math.floor(row.consumed_at / 1000);
    return payload;
  }
}

const SWEEP_EVERY_MS = 10 * 60_000;
const lastSweeps = new WeakMap<Db, number>();

/** Kinds whose id is the token a client holds: oidc-provider reads it back as the payload's jti. */
const TOKEN_KINDS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials']);

/** The account id the consent page gives oidc-provider: the organisation and the console account. */
export function accountIdOf(organisationId: string, userId: string): string {
  return `${organisationId}/${userId}`;
}

export function organisationOfAccount(accountId: string): string | undefined {
  const slash = accountId.indexOf('/');
  return slash > 0 ? accountId.slice(0, slash) : undefined;
}

export function hashOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export interface ServerSecrets {
  /** A private JWK (RS256): the library signs with it what it signs (ID tokens, were any asked for). */
  // biome-ignore lint/suspicious/noExplicitAny: a JWK as node:crypto exports it.
  signingKey: any;
  /** Signs the authorization server's cookies (its interaction and session). */
  cookieKey: string;
}

const SECRETS_KIND = 'ServerSecrets';

/**
 * The authorization server's keys, the same for every instance: made by the first that needs them,
 * stored (the first writer wins a race), and read back by all.
 */
export async function loadServerSecrets(db: Db): Promise<ServerSecrets> {
  const idHash = hashOf('server-secrets');
  if (!(await records.findRecord(db, SECRETS_KIND, idHash))) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const made: ServerSecrets = {
      signingKey: {
        ...privateKey.export({ format: 'jwk' }),
        kid: randomBytes(8).toString('hex'),
        use: 'sig',
        alg: 'RS256',
      },
      cookieKey: randomBytes(32).toString('base64url'),
    };
    await records.insertRecordIfAbsent(db, {
      kind: SECRETS_KIND,
      id_hash: idHash,
      organisation_id: NO_ORGANISATION,
      grant_id: null,
      uid: null,
      payload: JSON.stringify(made),
      expires_at: null,
      consumed_at: null,
    });
  }
  const row = await records.findRecord(db, SECRETS_KIND, idHash);
  if (!row) throw new Error('The OAuth server secrets could not be stored');
  return JSON.parse(row.payload) as ServerSecrets;
}

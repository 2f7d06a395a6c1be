import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Db } from '../data/database.ts';
import * as records from '../data/oauth-repository.ts';
import { NO_ORGANISATION } from '../data/rate-limit-counters.ts';
import { startPeriodicWork } from './periodic-work.ts';

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
 *
 * A registered client (dynamic registration is open to anyone) ends: its record's expiry is when
 * sweepOauthRecords removes it unless it is in use, a day from its registration and, while it is in
 * use, a day from the last sweep that saw it so. Records of a client carry its id for that.
 */
export class OauthRecordStore {
  readonly #db: Db;
  readonly #kind: string;
  readonly #now: () => number;
  readonly #spentAlready: () => Error;

  /**
   * `spentAlready`: the error (the library's invalid_grant) for an authorization code another request
   * spent between the library's look-up of it and its consume.
   */
  constructor(db: Db, kind: string, now: () => number, spentAlready: () => Error) {
    this.#db = db;
    this.#kind = kind;
    this.#now = now;
    this.#spentAlready = spentAlready;
  }

  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> {
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
      client_id: this.#kind === 'Client' ? id : clientOf(payload),
      payload: JSON.stringify(stored),
      // The library gives a registered client no lifetime: it has one here (CLIENT_UNUSED_MS).
      expires_at:
        this.#kind === 'Client'
          ? this.#now() + CLIENT_UNUSED_MS
          : typeof expiresIn === 'number'
            ? this.#now() + expiresIn * 1000
            : null,
      consumed_at: null,
    });
    // After the write: the sign-in that starts here shows its client in use, so the sweep it runs
    // keeps that client (one past its day would otherwise go between the library's look-up of it and
    // the consent, and the person's consent would end in "client is invalid").
    if (this.#kind === 'Interaction') await this.#sweep();
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

  /**
   * An authorization code is spent once: the library checks that it is unspent, then spends it, and
   * two requests redeeming one code at the same moment (on two instances) would both pass the check.
   * The spending is the check: the second is refused (invalid_grant) and issues no token.
   */
  async consume(id: string): Promise<void> {
    const spent = await records.consumeRecord(this.#db, this.#kind, hashOf(id), this.#now());
    if (!spent && this.#kind === 'AuthorizationCode') throw this.#spentAlready();
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
   * Expired records are never read again (find treats them as absent); they are deleted by the
   * periodic sweep (startOauthSweeper), and besides at most every SWEEP_EVERY_MS per database when a
   * sign-in starts (every one makes an Interaction).
   */
  async #sweep(): Promise<void> {
    const now = this.#now();
    if (now - (lastSweeps.get(this.#db) ?? 0) < SWEEP_EVERY_MS) return;
    lastSweeps.set(this.#db, now);
    // Housekeeping: a database that cannot write just now must not refuse the sign-in.
    await sweepOauthRecords(this.#db, now).catch(() => undefined);
  }

  #present(id: string, row: records.OauthRecordRow | undefined): Record<string, unknown> | undefined {
    if (!row) return undefined;
    // A client's expiry is when the sweep may remove it, if unused: until the sweep does, it is read (a
    // client in use whose expiry the sweep has not moved yet, after a day the server was stopped).
    const expires = this.#kind !== 'Client' && row.expires_at !== null;
    if (expires && row.expires_at! <= this.#now()) return undefined;
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    if (payload.jti === undefined && TOKEN_KINDS.has(this.#kind)) payload.jti = id;
    if (row.consumed_at !== null && !this.#inReuseGrace(row.consumed_at)) {
      payload.consumed = Math.floor(row.consumed_at / 1000);
    }
    return payload;
  }

  /**
   * A refresh token exchanged moments ago is taken again, as if unspent: a host whose calls all found
   * their access token expired refreshes once per call, each with the token it holds, and the library
   * reads every use of a spent refresh token as a stolen copy's and ends the whole connection. After
   * REFRESH_REUSE_GRACE_MS a second use is that again. Codes are never taken twice.
   */
  #inReuseGrace(consumedAt: number): boolean {
    return this.#kind === 'RefreshToken' && this.#now() - consumedAt < REFRESH_REUSE_GRACE_MS;
  }
}

/** How long a rotated refresh token may still be exchanged (as Okta's grace period: 30 s). */
const REFRESH_REUSE_GRACE_MS = 30_000;

const SWEEP_EVERY_MS = 10 * 60_000;
const lastSweeps = new WeakMap<Db, number>();

/**
 * How long a registered client is kept without a sign-in, code, grant or token: a day from its
 * registration, time enough for a person to reach and finish the consent page (the host registers
 * just before opening it; the page itself lasts 15 minutes), and a day after its last grant ended or
 * was revoked, time enough to connect it again without registering anew. Anyone may register (30 a
 * minute from an address): without an end, registrations nobody uses would pile up for ever.
 */
export const CLIENT_UNUSED_MS = 24 * 60 * 60_000;

/** The client a sign-in (its request's client_id), code, grant or token belongs to. */
function clientOf(payload: Record<string, unknown>): string | null {
  if (typeof payload.clientId === 'string') return payload.clientId;
  const params = payload.params as Record<string, unknown> | undefined;
  return typeof params?.client_id === 'string' ? params.client_id : null;
}

/**
 * The authorization server's housekeeping: removes registered clients unused for CLIENT_UNUSED_MS
 * (and their registration access tokens), gives those in use another CLIENT_UNUSED_MS, and deletes
 * the other records past their expiry. A removed client's later requests get the library's
 * invalid_client, as any unknown client.
 */
export async function sweepOauthRecords(db: Db, now: number): Promise<void> {
  await records.removeUnusedClients(db, now);
  await records.keepClientsInUse(db, now, now + CLIENT_UNUSED_MS);
  await records.deleteExpiredRecords(db, now);
}

/**
 * Runs sweepOauthRecords about every `intervalMs` until stopped; failures are reported, never fatal.
 * Its interval must stay well under CLIENT_UNUSED_MS: a client in use is kept by the sweeps that see it.
 */
export function startOauthSweeper(
  db: Db,
  clock: { nowMs(): number },
  onError: (error: unknown) => void,
  intervalMs = SWEEP_EVERY_MS,
): () => Promise<void> {
  return startPeriodicWork(() => sweepOauthRecords(db, clock.nowMs()), onError, intervalMs);
}

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
      client_id: null,
      payload: JSON.stringify(made),
      expires_at: null,
      consumed_at: null,
    });
  }
  const row = await records.findRecord(db, SECRETS_KIND, idHash);
  if (!row) throw new Error('The OAuth server secrets could not be stored');
  return JSON.parse(row.payload) as ServerSecrets;
}

import { randomUUID } from 'node:crypto';
import * as keys from '../data/api-key-repository.ts';
import type { Db } from '../data/database.ts';
import { findOrganisationBySlug } from '../data/organisation-repository.ts';
import type { RateLimitStore, RequestCounts } from '../data/rate-limit-counters.ts';
import { SKIPPED_IF_BUSY, writeStatement } from '../data/write-transaction.ts';
import { type ApiKeyScope, isWellFormedApiKey, scopeAllows } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';
import { generateApiKey, hashApiKey } from './api-key-crypto.ts';
import { checkFreeText } from './free-text.ts';
import { alreadySent, idOfForm } from './once-forms.ts';
import {
  KEY_COUNTER_PREFIX,
  keyRequests,
  ORGANISATION_COUNTER,
  organisationRequests,
} from './rate-limiter.ts';
import { keyLimitOf, organisationLimitOf, type RequestBudgets } from './request-budgets.ts';

/** Who is calling: the organisation and scope resolved from an API key. */
export interface Principal {
  apiKeyId: string;
  scope: ApiKeyScope;
  rateLimitPerMinute: number | null;
  organisation: {
    id: string;
    slug: string;
    currency: string;
    locale: string;
    bookingReferencePrefix: string;
    /** Changes whenever the organisation's catalogue does (read with the key, so always current). */
    catalogueVersion: number;
    /**
     * Changes whenever one of its bookings changes as availability sees it; read with the key, so
     * current as of the start of the request (or MCP call) that authenticated.
     */
    bookingsVersion: number;
  };
}

export interface ApiKeySummary {
  id: string;
  label: string;
  scope: ApiKeyScope;
  /** `bk_…` and the last four characters: enough to tell keys apart, useless to an attacker. */
  hint: string;
  rate_limit_per_minute: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** last_used_at is written at most this often per key, so reads stay reads. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export interface CreatedApiKey extends ApiKeySummary {
  /** The plaintext key: shown once, never stored. */
  key: string;
}

/**
 * The highest per-key limit: far above any front desk or agent, and a whole number the counters and
 * the rate-limit headers carry exactly (1e20 was stored as a real number and sent back as such).
 */
export const MAX_KEY_RATE_LIMIT = 1_000_000;

export async function createApiKey(
  db: Db,
  input: {
    organisationSlug: string;
    label: string;
    scope: ApiKeyScope;
    rateLimitPerMinute?: number | null;
    /** The console form's one-time id: a form sent again issues no second key (409 conflict). */
    formId?: string;
  },
  now: number,
): Promise<CreatedApiKey> {
  const organisation = await findOrganisationBySlug(db, input.organisationSlug);
  if (!organisation)
    throw new AppError('not_found', `No organisation has the slug "${input.organisationSlug}".`);
  const label = input.label.trim();
  if (label === '' || label.length > 100)
    throw new AppError('invalid_request', 'A key label is 1 to 100 characters.');
  checkFreeText(label, 100, 'label');
  const rate = input.rateLimitPerMinute ?? null;
  if (rate !== null && (!Number.isInteger(rate) || rate < 1 || rate > MAX_KEY_RATE_LIMIT)) {
    throw new AppError(
      'invalid_request',
      `A rate limit is a whole number of requests per minute, from 1 to ${MAX_KEY_RATE_LIMIT}.`,
    );
  }
  const key = generateApiKey();
  const row: keys.ApiKeyRow = {
    id: input.formId === undefined ? randomUUID() : idOfForm(organisation.id, input.formId),
    organisation_id: organisation.id,
    label,
    scope: input.scope,
    key_hash: hashApiKey(key),
    key_last4: key.slice(-4),
    rate_limit_per_minute: rate,
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  };
  if (input.formId === undefined) await keys.insertApiKey(db, row);
  else if (!(await keys.insertApiKeyOnce(db, row))) throw alreadySent('key');
  return { ...toSummary(row), key };
}

export async function listApiKeys(db: Db, organisationSlug: string): Promise<ApiKeySummary[]> {
  const organisation = await findOrganisationBySlug(db, organisationSlug);
  if (!organisation) throw new AppError('not_found', `No organisation has the slug "${organisationSlug}".`);
  return (await keys.listApiKeys(db, organisation.id)).map(toSummary);
}

/** The organisation's key with this id while it is live (the console asks before revoking it); else 404. */
export async function getLiveApiKey(db: Db, organisationId: string, id: string): Promise<ApiKeySummary> {
  const existing = await keys.findApiKeyById(db, id);
  if (!existing || existing.organisation_id !== organisationId || existing.revoked_at !== null) {
    throw new AppError('not_found', 'No live API key has this id.', 'id');
  }
  return toSummary(existing);
}

/**
 * Revokes a key (again: no change). `organisationId` scopes it (the console): another organisation's
 * key is as unknown as a missing one. The operator's CLI passes none. Returns the id as stored and,
 * for a key revoked before, when it was.
 */
export async function revokeApiKey(
  db: Db,
  id: string,
  now: number,
  organisationId?: string,
): Promise<{ id: string; alreadyRevokedAt: number | null }> {
  // A UUID in any case, as a message's id is taken (ids are stored in lower case).
  const existing = await keys.findApiKeyById(db, id.trim().toLowerCase());
  if (!existing || (organisationId !== undefined && existing.organisation_id !== organisationId)) {
    throw new AppError('not_found', `No API key has the id "${id}".`, 'id');
  }
  if (existing.revoked_at !== null) return { id: existing.id, alreadyRevokedAt: existing.revoked_at };
  await keys.revokeApiKey(db, existing.id, now);
  return { id: existing.id, alreadyRevokedAt: null };
}

/**
 * The principal for a presented key, or null when the key is malformed, unknown or revoked. A
 * malformed key never reaches the database. The lookup is by hash on a unique index, so there is no
 * comparison of secrets whose timing could leak anything.
 */
export async function authenticateApiKey(db: Db, presented: string, now: number): Promise<Principal | null> {
  if (!isWellFormedApiKey(presented)) return null;
  const row = await keys.findApiKeyByHash(db, hashApiKey(presented));
  if (!row || row.revoked_at !== null) return null;
  await noteUse(db, row, now);
  return principalOf(row);
}

/** A principal, and the counts of its key's and its organisation's windows, this request included. */
export interface CountedPrincipal {
  principal: Principal;
  counts: RequestCounts;
}

/**
 * requirePrincipal, with the request counted in the rate-limit windows ending at `windowEnd` as
 * RateLimitStore.countRequest counts it (the key's counter, keyRequests, and up to the key's limit,
 * its own or the budgets' default, its organisation's, organisationRequests): in the key lookup's own
 * statement when the store is a table of the same database (PostgreSQL: one round trip for all), else
 * right after the lookup. Counted only for a key that authenticates, as before.
 */
export async function requireCountedPrincipal(
  db: Db,
  store: RateLimitStore,
  presented: string,
  now: number,
  windowEnd: number,
  budgets: RequestBudgets,
): Promise<CountedPrincipal> {
  if (isWellFormedApiKey(presented)) {
    const hash = hashApiKey(presented);
    if (store.findKeyAndCount) {
      const counters = {
        keyPrefix: KEY_COUNTER_PREFIX,
        organisation: ORGANISATION_COUNTER,
        defaultKeyLimit: budgets.requestsPerMinute,
      };
      const row = await store.findKeyAndCount(hash, counters, windowEnd);
      if (row && row.revoked_at === null && row.window_count !== null) {
        await noteUse(db, row, now);
        return {
          principal: principalOf(row),
          counts: { key: row.window_count, organisation: row.organisation_window_count },
        };
      }
    } else {
      const row = await keys.findApiKeyByHash(db, hash);
      if (row && row.revoked_at === null) {
        await noteUse(db, row, now);
        const principal = principalOf(row);
        const counts = await store.countRequest(
          keyRequests(principal),
          keyLimitOf(principal, budgets),
          organisationRequests(principal.organisation.id),
          organisationLimitOf(principal, budgets),
          windowEnd,
        );
        return { principal, counts };
      }
    }
  }
  throw invalidApiKey();
}

/** last_used_at, written at most once a LAST_USED_RESOLUTION_MS per key. */
async function noteUse(db: Db, row: keys.ApiKeyWithOrganisation, now: number): Promise<void> {
  if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
    // Bookkeeping: a database that cannot write just now (a full disk) must not refuse the caller a
    // read. The failure is not lost: the storage's health check has seen it. Nor does it wait for
    // the disk (lost in a power cut, the key's next use after it writes it again), or for another
    // process's write lock on SQLite (the next use writes it).
    await writeStatement(db, (trx) => keys.recordApiKeyUse(trx, row.id, now), SKIPPED_IF_BUSY).catch(
      () => undefined,
    );
  }
}

function principalOf(row: keys.ApiKeyWithOrganisation): Principal {
  return {
    apiKeyId: row.id,
    scope: row.scope,
    rateLimitPerMinute: row.rate_limit_per_minute,
    organisation: {
      id: row.organisation_id,
      slug: row.organisation_slug,
      currency: row.currency,
      locale: row.locale,
      bookingReferencePrefix: row.booking_reference_prefix,
      catalogueVersion: row.catalogue_version,
      bookingsVersion: row.bookings_version,
    },
  };
}

/** The principal of a presented key, or 401 invalid_api_key (malformed, unknown or revoked). */
export async function requirePrincipal(db: Db, presented: string, now: number): Promise<Principal> {
  const principal = await authenticateApiKey(db, presented, now);
  if (!principal) throw invalidApiKey();
  return principal;
}

function invalidApiKey(): AppError {
  return new AppError('invalid_api_key', 'The API key is malformed, unknown or revoked.', 'Authorization');
}

/** 403 insufficient_scope unless the key's scope allows what is `needed`. */
export function requireScope(principal: Principal, needed: ApiKeyScope): void {
  if (!scopeAllows(principal.scope, needed)) {
    throw new AppError(
      'insufficient_scope',
      `This key has scope ${principal.scope}; ${needed} is needed.`,
      'Authorization',
    );
  }
}

function toSummary(row: keys.ApiKeyRow): ApiKeySummary {
  return {
    id: row.id,
    label: row.label,
    scope: row.scope,
    hint: `bk_…${row.key_last4}`,
    rate_limit_per_minute: row.rate_limit_per_minute,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  };
}

/** Whether the key with this id still exists unrevoked: open MCP streams ask it as they go. */
export async function isApiKeyActive(db: Db, apiKeyId: string): Promise<boolean> {
  const row = await keys.findApiKeyById(db, apiKeyId);
  return row !== undefined && row.revoked_at === null;
}

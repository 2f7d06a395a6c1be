import type { Db } from '../data/database.ts';
import * as records from '../data/oauth-repository.ts';
import type { ConnectorScope } from '../data/tables.ts';
import { writeTransaction } from '../data/write-transaction.ts';

export type { ConnectorScope };

import type { ApiKeyScope } from '../domain/api-key.ts';
import { AppError } from '../domain/errors.ts';
import type { Principal } from './api-key-service.ts';
import { LAST_USED_RESOLUTION_MS } from './api-key-service.ts';
import { hashOf } from './oauth-records.ts';

/**
 * Hosted MCP connectors (design.md 9.3): what an owner or admin granted a client on the consent page,
 * and what an OAuth access token presented at /mcp stands for. A token acts for one organisation
 * with the scope granted, exactly as an API key of the matching scope: the same Principal, the same
 * rate limits (counted under the connector's id as a key's are under the key's), the same tools.
 */
export const CONNECTOR_SCOPES: readonly ConnectorScope[] = ['bookings:read', 'bookings:write'];

/** The API-key scope an OAuth scope is worth. */
export function keyScopeOf(scope: ConnectorScope): ApiKeyScope {
  return scope === 'bookings:write' ? 'read_write' : 'read';
}

export function isConnectorScope(value: unknown): value is ConnectorScope {
  return CONNECTOR_SCOPES.includes(value as ConnectorScope);
}

export interface ConnectorSummary {
  id: string;
  clientId: string;
  clientName: string | null;
  scope: ConnectorScope;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export async function recordConnector(
  db: Db,
  input: {
    grantId: string;
    organisationId: string;
    clientId: string;
    clientName: string | null;
    scope: ConnectorScope;
    userId: string;
  },
  now: number,
): Promise<void> {
  await records.insertConnector(db, {
    id: input.grantId,
    organisation_id: input.organisationId,
    client_id: input.clientId.slice(0, 2000),
    client_name: input.clientName === null ? null : input.clientName.slice(0, 200),
    scope: input.scope,
    granted_by: input.userId,
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  });
}

/**
 * Takes back a connector recorded for a sign-in that then could not be answered (it ended meanwhile,
 * or another answer to it won): no token was ever given under its grant, so the connector goes with
 * the grant, rather than being listed as an app that never connected.
 */
export async function forgetUnfinishedConnector(
  db: Db,
  organisationId: string,
  grantId: string,
): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await records.deleteConnector(trx, organisationId, grantId);
    await records.deleteRecordsOfGrant(trx, grantId);
  });
}

export async function listConnectors(db: Db, organisationId: string): Promise<ConnectorSummary[]> {
  return (await records.listConnectors(db, organisationId)).map((row) => ({
    id: row.id,
    clientId: row.client_id,
    clientName: row.client_name,
    scope: row.scope,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }));
}

/** Revokes every connector `userId` granted (their tokens deleted), as revokeConnector does one. */
export async function revokeConnectorsGrantedBy(
  db: Db,
  organisationId: string,
  userId: string,
  now: number,
): Promise<void> {
  for (const id of await records.liveConnectorsGrantedBy(db, organisationId, userId)) {
    await records.revokeConnector(db, organisationId, id, now);
    await records.deleteRecordsOfGrant(db, id);
  }
}

/**
 * Revokes a connector (again: no change): its tokens, refresh tokens and codes are deleted, so its
 * next /mcp call is refused and it cannot refresh. Another organisation's connector is as unknown as
 * a missing one.
 */
export async function revokeConnector(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<void> {
  const existing = await records.findConnector(db, organisationId, id);
  if (!existing) throw new AppError('not_found', `No connector has the id "${id}".`, 'id');
  await records.revokeConnector(db, organisationId, id, now);
  await records.deleteRecordsOfGrant(db, id);
}

/** What an access token record's payload holds that /mcp needs (oidc-provider's opaque AccessToken). */
interface AccessTokenPayload {
  exp?: number;
  aud?: string | string[];
  grantId?: string;
  accountId?: string;
  scope?: string;
}

/**
 * Why an access token presented at /mcp is refused, for the refusal to say so:
 * - `not_a_token`: not shaped as the tokens this server issues (nor as an API key);
 * - `unknown`: no token this server holds (never issued here, revoked by its client or from the
 *   console, whose records are deleted, or expired and since swept away);
 * - `expired`: past its hour, still on record;
 * - `other_resource`: bound to another resource (RFC 8707), this server under another name included;
 * - `revoked`: its connector revoked, or the account that granted it disabled.
 */
export type AccessTokenRefusal = 'not_a_token' | 'unknown' | 'expired' | 'other_resource' | 'revoked';

/** Tokens are what oidc-provider makes (43 base64url characters); anything longer is not one. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,128}$/;

/**
 * The principal of an OAuth access token presented at `resource` (this server's /mcp URL, as the
 * request reached it), or why it is refused (AccessTokenRefusal).
 */
export async function principalOfAccessToken(
  db: Db,
  token: string,
  resource: string,
  now: number,
): Promise<Principal | { refused: AccessTokenRefusal }> {
  if (!TOKEN_SHAPE.test(token)) return { refused: 'not_a_token' };
  const row = await records.findRecord(db, 'AccessToken', hashOf(token));
  if (!row || row.grant_id === null) return { refused: 'unknown' };
  const payload = JSON.parse(row.payload) as AccessTokenPayload;
  if (row.expires_at !== null && row.expires_at <= now) return { refused: 'expired' };
  if (typeof payload.exp === 'number' && payload.exp * 1000 <= now) return { refused: 'expired' };
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!audiences.includes(resource)) return { refused: 'other_resource' };
  const connector = await records.findConnector(db, row.organisation_id, row.grant_id);
  if (!connector) return { refused: 'unknown' };
  // A connector acts on its grantor's authority: none once that account is disabled (disableUser
  // revokes its connectors; this also refuses one granted just as it was being disabled).
  if (connector.revoked_at !== null || connector.granted_by_disabled_at !== null)
    return { refused: 'revoked' };
  if (connector.last_used_at === null || now - connector.last_used_at >= LAST_USED_RESOLUTION_MS) {
    // Bookkeeping, as a key's last use: a database that cannot write just now refuses nobody.
    await records.recordConnectorUse(db, connector.organisation_id, connector.id, now).catch(() => undefined);
  }
  return {
    apiKeyId: connector.id,
    scope: keyScopeOf(connector.scope),
    rateLimitPerMinute: null,
    organisation: {
      id: connector.organisation_id,
      slug: connector.organisation_slug,
      currency: connector.currency,
      locale: connector.locale,
      bookingReferencePrefix: connector.booking_reference_prefix,
      catalogueVersion: connector.catalogue_version,
      bookingsVersion: connector.bookings_version,
    },
  };
}

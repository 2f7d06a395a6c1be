import { createHash } from 'node:crypto';
import { type Db, dialectOf } from '../data/database.ts';
import { liveRecordAfterTurn, upsertIdempotencyRecord } from '../data/idempotency-records.ts';
import { preparedQuery } from '../data/prepared-query.ts';
import type { IdempotencyRecordsTable } from '../data/tables.ts';
import { idempotencyKeyTurn, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { AppError, isAppError } from '../domain/errors.ts';

/** A response as stored for replay. */
export interface StoredResponse {
  status: number;
  body: unknown;
  /** True when this is a stored response played back, not the work done now. */
  replayed?: boolean;
}

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** SHA-256 of method, path and the body in canonical JSON (keys sorted), so key order does not matter. */
export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export interface IdempotencyScope {
  organisationId: string;
  /** The Idempotency-Key header, or undefined for a request without one. */
  key: string | undefined;
  fingerprint: string;
  now: number;
}

/**
 * Runs `work` in one write transaction, exactly once per organisation and key within 24 hours.
 *
 * The stored response is written in the same transaction as whatever `work` wrote, so a crash leaves
 * both or neither. A replay with the same fingerprint returns the stored response; another body gets
 * 409 idempotency_key_reused. Expected failures (4xx) are stored too, in a transaction of their own
 * since `work`'s was rolled back; faults (5xx) are not, so a retry may succeed. Concurrent requests
 * with one key take turns (the write lock on SQLite, an advisory lock on PostgreSQL, see takeTurn),
 * and the later ones find the first one's record.
 */
export async function runIdempotently(
  db: Db,
  scope: IdempotencyScope,
  work: (trx: Db, record: ResponseRecord) => Promise<StoredResponse>,
): Promise<StoredResponse> {
  try {
    return await writeTransaction(db, async (trx) => {
      // The key's turn is taken by the read of its record (one statement on PostgreSQL).
      const replay = await storedResponse(trx, scope, { afterTurn: true });
      if (replay) return { ...replay, replayed: true };
      let written: StoredResponse | undefined;
      const response = await work(trx, {
        rowFor: (answer) => {
          const { key } = scope;
          if (key === undefined) return undefined;
          written = answer;
          return recordRow({ ...scope, key }, answer);
        },
      });
      // Unless the work wrote this very response's record with its own writes, it is stored now (over
      // any other the work wrote: the upsert keeps the last).
      if (written !== response) await store(trx, scope, response);
      return response;
    });
  } catch (error) {
    if (scope.key === undefined || !isAppError(error) || error.status >= 500) throw error;
    if (error.code === 'idempotency_key_reused') throw error;
    const response = { status: error.status, body: error.envelope() };
    await writeTransaction(db, async (trx) => {
      if (!(await storedResponse(trx, scope, { afterTurn: true }))) await store(trx, scope, response);
    });
    throw error;
  }
}

/** The key's record, unless its window has passed (asked on every write that carries a key). */
const liveRecord = preparedQuery<
  { organisationId: string; key: string; now: number },
  IdempotencyRecordsTable
>((db, param) =>
  db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('organisation_id', '=', param('organisationId'))
    .where('idempotency_key', '=', param('key'))
    .where('expires_at', '>', param('now')),
);

/**
 * The key's stored response, if any. With afterTurn, the key's turn (idempotencyKeyTurn) is taken
 * first and held to the end of the transaction, and the record is read once it is granted: on
 * PostgreSQL in one statement (liveRecordAfterTurn), so a request waiting for the turn sees what the
 * request before it stored.
 */
async function storedResponse(
  trx: Db,
  scope: IdempotencyScope,
  options: { afterTurn?: boolean } = {},
): Promise<StoredResponse | undefined> {
  if (scope.key === undefined) return undefined;
  const ask = { organisationId: scope.organisationId, key: scope.key, now: scope.now };
  const turn = idempotencyKeyTurn(scope.organisationId, scope.key);
  let record: IdempotencyRecordsTable | undefined;
  if (options.afterTurn && dialectOf(trx) === 'postgres') {
    record = await liveRecordAfterTurn(trx, turn, ask);
  } else {
    if (options.afterTurn) await takeTurn(trx, turn);
    record = await liveRecord.first(trx, ask);
  }
  if (!record) return undefined;
  if (record.fingerprint !== scope.fingerprint) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different request body in the last 24 hours.',
      'Idempotency-Key',
    );
  }
  return { status: record.status_code, body: JSON.parse(record.response_body) };
}

/**
 * Lets a unit of work write its response's record itself, in a statement it runs anyway (a booking's
 * one write statement on PostgreSQL: a round trip fewer), instead of runIdempotently storing it after.
 */
export interface ResponseRecord {
  /**
   * The idempotency_records row of `response`, to write with the work's own writes (upserted: see
   * upsertIdempotencyRecord); undefined for a request without a key, which records nothing. The work
   * must then return this very object, or the record is stored again, as without this.
   */
  rowFor(response: StoredResponse): IdempotencyRecordsTable | undefined;
}

function recordRow(
  scope: IdempotencyScope & { key: string },
  response: StoredResponse,
): IdempotencyRecordsTable {
  return {
    organisation_id: scope.organisationId,
    idempotency_key: scope.key,
    fingerprint: scope.fingerprint,
    status_code: response.status,
    response_body: JSON.stringify(response.body),
    created_at: scope.now,
    expires_at: scope.now + IDEMPOTENCY_WINDOW_MS,
  };
}

async function store(trx: Db, scope: IdempotencyScope, response: StoredResponse): Promise<void> {
  if (scope.key === undefined) return;
  // A record past its window may still be there: the key is free again, so it is overwritten.
  await upsertIdempotencyRecord(trx, recordRow({ ...scope, key: scope.key }, response));
}

/**
 * What a once-only key made (the public booking form's own key: one form, one booking), within the
 * idempotency window: the body recorded with it, or undefined when it has made nothing yet. Inside a
 * write transaction, take the key's turn first (idempotencyKeyTurn) so two sends of one form queue.
 */
export async function madeOnce(
  db: Db,
  organisationId: string,
  key: string,
  now: number,
): Promise<unknown | undefined> {
  const record = await liveRecord.first(db, { organisationId, key, now });
  return record ? JSON.parse(record.response_body) : undefined;
}

/** Records what a once-only key made, in the transaction that made it. */
export async function recordMadeOnce(
  trx: Db,
  organisationId: string,
  key: string,
  now: number,
  body: unknown,
): Promise<void> {
  await store(trx, { organisationId, key, fingerprint: ONCE, now }, { status: 201, body });
}

/** The fingerprint of a once-only record: whatever the form said, its key made one thing. */
const ONCE = 'once';

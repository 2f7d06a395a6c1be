import { createHash } from 'node:crypto';
import type { Db } from '../data/database.ts';
import {
  type KeyRecordAsk,
  keyRecordAfterTurn,
  liveRecord,
  ONCE_FINGERPRINT,
  upsertIdempotencyRecord,
} from '../data/idempotency-records.ts';
import type { IdempotencyRecordsTable } from '../data/tables.ts';
import { idempotencyKeyTurn } from '../data/write-locks.ts';
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

/**
 * `value` as JSON with every object's keys sorted (members undefined left out, undefined elsewhere
 * null). Written with a stack of its own, not by recursion: a body refused for its shape is
 * fingerprinted as sent, and 64 KiB of JSON nests some 30,000 deep, past the call stack's depth.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  // What is left to write, the last first: a value, or text as it is.
  const pending: ({ value: unknown } | { text: string })[] = [{ value }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if ('text' in next) {
      parts.push(next.text);
      continue;
    }
    const current = next.value;
    if (Array.isArray(current)) {
      const items = Array.from(current, (item, index) => [index === 0 ? '[' : ',', item] as const);
      pushInOrder(pending, items, ']', '[]');
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v], index) => [`${index === 0 ? '{' : ','}${JSON.stringify(k)}:`, v] as const);
      pushInOrder(pending, entries, '}', '{}');
    } else {
      parts.push(JSON.stringify(current ?? null));
    }
  }
  return parts.join('');
}

/** Puts `members` (each a text before its value), then `close`, on `pending` to be written in order. */
function pushInOrder(
  pending: ({ value: unknown } | { text: string })[],
  members: readonly (readonly [string, unknown])[],
  close: string,
  empty: string,
): void {
  if (members.length === 0) {
    pending.push({ text: empty });
    return;
  }
  pending.push({ text: close });
  for (let i = members.length - 1; i >= 0; i--) {
    const [before, member] = members[i]!;
    pending.push({ value: member }, { text: before });
  }
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
 * since `work`'s was rolled back (should another request with the key have stored its answer in
 * between, that answer is this one's too); faults (5xx) are not, so a retry may succeed. Concurrent requests
 * with one key take turns (the write lock on SQLite, an advisory lock on PostgreSQL, see takeTurn),
 * and the later ones find the first one's record.
 *
 * With `workReadsRecord`, the work reads the key's record itself (ResponseRecord.deferredRead), in
 * the statement that takes its location's turn (under the key's turn, taken just before), before it
 * writes anything; what stops it before then is answered with the record when there is one, as if the
 * record had been read first.
 */
export async function runIdempotently(
  db: Db,
  scope: IdempotencyScope,
  work: (trx: Db, record: ResponseRecord) => Promise<StoredResponse>,
  options: { workReadsRecord?: boolean } = {},
): Promise<StoredResponse> {
  const { key } = scope;
  const deferredRead =
    options.workReadsRecord && key !== undefined ? new DeferredRecordRead({ ...scope, key }) : undefined;
  try {
    return await writeTransaction(db, async (trx) => {
      // Each run reads it afresh (writeTransaction runs the work again after a RedoTransaction).
      deferredRead?.unsettle();
      if (!deferredRead) {
        // The key's turn is taken by the read of its record (one statement on PostgreSQL).
        const replay = await storedResponse(trx, scope);
        if (replay) return { ...replay, replayed: true };
      }
      let written: StoredResponse | undefined;
      const response = await work(trx, {
        deferredRead,
        rowFor: (answer) => {
          if (key === undefined) return undefined;
          deferredRead?.requireSettled();
          written = answer;
          return recordRow({ ...scope, key }, answer);
        },
      });
      deferredRead?.requireSettled();
      // Unless the work wrote this very response's record with its own writes, it is stored now (over
      // any other the work wrote: the upsert keeps the last).
      if (written !== response) await store(trx, scope, response);
      return response;
    });
  } catch (error) {
    if (error instanceof RecordFound) return { ...error.response, replayed: true };
    if (error instanceof UnreadRecord) throw error;
    if (key === undefined) throw error;
    // The work stopped before it read the record: a record there is the answer, whatever stopped it.
    const unread = deferredRead !== undefined && !deferredRead.settled;
    if (!isAppError(error) || error.status >= 500) {
      const replay = unread ? await readAfterFault(db, scope) : undefined;
      if (replay) return { ...replay, replayed: true };
      throw error;
    }
    if (error.code === 'idempotency_key_reused') throw error;
    return refuseOnce(db, { ...scope, key }, error);
  }
}

/**
 * Stores a refusal (a 4xx) under its key and throws it; or, when the key already has a record,
 * answers with that record (replayed), or idempotency_key_reused for another body. Used for the
 * refusals of runIdempotently's work, and for a body refused before any work (src/http: a body the
 * contract's schema refuses), so the same key and body are refused the same way for 24 hours.
 */
export async function refuseOnce(
  db: Db,
  scope: IdempotencyScope & { key: string },
  error: AppError,
): Promise<StoredResponse> {
  const response = { status: error.status, body: error.envelope() };
  const replay = await writeTransaction(db, async (trx) => {
    const stored = await storedResponse(trx, scope);
    if (!stored) await store(trx, scope, response);
    return stored;
  });
  // A record there is the key's answer: this request's own work read none (or never got to read
  // it), and another request with the key stored one once this one's turn was let go, before the
  // refusal could be stored. Answered with it, this request is as if it had come second.
  if (replay) return { ...replay, replayed: true };
  throw error;
}

/**
 * The key's stored response, if any: the key's turn (idempotencyKeyTurn) is taken first and held to
 * the end of the transaction, and the record is read once it is granted (keyRecordAfterTurn), so a
 * request waiting for the turn sees what the request before it stored.
 */
async function storedResponse(trx: Db, scope: IdempotencyScope): Promise<StoredResponse | undefined> {
  if (scope.key === undefined) return undefined;
  const record = await keyRecordAfterTurn(trx, keyRecordAsk({ ...scope, key: scope.key }));
  return record && responseOf(record, scope);
}

/**
 * The key's stored response, read after a fault stopped the work before it read it: another body
 * under the key is still idempotency_key_reused; a failure to read leaves the fault as the answer.
 */
async function readAfterFault(db: Db, scope: IdempotencyScope): Promise<StoredResponse | undefined> {
  try {
    return await writeTransaction(db, (trx) => storedResponse(trx, scope));
  } catch (error) {
    if (isAppError(error) && error.code === 'idempotency_key_reused') throw error;
    return undefined;
  }
}

const keyRecordAsk = (scope: IdempotencyScope & { key: string }): KeyRecordAsk => ({
  turn: idempotencyKeyTurn(scope.organisationId, scope.key),
  organisationId: scope.organisationId,
  key: scope.key,
  now: scope.now,
});

/** The response a record stored, for a request with the same fingerprint; another is refused. */
function responseOf(record: IdempotencyRecordsTable, scope: IdempotencyScope): StoredResponse {
  if (record.fingerprint !== scope.fingerprint) {
    throw new AppError(
      'idempotency_key_reused',
      'This Idempotency-Key was used in the last 24 hours for another request (another body or another endpoint); give this request a key of its own.',
      'Idempotency-Key',
    );
  }
  return { status: record.status_code, body: JSON.parse(record.response_body) };
}

/**
 * The key's record, read by the work in the statement that takes its location's turn, under the key's
 * turn taken just before it (see AfterTurn.keyRecord), where runIdempotently would otherwise read it
 * before the work: on PostgreSQL a round trip fewer for every booking with an Idempotency-Key. The
 * work must read it before it writes or answers anything.
 */
export class DeferredRecordRead {
  readonly ask: KeyRecordAsk;
  readonly #scope: IdempotencyScope;
  #settled = false;

  constructor(scope: IdempotencyScope & { key: string }) {
    this.#scope = scope;
    this.ask = keyRecordAsk(scope);
  }

  /** Whether the work's current run has read the record. */
  get settled(): boolean {
    return this.#settled;
  }

  /** A new run of the work, in a new transaction: the record is to be read again. */
  unsettle(): void {
    this.#settled = false;
  }

  /**
   * What the work read: with no record it goes on; a record ends it (the transaction rolled back,
   * nothing written) and its response is the answer, or idempotency_key_reused for another body.
   */
  settle(record: IdempotencyRecordsTable | undefined): void {
    this.#settled = true;
    if (record) throw new RecordFound(responseOf(record, this.#scope));
  }

  /** A write or answer before the record was read would not be once only: a fault in the work. */
  requireSettled(): void {
    if (!this.#settled) throw new UnreadRecord();
  }
}

/** A fault in the code, never a request's: answered as such, not with a record found after it. */
class UnreadRecord extends Error {
  constructor() {
    super('The work wrote or answered before it read its idempotency record.');
  }
}

/** Thrown through the work by DeferredRecordRead.settle: the key's response was stored already. */
class RecordFound extends Error {
  readonly response: StoredResponse;

  constructor(response: StoredResponse) {
    super('The idempotency key has a stored response.');
    this.response = response;
  }
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
  /** With runIdempotently's workReadsRecord and a key: the record, for the work to read. */
  deferredRead: DeferredRecordRead | undefined;
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
  await store(trx, { organisationId, key, fingerprint: ONCE_FINGERPRINT, now }, { status: 201, body });
}

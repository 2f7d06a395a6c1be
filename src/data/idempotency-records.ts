import { sql } from 'kysely';
import { type Db, dialectOf } from './database.ts';
import { preparedQuery } from './prepared-query.ts';
import type { IdempotencyRecordsTable } from './tables.ts';

/** An idempotency key's record to read once its turn (idempotencyKeyTurn) is granted. */
export interface KeyRecordAsk {
  /** The key's turn. */
  turn: string;
  organisationId: string;
  key: string;
  /** Records whose window ended by then are not read. */
  now: number;
}

/**
 * Takes the key's turn (as takeTurn would: held to the end of the transaction) and then reads the
 * organisation's live record of the key. On PostgreSQL in one statement: the function
 * idempotency_record_after_turn (migration 2026-11-29-0030) reads with a snapshot taken once the lock
 * is granted, so it sees the record the turn's previous holder committed, as a separate SELECT after
 * takeTurn would, for one round trip instead of two.
 */
export async function keyRecordAfterTurn(
  trx: Db,
  ask: KeyRecordAsk,
): Promise<IdempotencyRecordsTable | undefined> {
  // SQLite has one writer: its write transaction is every turn.
  if (dialectOf(trx) !== 'postgres') return liveRecord.first(trx, ask);
  const { rows } = await sql<IdempotencyRecordsTable>`${keyRecordAfterTurnStatement(ask)}`.execute(trx);
  return rows[0];
}

/** keyRecordAfterTurn's statement on PostgreSQL, for a statement that reads more after it. */
export const keyRecordAfterTurnStatement = (ask: KeyRecordAsk) =>
  sql<IdempotencyRecordsTable>`SELECT * FROM idempotency_record_after_turn(${ask.turn}, ${ask.organisationId}, ${ask.key}, ${ask.now}::bigint)`;

/** The key's record, unless its window has passed. */
export const liveRecord = preparedQuery<
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

/** What an idempotency record past its window has overwritten when its key is used again. */
export const RECORD_COLUMNS = [
  'fingerprint',
  'status_code',
  'response_body',
  'created_at',
  'expires_at',
] as const;

/**
 * Writes an idempotency record, over one past its window (the key is free again then). Every write
 * with a key stores one: built once (prepared-query.ts).
 */
/**
 * The fingerprint of a once-only record (a public booking form's key): whatever the form said, its key
 * made one thing, whose booking page token the record holds.
 */
export const ONCE_FINGERPRINT = 'once';

export async function upsertIdempotencyRecord(trx: Db, row: IdempotencyRecordsTable): Promise<void> {
  await upsertRecord.rows(trx, { ...row });
}

const upsertRecord = preparedQuery<IdempotencyRecordsTable & Record<string, unknown>, never>((db, param) => {
  const row = {
    organisation_id: param('organisation_id'),
    idempotency_key: param('idempotency_key'),
    fingerprint: param('fingerprint'),
    status_code: param('status_code'),
    response_body: param('response_body'),
    created_at: param('created_at'),
    expires_at: param('expires_at'),
  };
  return db
    .insertInto('idempotency_records')
    .values(row)
    .onConflict((oc) => oc.columns(['organisation_id', 'idempotency_key']).doUpdateSet(row));
});

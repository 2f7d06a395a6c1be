import { CompiledQuery } from 'kysely';
import type { OutboxKind, OutboxMessage, OutboxStatus } from '../domain/outbox.ts';
import { type Db, dialectOf } from './database.ts';
import type { OutboxTable } from './tables.ts';

/** The outbox: messages to customers, written with their change and claimed by the delivery worker. */

export function toOutboxMessage(row: OutboxTable): OutboxMessage {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    bookingId: row.booking_id,
    reference: row.reference,
    channel: row.channel,
    to: row.recipient,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    dueAt: row.due_at,
    lastError: row.last_error,
    body: row.body,
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}

/**
 * The columns a new message is written with, in the order the INSERT binds them: it is pending, never
 * claimed, nothing sent. The others (the claim and the outcome) start NULL.
 */
const NEW_MESSAGE_COLUMNS = [
  'id',
  'organisation_id',
  'booking_id',
  'reference',
  'channel',
  'recipient',
  'kind',
  'status',
  'attempts',
  'due_at',
  'created_at',
] as const satisfies readonly (keyof OutboxTable)[];

export type NewOutboxRow = Pick<OutboxTable, (typeof NEW_MESSAGE_COLUMNS)[number]>;

/** The INSERT's SQL by dialect and number of rows (a change writes 1, 2 or 4): see insertOutboxMessages. */
const insertStatements = new Map<string, string>();

/**
 * One INSERT for all of a change's messages: the booking's hot path pays one statement, not one each.
 * For a number of rows the statement is always the same, so Kysely builds and compiles it once per
 * dialect and each change binds its values to it: building a query tree of forty-odd values and
 * compiling it again for every booking took about a quarter of the INSERT's time (bench `outbox`,
 * docs/decisions.md).
 */
export async function insertOutboxMessages(trx: Db, rows: readonly NewOutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  const parameters = rows.flatMap((row) => NEW_MESSAGE_COLUMNS.map((column) => row[column]));
  const key = `${dialectOf(trx)} ${rows.length}`;
  let text = insertStatements.get(key);
  if (text === undefined) {
    const inOrder = rows.map((row) => Object.fromEntries(NEW_MESSAGE_COLUMNS.map((c) => [c, row[c]])));
    const compiled = trx
      .insertInto('outbox')
      .values(inOrder as NewOutboxRow[])
      .compile();
    // Binding our own values is right only if Kysely binds the same ones in the same order.
    if (
      compiled.parameters.length !== parameters.length ||
      compiled.parameters.some((value, i) => value !== parameters[i])
    ) {
      throw new Error('The outbox INSERT does not bind its values in NEW_MESSAGE_COLUMNS order.');
    }
    text = compiled.sql;
    insertStatements.set(key, text);
  }
  await trx.executeQuery(CompiledQuery.raw(text, parameters));
}

/** Forgets a booking's messages not delivered yet (all, or only these kinds): the change made them moot. */
export async function dropPendingMessages(
  trx: Db,
  organisationId: string,
  bookingId: string,
  kinds?: readonly OutboxKind[],
): Promise<void> {
  await trx
    .deleteFrom('outbox')
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'pending')
    .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds!))
    .execute();
}

/**
 * Claims up to `limit` pending messages that are due and not leased to a live worker: each gets
 * `token` and a lease until `leaseUntil`, and one more attempt counted (a message that kills its
 * worker every time still runs out of attempts). On PostgreSQL rows another instance is claiming
 * right now are skipped (FOR UPDATE SKIP LOCKED), so each message goes to one instance; SQLite has one
 * writer at a time. Run inside a write transaction.
 */
export async function claimDueMessages(
  trx: Db,
  token: string,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<OutboxTable[]> {
  const due = await trx
    .selectFrom('outbox')
    .select(['id', 'organisation_id'])
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .orderBy('due_at')
    .limit(limit)
    .$if(dialectOf(trx) === 'postgres', (q) => q.forUpdate().skipLocked())
    .execute();
  const claimed: OutboxTable[] = [];
  for (const { id, organisation_id } of due) {
    const row = await trx
      .updateTable('outbox')
      .set((eb) => ({ claimed_by: token, lease_until: leaseUntil, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('organisation_id', '=', organisation_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    claimed.push(row);
  }
  return claimed;
}

/**
 * Records what became of a claimed message, only while the claim is still `token`'s: a worker whose
 * lease ran out (and whose message another took over) changes nothing. True when it was recorded.
 */
export async function settleMessage(
  db: Db,
  message: { id: string; organisationId: string },
  token: string,
  outcome: Partial<
    Pick<OutboxTable, 'status' | 'due_at' | 'provider_id' | 'last_error' | 'body' | 'sent_at'>
  >,
): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ ...outcome, claimed_by: null, lease_until: null })
    .where('id', '=', message.id)
    .where('organisation_id', '=', message.organisationId)
    .where('claimed_by', '=', token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Deletes a claimed message that no longer makes sense (a link for a hold that lapsed meanwhile). */
export async function dropClaimedMessage(
  db: Db,
  message: { id: string; organisationId: string },
  token: string,
): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('id', '=', message.id)
    .where('organisation_id', '=', message.organisationId)
    .where('claimed_by', '=', token)
    .where('status', '=', 'pending')
    .execute();
}

/** The organisation's messages, oldest first, optionally of one status. */
export async function listOutboxOf(
  db: Db,
  organisationId: string,
  status?: OutboxStatus,
): Promise<OutboxMessage[]> {
  const rows = await db
    .selectFrom('outbox')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .$if(status !== undefined, (q) => q.where('status', '=', status!))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toOutboxMessage);
}

/** The organisation's newest `limit` messages, newest first, optionally of one status (the console's outbox). */
export async function recentOutboxOf(
  db: Db,
  organisationId: string,
  options: { status?: OutboxStatus | undefined; limit: number },
): Promise<OutboxMessage[]> {
  const rows = await db
    .selectFrom('outbox')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .$if(options.status !== undefined, (q) => q.where('status', '=', options.status!))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .execute();
  return rows.map(toOutboxMessage);
}

/** One booking's messages, sent or still to go, in the order they were written. */
export async function outboxOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<OutboxMessage[]> {
  const rows = await db
    .selectFrom('outbox')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .orderBy('created_at')
    .orderBy('due_at')
    .orderBy('id')
    .execute();
  return rows.map(toOutboxMessage);
}

/** How many messages are pending and due now (the operator's `outbox deliver` stops at none). */
export async function countDueMessages(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What a message says needs of its booking: its place, people, services, time and any link. */
export async function findMessageFacts(db: Db, organisationId: string, bookingId: string) {
  const row = await db
    .selectFrom('bookings as b')
    .innerJoin('organisations as o', 'o.id', 'b.organisation_id')
    .innerJoin('locations as l', (join) =>
      join.onRef('l.organisation_id', '=', 'b.organisation_id').onRef('l.id', '=', 'b.location_id'),
    )
    .innerJoin('staff as s', (join) =>
      join.onRef('s.organisation_id', '=', 'b.organisation_id').onRef('s.id', '=', 'b.staff_id'),
    )
    .innerJoin('clients as c', (join) =>
      join.onRef('c.organisation_id', '=', 'b.organisation_id').onRef('c.id', '=', 'b.client_id'),
    )
    .leftJoin('booking_pages as p', (join) =>
      join.onRef('p.organisation_id', '=', 'b.organisation_id').onRef('p.booking_id', '=', 'b.id'),
    )
    .select([
      'b.id',
      'b.reference',
      'p.token as page_token',
      'b.status',
      'b.starts_at',
      'b.hold_expires_at',
      'b.deposit_minor',
      'b.currency',
      'o.name as organisation_name',
      'o.locale',
      'l.name as location_name',
      'l.phone as location_phone',
      'l.timezone',
      's.name as staff_name',
      'c.first_name',
    ])
    .where('b.organisation_id', '=', organisationId)
    .where('b.id', '=', bookingId)
    .executeTakeFirst();
  if (!row) return undefined;
  const services = await db
    .selectFrom('booking_services as bs')
    .innerJoin('services as sv', (join) =>
      join.onRef('sv.organisation_id', '=', 'bs.organisation_id').onRef('sv.id', '=', 'bs.service_id'),
    )
    .select('sv.name')
    .where('bs.organisation_id', '=', organisationId)
    .where('bs.booking_id', '=', bookingId)
    .orderBy('bs.position')
    .execute();
  const session = await db
    .selectFrom('checkout_sessions')
    .select('id')
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', 'in', ['open', 'abandoned'])
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return { ...row, service_names: services.map((s) => s.name), checkout_session_id: session?.id ?? null };
}

import { type Selectable, sql } from 'kysely';
import type { OutboxKind, OutboxMessage, OutboxStatus } from '../domain/outbox.ts';
import { insertRows } from './compiled-insert.ts';
import { type Db, dialectOf } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import type { OutboxTable } from './tables.ts';
import { REDONE_IF_LOST, writeStatement, writeTransaction } from './write-transaction.ts';

/** The outbox: messages to customers, written with their change and claimed by the delivery worker. */

/**
 * `status = 'pending'` written into the SQL rather than bound: the worker's questions (what is due)
 * must match the partial index outbox_due in any plan, and PostgreSQL's generic plans (postgres.ts)
 * cannot use a partial index whose predicate a bound value would have to prove.
 */
const PENDING = sql.lit<OutboxStatus>('pending');

/** A message as read back (its seq given). */
export type OutboxRow = Selectable<OutboxTable>;

/** How the worker names a message it has claimed: its organisation and its seq. */
export interface ClaimedMessageKey {
  organisationId: string;
  seq: number;
}

export function toOutboxMessage(row: OutboxRow): OutboxMessage {
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
    // What was said, once it was; before that a verification code's body holds its secrets.
    body: row.status === 'sent' || row.status === 'logged' ? row.body : null,
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}

/**
 * The columns a new message is written with: it is pending, never claimed, nothing sent. The others
 * (the claim and the outcome) start NULL.
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

export type NewOutboxRow = Pick<OutboxTable, (typeof NEW_MESSAGE_COLUMNS)[number]> & {
  /**
   * What delivery needs to write the message besides its booking: a verification code's secrets, a
   * series note (domain/outbox.ts). Every row of one INSERT names it, or none does.
   */
  body?: string | null;
};

/**
 * One INSERT for all of a change's messages: the booking's hot path pays one statement, not one each,
 * built and compiled once for each number of rows (insertRows).
 */
export async function insertOutboxMessages(trx: Db, rows: readonly NewOutboxRow[]): Promise<void> {
  await insertRows(trx, 'outbox', rows);
}

/**
 * Forgets a booking's messages not delivered yet (all, or only these kinds): the change made them moot.
 * A message a worker is sending right now (its lease still runs) stays: it may reach the customer, and
 * then its record must say so. If that send fails, the retry finds it moot at delivery (stillDue, or a
 * newer message of its kind: supersededMessages).
 */
export async function dropPendingMessages(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
  kinds?: readonly OutboxKind[],
): Promise<void> {
  await trx
    .deleteFrom('outbox')
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .$if(kinds !== undefined, (q) => q.where('kind', 'in', kinds!))
    .execute();
}

/**
 * Of these claimed messages, those a newer message of the same kind, booking and channel (pending or
 * delivered) has replaced
 * (a reminder rewritten by a move while the old one was being sent, whose send then failed): sending
 * the old one again would say the same thing twice, at the wrong time.
 */
export async function supersededMessages(db: Db, messages: readonly { seq: number }[]): Promise<Set<number>> {
  if (messages.length === 0) return new Set();
  const rows = await db
    .selectFrom('outbox as o')
    .select('o.seq')
    // seq is unique across organisations: the key alone finds each message.
    .where(
      'o.seq',
      'in',
      messages.map((m) => m.seq),
    )
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('outbox as n')
          .select('n.seq')
          .whereRef('n.organisation_id', '=', 'o.organisation_id')
          .whereRef('n.booking_id', '=', 'o.booking_id')
          .whereRef('n.kind', '=', 'o.kind')
          .whereRef('n.channel', '=', 'o.channel')
          .whereRef('n.seq', '>', 'o.seq')
          // A newer one that failed for good said nothing: the older one is still to be sent.
          .where('n.status', '!=', 'failed'),
      ),
    )
    .execute();
  return new Set(rows.map((row) => row.seq));
}

/**
 * Claims up to `limit` pending messages that are due and not leased to a live worker: each gets
 * `token` and a lease until `leaseUntil`, and one more attempt counted (a message that kills its
 * worker every time still runs out of attempts). One statement (the claim is the UPDATE of the rows
 * its subquery picks), so it needs no transaction of its own on PostgreSQL (see writeStatement), where
 * rows another instance is claiming right now are skipped (FOR UPDATE SKIP LOCKED) and each message
 * goes to one instance; SQLite has one writer at a time. Oldest due first.
 */
export async function claimDueMessages(
  db: Db,
  token: string,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<OutboxRow[]> {
  const rows = await db
    .updateTable('outbox')
    .set((eb) => ({ claimed_by: token, lease_until: leaseUntil, attempts: eb('attempts', '+', 1) }))
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('outbox')
        .select('seq')
        .where('status', '=', PENDING)
        .where('due_at', '<=', now)
        .where((due) => due.or([due('lease_until', 'is', null), due('lease_until', '<=', now)]))
        .orderBy('due_at')
        .limit(literalLimit(limit))
        .$if(dialectOf(db) === 'postgres', (q) => q.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.due_at - b.due_at);
}

/** What became of a delivery attempt: the columns it sets. */
export type MessageOutcome = Partial<
  Pick<
    OutboxTable,
    'status' | 'due_at' | 'provider_id' | 'last_error' | 'body' | 'sent_at' | 'attempts' | 'recipient'
  >
>;

/**
 * Records what became of a claimed message, only while the claim is still `token`'s: a worker whose
 * lease ran out (and whose message another took over) changes nothing. True when it was recorded.
 */
export async function settleMessage(
  db: Db,
  message: ClaimedMessageKey,
  token: string,
  outcome: MessageOutcome,
): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ ...outcome, claimed_by: null, lease_until: null })
    .where('seq', '=', message.seq)
    .where('organisation_id', '=', message.organisationId)
    .where('claimed_by', '=', token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * settleMessage for several messages of one claim (`token`), each a write of its own. On PostgreSQL
 * the outcomes that set the same columns are one statement, without a transaction (writeStatement):
 * an UPDATE of each message by its key, each with its own values. On SQLite, one UPDATE each, in one
 * write transaction (group commit would join them anyway).
 */
export async function settleMessages(
  db: Db,
  token: string,
  settled: readonly { message: ClaimedMessageKey; outcome: MessageOutcome }[],
): Promise<void> {
  if (dialectOf(db) === 'sqlite') {
    await writeTransaction(
      db,
      async (trx) => {
        for (const { message, outcome } of settled) await settleMessage(trx, message, token, outcome);
      },
      REDONE_IF_LOST,
    );
    return;
  }
  const alike = new Map<string, Record<string, unknown>[]>();
  for (const { message, outcome } of settled) {
    const columns = Object.keys(outcome).sort().join(',');
    const rows = alike.get(columns) ?? [];
    rows.push({ ...outcome, seq: message.seq });
    alike.set(columns, rows);
  }
  // One UPDATE per message as the CTEs of one statement: one round trip, and each message found by
  // its seq alone (unique across organisations, the first column of outbox_pk), the one index any
  // plan can use for it whatever the tables' sizes when the connection first ran it. The statement's
  // generic plan (postgres.ts) is made once per connection and kept: a join of the outbox with the
  // rows' list (json_populate_recordset), planned while the outbox was small, scanned the whole
  // outbox on every batch, and with the organisation as a condition too a plan may take outbox_booking
  // and read every message of the organisation (issue 47). The claim's token is what makes the message
  // this worker's. The texts are one per set of columns and number of messages (a batch's size).
  await Promise.all(
    [...alike].map(([columns, rows]) => {
      const set = columns.split(',').filter((column) => column !== '');
      const updates = rows.map(
        (row, index) => sql`${sql.raw(`m${index}`)} AS (UPDATE outbox SET ${sql.join(
          set.map((column) => sql`${sql.ref(column)} = ${row[column] ?? null}`),
        )}${set.length === 0 ? sql`` : sql`,`} claimed_by = NULL, lease_until = NULL
          WHERE seq = ${row.seq}::bigint AND claimed_by = ${token}::text)`,
      );
      return writeStatement(db, (trx) => sql`WITH ${sql.join(updates)} SELECT 1`.execute(trx));
    }),
  );
}

/** Deletes a claimed message that no longer makes sense (a link for a hold that lapsed meanwhile). */
export async function dropClaimedMessage(db: Db, message: ClaimedMessageKey, token: string): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where('seq', '=', message.seq)
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
    .orderBy('seq')
    .execute();
  return rows.map(toOutboxMessage);
}

/** The organisation's latest `limit` messages, the last written first, optionally of one status (the console's outbox). */
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
    // By seq alone, the order they were written in: the key read backwards stops at the limit, where
    // created_at would sort all of the organisation's messages first.
    .orderBy('seq', 'desc')
    .limit(literalLimit(options.limit))
    .execute();
  return rows.map(toOutboxMessage);
}

/** The zone of each message's booking's location (its times are said in it), by booking id. */
export async function zonesOfOutboxBookings(
  db: Db,
  organisationId: string,
  bookingIds: readonly string[],
): Promise<Map<string, string>> {
  if (bookingIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('bookings')
    .innerJoin('locations', 'locations.id', 'bookings.location_id')
    .select(['bookings.id as id', 'locations.timezone as timezone'])
    .where('bookings.organisation_id', '=', organisationId)
    .where('bookings.id', 'in', [...new Set(bookingIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.timezone]));
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
    .orderBy('seq')
    .execute();
  return rows.map(toOutboxMessage);
}

/** How many messages are pending and due now (the operator's `outbox deliver` stops at none). */
export async function countDueMessages(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('status', '=', PENDING)
    .where('due_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A booking whose messages are to be written: the organisation and the booking's id. */
export interface BookingKey {
  organisationId: string;
  bookingId: string;
}

/** What a message says needs of its booking: its place, people, services, time and any link. */
export type MessageFactsRow = Awaited<ReturnType<typeof bookingFactRows>>[number] & {
  service_names: string[];
  checkout_session_id: string | null;
};

/**
 * What the messages of these bookings need to say, by booking id (a booking no longer there is
 * missing): one query for the bookings, one for their services, and one for open checkouts when a
 * payment link is among them (`withCheckouts`), however many bookings there are. The delivery worker
 * asks once for each batch it claims.
 */
export async function messageFactsOf(
  db: Db,
  bookings: readonly BookingKey[],
  options: { withCheckouts: boolean },
): Promise<Map<string, MessageFactsRow>> {
  const facts = new Map<string, MessageFactsRow>();
  if (bookings.length === 0) return facts;
  if (dialectOf(db) === 'postgres') {
    const [rows, sessions] = await Promise.all([
      postgresFactRows(db, bookings),
      options.withCheckouts ? openCheckoutsOf(db, bookings) : [],
    ]);
    for (const row of rows) facts.set(row.id, { ...row, checkout_session_id: null });
    addCheckouts(facts, sessions);
    return facts;
  }
  const [rows, services, sessions] = await Promise.all([
    bookingFactRows(db, bookings),
    db
      .selectFrom('booking_services as bs')
      .innerJoin('services as sv', (join) =>
        join.onRef('sv.organisation_id', '=', 'bs.organisation_id').onRef('sv.id', '=', 'bs.service_id'),
      )
      .select(['bs.booking_id', 'sv.name'])
      .where((eb) =>
        eb(
          eb.refTuple('bs.organisation_id', 'bs.booking_id'),
          'in',
          bookings.map((b) => eb.tuple(b.organisationId, b.bookingId)),
        ),
      )
      .orderBy('bs.booking_id')
      .orderBy('bs.position')
      .execute(),
    options.withCheckouts ? openCheckoutsOf(db, bookings) : [],
  ]);
  for (const row of rows) facts.set(row.id, { ...row, service_names: [], checkout_session_id: null });
  for (const service of services) facts.get(service.booking_id)?.service_names.push(service.name);
  addCheckouts(facts, sessions);
  return facts;
}

function openCheckoutsOf(db: Db, bookings: readonly BookingKey[]) {
  return db
    .selectFrom('checkout_sessions')
    .select(['booking_id', 'id'])
    .where((eb) =>
      eb(
        eb.refTuple('organisation_id', 'booking_id'),
        'in',
        bookings.map((b) => eb.tuple(b.organisationId, b.bookingId)),
      ),
    )
    .where('status', 'in', ['open', 'abandoned'])
    .orderBy('created_at', 'desc')
    .execute();
}

/** Newest first: the first seen of a booking is its latest open checkout. */
function addCheckouts(
  facts: Map<string, MessageFactsRow>,
  sessions: readonly { booking_id: string; id: string }[],
): void {
  for (const session of sessions) {
    const fact = facts.get(session.booking_id);
    if (fact && fact.checkout_session_id === null) fact.checkout_session_id = session.id;
  }
}

/**
 * bookingFactRows and the bookings' service names (in booking order) on PostgreSQL, in one statement
 * of one text whatever the batch's size: the keys travel as two arrays. Each table is reached from the
 * row before it by the first column of its primary key alone (`id`, `booking_id`), in a LATERAL
 * subquery that OFFSET 0 keeps whole (run once per row, nothing pushed into it), and the organisation
 * is checked on what it returns. No plan can then read a whole table or a whole organisation's rows:
 * the statement's generic plan is made once per connection (postgres.ts) and kept, and plans made on
 * a database still small when the connection first asked chose otherwise: the row-value IN list of
 * bookingFactRows scanned every booking and booking_services row on every batch, and with the
 * organisation as an index condition a lookup may take an index that starts with it
 * (bookings_org_reference) and read every booking of the organisation (issue 47).
 */
async function postgresFactRows(
  db: Db,
  bookings: readonly BookingKey[],
): Promise<Omit<MessageFactsRow, 'checkout_session_id'>[]> {
  const keys = new Map(bookings.map((b) => [`${b.organisationId}\u0000${b.bookingId}`, b]));
  const organisations = [...keys.values()].map((b) => b.organisationId);
  const ids = [...keys.values()].map((b) => b.bookingId);
  const { rows } = await sql<Omit<MessageFactsRow, 'checkout_session_id'>>`
    SELECT b.id, b.reference, p.token AS page_token, b.status, b.starts_at, b.ends_at, b.hold_expires_at,
      b.pending_requirements, b.deposit_minor, b.deposit_status, b.currency,
      (SELECT f.charge_amount_minor FROM booking_fees f
        WHERE f.booking_id = b.id AND f.kind = 'late_cancellation' AND f.organisation_id = b.organisation_id
          AND f.status IS DISTINCT FROM 'waived'
        LIMIT 1) AS late_fee_minor,
      o.name AS organisation_name, o.locale, l.name AS location_name, l.phone AS location_phone, l.timezone,
      l.reminder_hours_before, l.cancellation_window_hours, l.late_cancellation, l.late_reschedule,
      s.name AS staff_name, c.first_name, c.contact_proven, c.phone AS client_phone,
      c.email AS client_email, o.catalogue_version,
      ARRAY(SELECT sv.name FROM booking_services bs
          CROSS JOIN LATERAL (SELECT sv.name, sv.organisation_id FROM services sv
            WHERE sv.id = bs.service_id OFFSET 0) sv
        WHERE bs.booking_id = b.id AND bs.organisation_id = b.organisation_id
          AND sv.organisation_id = bs.organisation_id
        ORDER BY bs.position) AS service_names
    FROM unnest(${organisations}::text[], ${ids}::text[]) AS k(organisation_id, id)
    CROSS JOIN LATERAL (SELECT * FROM bookings b WHERE b.id = k.id OFFSET 0) b
    CROSS JOIN LATERAL (SELECT * FROM organisations o WHERE o.id = b.organisation_id OFFSET 0) o
    CROSS JOIN LATERAL (SELECT * FROM locations l WHERE l.id = b.location_id OFFSET 0) l
    CROSS JOIN LATERAL (SELECT * FROM staff s WHERE s.id = b.staff_id OFFSET 0) s
    CROSS JOIN LATERAL (SELECT * FROM clients c WHERE c.id = b.client_id OFFSET 0) c
    LEFT JOIN LATERAL (SELECT p.token FROM booking_pages p
      WHERE p.booking_id = b.id AND p.organisation_id = b.organisation_id LIMIT 1) p ON true
    WHERE b.organisation_id = k.organisation_id AND l.organisation_id = b.organisation_id
      AND s.organisation_id = b.organisation_id AND c.organisation_id = b.organisation_id`.execute(db);
  return rows;
}

function bookingFactRows(db: Db, bookings: readonly BookingKey[]) {
  return db
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
      'b.ends_at',
      'b.hold_expires_at',
      'b.pending_requirements',
      'b.deposit_minor',
      'b.deposit_status',
      'b.currency',
      // A cancellation's late fee, as charged to the saved card (after any deposit credit); not one the
      // salon waived before the message went.
      (eb) =>
        eb
          .selectFrom('booking_fees as f')
          .select('f.charge_amount_minor')
          .whereRef('f.organisation_id', '=', 'b.organisation_id')
          .whereRef('f.booking_id', '=', 'b.id')
          .where('f.kind', '=', 'late_cancellation')
          .where((w) => w.or([w('f.status', 'is', null), w('f.status', '!=', 'waived')]))
          .limit(1)
          .as('late_fee_minor'),
      'o.name as organisation_name',
      'o.locale',
      'l.name as location_name',
      'l.phone as location_phone',
      'l.timezone',
      'l.reminder_hours_before',
      'l.cancellation_window_hours',
      'l.late_cancellation',
      'l.late_reschedule',
      's.name as staff_name',
      'c.first_name',
      'c.contact_proven',
      // Where the client is reached now: a message goes there, not where it was when written.
      'c.phone as client_phone',
      'c.email as client_email',
      'o.catalogue_version',
    ])
    .where((eb) =>
      eb(
        eb.refTuple('b.organisation_id', 'b.id'),
        'in',
        bookings.map((b) => eb.tuple(b.organisationId, b.bookingId)),
      ),
    )
    .execute();
}

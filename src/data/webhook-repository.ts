import { CompiledQuery, type Selectable, sql } from 'kysely';
import { type Db, dialectOf } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { rowsToRead } from './page-query.ts';
import { THEN_COMMIT } from './postgres-transaction-edges.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './tables.ts';

/**
 * Webhook endpoints, events and deliveries (design.md 9.2; migration 0024). Every function is
 * organisation-scoped except the worker's claim, which takes what is due wherever it is.
 */

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** `status = 'pending'` in the SQL itself: the worker's questions must match the partial indexes. */
const PENDING = sql.lit<WebhookDeliveriesTable['status']>('pending');

export async function insertEndpoint(db: Db, row: WebhookEndpointsTable): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

/** The organisation's endpoints, the newest first. */
export function endpointsOf(db: Db, organisationId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function findEndpoint(
  db: Db,
  organisationId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Deletes an endpoint and its deliveries (the foreign key cascades); false when there was none. */
export async function deleteEndpoint(db: Db, organisationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The enabled endpoints of the organisation and the events each wants (what decides whether to write). */
export function enabledEndpointsOf(
  db: Db,
  organisationId: string,
): Promise<{ id: string; events: string }[]> {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'events'])
    .where('organisation_id', '=', organisationId)
    .where('status', '=', 'enabled')
    .execute();
}

/**
 * Writes an event and one pending delivery of it to each of `endpointIds` still enabled when the
 * transaction looks (an endpoint deleted or disabled meanwhile gets none, and never fails the change).
 * Callers name at least one endpoint (none: nothing is written).
 *
 * It runs in the transaction of every booking made for an organisation that listens, so its SQL is
 * written out once per dialect and number of endpoints and only bound: built with the query builder
 * on every call it took about twice the CPU time (bench `webhooks-booking-cost`). On
 * PostgreSQL it is one statement, one round trip: the event is a data-modifying CTE whose RETURNING
 * gives the deliveries their event_seq. On SQLite (whose WITH takes no INSERT, and where there are no
 * round trips) the event's INSERT, then the deliveries'. `lastStatement`: nothing follows in the
 * transaction, whose COMMIT then goes with it on PostgreSQL (postgres-transaction-edges.ts).
 */
export async function insertEvent(
  trx: Db,
  event: {
    organisationId: string;
    id: string;
    type: string;
    orderingKey: string;
    payload: string;
    at: number;
  },
  endpointIds: readonly string[],
  options: { lastStatement?: boolean | undefined } = {},
): Promise<void> {
  if (endpointIds.length === 0) return;
  const dialect = dialectOf(trx);
  const text = eventStatements(dialect, endpointIds.length);
  const { organisationId, id, type, orderingKey, payload, at } = event;
  if (dialect === 'postgres') {
    await trx.executeQuery(
      CompiledQuery.raw(`${text.event}${options.lastStatement ? THEN_COMMIT : ''}`, [
        organisationId,
        id,
        type,
        payload,
        at,
        orderingKey,
        ...endpointIds,
      ]),
    );
    return;
  }
  // seq is the table's INTEGER PRIMARY KEY, its rowid: the driver's insertId, without a RETURNING.
  const { insertId: seq } = await trx.executeQuery(
    CompiledQuery.raw(text.event, [organisationId, id, type, payload, at]),
  );
  if (seq === undefined) throw new Error('The webhook event was not written.');
  await trx.executeQuery(
    CompiledQuery.raw(text.deliveries, [
      Number(seq),
      id,
      type,
      orderingKey,
      at,
      at,
      organisationId,
      ...endpointIds,
    ]),
  );
}

const EVENT_COLUMNS = '"organisation_id", "id", "type", "payload", "created_at"';
const DELIVERY_COLUMNS =
  '"organisation_id", "endpoint_id", "event_seq", "event_id", "event_type", "ordering_key", "status", "attempts", "next_attempt_at", "created_at"';

/** insertEvent's SQL by dialect and number of endpoints (at most MAX_ENDPOINTS: a handful of texts). */
const eventSql = new Map<string, { event: string; deliveries: string }>();

function eventStatements(dialect: 'sqlite' | 'postgres', endpoints: number) {
  const key = `${dialect} ${endpoints}`;
  let text = eventSql.get(key);
  if (text) return text;
  if (dialect === 'postgres') {
    const ids = Array.from({ length: endpoints }, (_, i) => `$${i + 7}`).join(', ');
    text = {
      event: `WITH "event" AS (
  INSERT INTO "webhook_events" (${EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5) RETURNING "seq"
)
INSERT INTO "webhook_deliveries" (${DELIVERY_COLUMNS})
SELECT "e"."organisation_id", "e"."id", "event"."seq", $2, $3, $6, 'pending', 0, $5, $5
FROM "webhook_endpoints" AS "e" CROSS JOIN "event"
WHERE "e"."organisation_id" = $1 AND "e"."id" IN (${ids}) AND "e"."status" = 'enabled'`,
      deliveries: '',
    };
  } else {
    const ids = Array.from({ length: endpoints }, () => '?').join(', ');
    text = {
      event: `INSERT INTO "webhook_events" (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`,
      deliveries: `INSERT INTO "webhook_deliveries" (${DELIVERY_COLUMNS})
SELECT "organisation_id", "id", ?, ?, ?, ?, 'pending', 0, ?, ?
FROM "webhook_endpoints"
WHERE "organisation_id" = ? AND "id" IN (${ids}) AND "status" = 'enabled'`,
    };
  }
  eventSql.set(key, text);
  return text;
}

/** A claimed delivery with what sending it needs: its event's body and its endpoint's address and key. */
export type ClaimedDelivery = WebhookDeliveryRow & {
  payload: string;
  url: string;
  secret: string;
  endpoint_status: WebhookEndpointsTable['status'];
  endpoint_disabled_reason: string | null;
  event_created_at: number;
};

/**
 * The deliveries a worker may claim now: pending, due, not leased, and each the earliest still pending
 * of its booking (ordering key) and endpoint. A delivery waiting behind a failing earlier one of its
 * booking is due but not claimable: it goes when that one is settled.
 */
function claimableDeliveries(db: Db, now: number) {
  return db
    .selectFrom('webhook_deliveries as d')
    .where('d.status', '=', PENDING)
    .where('d.next_attempt_at', '<=', now)
    .where((due) => due.or([due('d.lease_until', 'is', null), due('d.lease_until', '<=', now)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as e')
            .select('e.seq')
            .where('e.status', '=', PENDING)
            .whereRef('e.endpoint_id', '=', 'd.endpoint_id')
            .whereRef('e.ordering_key', '=', 'd.ordering_key')
            .whereRef('e.seq', '<', 'd.seq'),
        ),
      ),
    );
}

/**
 * Up to `limit` claimable deliveries (claimableDeliveries), earliest due first, leaving out those to the
 * endpoints `skipping` names (those holding their share, by whether they are failing now), each saying whether
 * its endpoint is failing (failing_since set): a read, asked before the claim so that a worker that
 * finds nothing to do takes no write lock (on SQLite the claim is a write transaction, every 200 ms),
 * and so that the worker can choose what to claim (no endpoint holding all its attempts, nor failing
 * ones all the places). A delivery due but waiting behind a failing one of its booking is not among
 * them: the worker would claim nothing, on every pass until that one's retry (hours, later on).
 */
export async function claimableCandidates(
  db: Db,
  now: number,
  limit: number,
  skipping: {
    /** Endpoints left out whatever their state. */
    always: readonly string[];
    /** Endpoints left out if failing now. */
    ifFailing: readonly string[];
    /** Every endpoint failing now left out. */
    allFailing: boolean;
  },
): Promise<{ seq: number; endpoint_id: string; failing: boolean }[]> {
  const { always, ifFailing, allFailing } = skipping;
  const rows = await claimableDeliveries(db, now)
    .innerJoin('webhook_endpoints as w', (join) =>
      join.onRef('w.organisation_id', '=', 'd.organisation_id').onRef('w.id', '=', 'd.endpoint_id'),
    )
    .select(['d.seq', 'd.endpoint_id', 'w.failing_since'])
    .$if(always.length > 0, (q) => q.where('d.endpoint_id', 'not in', always))
    .$if(allFailing, (q) => q.where('w.failing_since', 'is', null))
    .$if(!allFailing && ifFailing.length > 0, (q) =>
      q.where((eb) => eb.or([eb('w.failing_since', 'is', null), eb('d.endpoint_id', 'not in', ifFailing)])),
    )
    .orderBy('d.next_attempt_at')
    .orderBy('d.seq')
    .limit(literalLimit(limit))
    .execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    endpoint_id: row.endpoint_id,
    failing: row.failing_since !== null,
  }));
}

/**
 * Claims those of `seqs` still claimable (claimableDeliveries: another worker may have taken one since
 * they were read), so one booking's events reach an endpoint in the order they were written: a claimed
 * delivery stays pending until settled, which keeps the later ones back. One statement; on PostgreSQL
 * rows another instance is claiming are skipped (FOR UPDATE SKIP LOCKED), so each attempt is made by one
 * worker. The claim counts the attempt.
 */
export async function claimDueDeliveries(
  db: Db,
  token: string,
  now: number,
  leaseUntil: number,
  seqs: readonly number[],
): Promise<ClaimedDelivery[]> {
  if (seqs.length === 0) return [];
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      claimed_by: token,
      lease_until: leaseUntil,
      attempts: eb('attempts', '+', 1),
      // The log shows the attempt under way as made now, with nothing yet of how it went (not the
      // answer or error of the one before it).
      last_attempt_at: now,
      response_code: null,
      last_error: null,
    }))
    .where('seq', 'in', () =>
      claimableDeliveries(db, now)
        .select('d.seq')
        .where('d.seq', 'in', seqs)
        .$if(dialectOf(db) === 'postgres', (q) => q.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute();
  if (claimed.length === 0) return [];
  const [events, endpoints] = await Promise.all([
    db
      .selectFrom('webhook_events')
      .select(['seq', 'payload', 'created_at'])
      .where('seq', 'in', [...new Set(claimed.map((d) => d.event_seq))])
      .execute(),
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'organisation_id', 'url', 'secret', 'status', 'disabled_reason'])
      .where('id', 'in', [...new Set(claimed.map((d) => d.endpoint_id))])
      .execute(),
  ]);
  const eventOf = new Map(events.map((e) => [Number(e.seq), e]));
  const endpointOf = new Map(endpoints.map((e) => [`${e.organisation_id}|${e.id}`, e]));
  const ready: ClaimedDelivery[] = [];
  for (const delivery of claimed) {
    const event = eventOf.get(Number(delivery.event_seq));
    const endpoint = endpointOf.get(`${delivery.organisation_id}|${delivery.endpoint_id}`);
    // The endpoint deleted since the claim took its deliveries with it.
    if (!event || !endpoint) continue;
    ready.push({
      ...delivery,
      payload: event.payload,
      url: endpoint.url,
      secret: endpoint.secret,
      endpoint_status: endpoint.status,
      endpoint_disabled_reason: endpoint.disabled_reason,
      event_created_at: event.created_at,
    });
  }
  return ready.sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.seq - b.seq);
}

/** What became of an attempt: the columns it sets. */
export type DeliveryOutcome = Partial<
  Pick<WebhookDeliveriesTable, 'status' | 'next_attempt_at' | 'response_code' | 'last_error' | 'delivered_at'>
>;

/** Records an attempt's outcome while the claim is still `token`'s; true when it was recorded. */
export async function settleDelivery(
  db: Db,
  delivery: { organisationId: string; seq: number },
  token: string,
  outcome: DeliveryOutcome,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ ...outcome, claimed_by: null, lease_until: null })
    .where('seq', '=', delivery.seq)
    .where('organisation_id', '=', delivery.organisationId)
    .where('claimed_by', '=', token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** An endpoint answered 2xx: it is failing no longer (written only when it was). */
export async function clearFailing(db: Db, organisationId: string, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute();
}

/**
 * An endpoint failed at `now`: failing since then, unless it was already or it is disabled; the time
 * it has been failing since, or that it is disabled (with why), or undefined when it is gone. The row
 * is read locked on PostgreSQL: a disabling committing meanwhile (another delivery's 410) is waited
 * for and seen, since it leaves this claimed delivery for its worker to fail.
 */
export async function markFailing(
  db: Db,
  organisationId: string,
  endpointId: string,
  now: number,
): Promise<{ failingSince: number | null; disabledReason: string | null; disabled: boolean } | undefined> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .where('failing_since', 'is', null)
    .execute();
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(['failing_since', 'status', 'disabled_reason'])
    .where('organisation_id', '=', organisationId)
    .where('id', '=', endpointId)
    .$if(dialectOf(db) === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  return (
    row && {
      failingSince: row.failing_since,
      disabledReason: row.disabled_reason,
      disabled: row.status !== 'enabled',
    }
  );
}

/**
 * Disables an endpoint (it answered 410, or failed for 3 days) and fails what it still had to
 * receive. A delivery claimed right now is left to its worker, which finds the endpoint disabled at
 * its next claim (ClaimedDelivery.endpoint_status) and fails it then.
 */
export async function disableEndpoint(
  db: Db,
  organisationId: string,
  endpointId: string,
  reason: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .execute();
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'failed',
      last_error: `endpoint disabled (${reason})`,
      claimed_by: null,
      lease_until: null,
    })
    .where('organisation_id', '=', organisationId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', PENDING)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .execute();
}

/**
 * An endpoint's deliveries, the latest first, after `beforeSeq` (the cursor): more than `limit` when more
 * follow (rowsToRead, one statement for every page size); the caller keeps `limit` of them.
 */
export function deliveriesOf(
  db: Db,
  organisationId: string,
  endpointId: string,
  options: { beforeSeq: number | null; limit: number },
): Promise<WebhookDeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('endpoint_id', '=', endpointId)
    .$if(options.beforeSeq !== null, (q) => q.where('seq', '<', options.beforeSeq!))
    .orderBy('seq', 'desc')
    .limit(literalLimit(rowsToRead(options.limit)))
    .execute();
}

/**
 * The pending deliveries of an endpoint for these ordering keys (bookings), with when each is tried
 * next: what a delivery of the same booking waits behind (claimableDeliveries).
 */
export function pendingOfKeys(
  db: Db,
  organisationId: string,
  endpointId: string,
  orderingKeys: readonly string[],
): Promise<{ ordering_key: string; seq: number; next_attempt_at: number }[]> {
  if (orderingKeys.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('webhook_deliveries')
    .select(['ordering_key', 'seq', 'next_attempt_at'])
    .where('organisation_id', '=', organisationId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', PENDING)
    .where('ordering_key', 'in', [...new Set(orderingKeys)])
    .execute();
}

/** How many deliveries are pending and due now (deliverAllDueWebhooks stops at none). */
export async function countDueDeliveries(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('status', '=', PENDING)
    .where('next_attempt_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Forgets deliveries that ended (succeeded or failed) before `before`, at most `limit` of them, and
 * events left with no delivery; how many deliveries went. In batches, so that one call never holds
 * the write lock for long.
 */
export async function pruneWebhookHistory(db: Db, before: number, limit: number): Promise<number> {
  const ended = await db
    .deleteFrom('webhook_deliveries')
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('seq')
        .where('status', '!=', PENDING)
        .where('created_at', '<', before)
        .orderBy('seq')
        .limit(literalLimit(limit)),
    )
    .executeTakeFirst();
  await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as d')
            .select('d.seq')
            .whereRef('d.event_seq', '=', 'webhook_events.seq'),
        ),
      ),
    )
    .execute();
  return Number(ended.numDeletedRows);
}

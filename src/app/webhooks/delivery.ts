import { randomUUID } from 'node:crypto';
import type { Db } from '../../data/database.ts';
import {
  type ClaimedDelivery,
  claimableCandidates,
  claimDueDeliveries,
  clearFailing,
  countDueDeliveries,
  type DeliveryOutcome,
  disableEndpoint,
  markFailing,
  pruneWebhookHistory,
  settleDelivery,
} from '../../data/webhook-repository.ts';
import { REDONE_IF_LOST, writeStatement, writeTransaction } from '../../data/write-transaction.ts';
import {
  DELIVERY_TIMEOUT_MS,
  failedTooLong,
  firstTryBy,
  GONE,
  isSuccess,
  nextAttemptAt,
  RETRY_UNIT_MS,
} from '../../domain/webhooks.ts';
import type { Clock } from '../clock.ts';
import { allEnded, startPeriodicWork } from '../periodic-work.ts';
import type { AttemptResult, WebhookSender } from './sender.ts';
import { signatureHeader } from './signature.ts';

/**
 * Delivering webhook events: at least once, in order per booking and endpoint, each attempt made by
 * one worker however many processes share the database.
 *
 * A worker claims due deliveries in one statement (a lease, the attempt counted: claimDueDeliveries),
 * POSTs each outside any transaction, and records the outcome only while its claim holds. A worker
 * killed mid-send leaves its claims to lapse; another (or this one restarted) sends again after the
 * lease with the same event id, which the receiver deduplicates on. The lease outlasts the 20 s a
 * batch's attempt may take (10 s, after waiting at most another 10 s for a connection: sender.ts), so a
 * live worker's claim never lapses under it.
 *
 * 2xx: succeeded. 410 Gone: the endpoint is disabled at once. Anything else (or no answer in 10 s):
 * tried again on the schedule of domain/webhooks.ts until 72 hours after the event, and an endpoint
 * that has failed every attempt for 3 days is disabled.
 */
export interface WebhookDelivery {
  db: Db;
  clock: Clock;
  sender: WebhookSender;
  /** The schedule's minute (WEBHOOK_RETRY_UNIT_MS); tests shorten it. */
  unitMs?: number;
  leaseMs?: number;
  batchSize?: number;
  /** Told of each failed attempt, with nothing of the event's data (for the log). */
  onAttemptFailed?: (event: {
    endpointId: string;
    eventId: string;
    attempt: number;
    reason: string;
    final: boolean;
  }) => void;
}

export interface WebhookCounts {
  succeeded: number;
  retried: number;
  failed: number;
}

const DEFAULT_BATCH = 64;
/** Attempts out at once to an endpoint failing now: enough to see it answer again. */
const FAILING_ENDPOINT_SHARE = 2;
const DEFAULT_LEASE_MS = DELIVERY_TIMEOUT_MS * 3;
/** How long a worker waiting for room gathers the places freeing before it claims again. */
const GATHER_MS = 10;

/** Deliveries claimed together, under one token, each with whether its endpoint was failing. */
interface Claim {
  token: string;
  rows: { row: ClaimedDelivery; failing: boolean }[];
  /** Due deliveries were left unclaimed: no room for them, or their endpoint at its share. */
  more: boolean;
}

/** How many attempts may be out to one endpoint, and to the failing ones (failing_since set). */
interface Shares {
  perEndpoint: number;
  perFailingEndpoint: number;
  /** To all failing endpoints together. */
  failing: number;
}

/** Attempts a worker has out: endpoint id → how many, and whether that endpoint was failing. */
type AttemptsOut = ReadonlyMap<string, { attempts: number; failing: boolean }>;

/**
 * Claims up to `room` due deliveries, earliest due first, within the shares (`shares`) counting the
 * attempts already out (`out`).
 */
async function claimDue(
  delivery: WebhookDelivery,
  room: number,
  out: AttemptsOut,
  shares: Shares,
): Promise<Claim> {
  const token = randomUUID();
  const now = delivery.clock.nowMs();
  const shareOf = (failing: boolean) => (failing ? shares.perFailingEndpoint : shares.perEndpoint);
  const counted = new Map([...out].map(([id, o]) => [id, o.attempts]));
  let failingOut = [...out.values()].reduce((n, o) => n + (o.failing ? o.attempts : 0), 0);
  // Read exactly what the loop below may take, whether each endpoint is failing now or not (a flag
  // kept from an earlier claim may be stale), so that no share held fills the read's window.
  const holding = (share: number) => [...out].filter(([, o]) => o.attempts >= share).map(([id]) => id);
  const candidates = await claimableCandidates(delivery.db, now, room * 2, {
    always: holding(shares.perEndpoint),
    ifFailing: holding(shares.perFailingEndpoint),
    allFailing: failingOut >= shares.failing,
  });
  const seqs: number[] = [];
  for (const candidate of candidates) {
    if (seqs.length === room) break;
    const attempts = counted.get(candidate.endpoint_id) ?? 0;
    if (attempts >= shareOf(candidate.failing)) continue;
    if (candidate.failing && failingOut >= shares.failing) continue;
    counted.set(candidate.endpoint_id, attempts + 1);
    if (candidate.failing) failingOut++;
    seqs.push(candidate.seq);
  }
  const more = candidates.length > seqs.length;
  if (seqs.length === 0) return { token, rows: [], more };
  const failing = new Set(candidates.filter((c) => c.failing).map((c) => c.endpoint_id));
  const leaseUntil = now + (delivery.leaseMs ?? DEFAULT_LEASE_MS);
  const rows = await writeStatement(
    delivery.db,
    (trx) => claimDueDeliveries(trx, token, now, leaseUntil, seqs),
    REDONE_IF_LOST,
  );
  return { token, rows: rows.map((row) => ({ row, failing: failing.has(row.endpoint_id) })), more };
}

/** Claims one batch of due deliveries and sends them, concurrently; what became of them. */
export async function deliverDueWebhooks(delivery: WebhookDelivery): Promise<WebhookCounts> {
  const counts: WebhookCounts = { succeeded: 0, retried: 0, failed: 0 };
  const batch = delivery.batchSize ?? DEFAULT_BATCH;
  const claim = await claimDue(delivery, batch, new Map(), {
    perEndpoint: batch,
    perFailingEndpoint: batch,
    failing: batch,
  });
  await allEnded(
    claim.rows.map(async ({ row }) => {
      counts[await deliverOne(delivery, row, claim.token)]++;
    }),
  );
  return counts;
}

async function deliverOne(
  delivery: WebhookDelivery,
  row: ClaimedDelivery,
  token: string,
): Promise<keyof WebhookCounts> {
  const { db, clock } = delivery;
  const key = { organisationId: row.organisation_id, seq: row.seq };
  if (row.endpoint_status !== 'enabled') {
    await writeStatement(
      db,
      (trx) =>
        settleDelivery(trx, key, token, {
          status: 'failed',
          last_error: disabledError(row.endpoint_disabled_reason),
        }),
      REDONE_IF_LOST,
    );
    return 'failed';
  }
  const result = await delivery.sender.post(row.url, headersOf(row, clock.nowMs()), row.payload);
  const at = clock.nowMs();
  const status = 'status' in result ? result.status : null;
  if (status !== null && isSuccess(status)) {
    await writeTransaction(
      db,
      async (trx) => {
        if (await settleDelivery(trx, key, token, succeeded(status, at))) {
          await clearFailing(trx, row.organisation_id, row.endpoint_id);
        }
      },
      REDONE_IF_LOST,
    );
    return 'succeeded';
  }
  const reason = reasonOf(result);
  const unitMs = delivery.unitMs ?? RETRY_UNIT_MS;
  const outcome = await writeTransaction(
    db,
    async (trx): Promise<keyof WebhookCounts> => {
      const failure = { response_code: status, last_error: reason };
      if (status === GONE) {
        if (!(await settleDelivery(trx, key, token, { ...failure, status: 'failed' }))) return 'failed';
        await disableEndpoint(trx, row.organisation_id, row.endpoint_id, 'gone', at);
        return 'failed';
      }
      const next = nextAttemptAt(row.event_created_at, row.attempts, at, unitMs);
      const endpoint = await markFailing(trx, row.organisation_id, row.endpoint_id, at);
      // Disabled while this attempt was out (another delivery's 410): it ends here, as the deliveries
      // the disabling found pending did, rather than waiting to be tried again.
      if (endpoint?.disabled) {
        const ended = {
          ...failure,
          status: 'failed' as const,
          last_error: disabledError(endpoint.disabledReason),
        };
        await settleDelivery(trx, key, token, ended);
        return 'failed';
      }
      const failingSince = endpoint?.failingSince ?? null;
      // Failing for 3 days, counted from the first failure since the last success, or for all the
      // tries of an event given up now.
      const givenUpFirstTry = next === null ? firstTryBy(row.attempts, at, unitMs) : undefined;
      const disable = failingSince !== null && failedTooLong(failingSince, at, unitMs, givenUpFirstTry);
      const final = next === null || disable;
      const settled = await settleDelivery(
        trx,
        key,
        token,
        final ? { ...failure, status: 'failed' } : { ...failure, next_attempt_at: next },
      );
      if (settled && disable) await disableEndpoint(trx, row.organisation_id, row.endpoint_id, 'failing', at);
      return final ? 'failed' : 'retried';
    },
    REDONE_IF_LOST,
  );
  delivery.onAttemptFailed?.({
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    attempt: row.attempts,
    reason,
    final: outcome === 'failed',
  });
  return outcome;
}

function succeeded(status: number, at: number): DeliveryOutcome {
  return {
    status: 'succeeded',
    response_code: status,
    last_error: null,
    delivered_at: at,
  };
}

/** The headers of design.md 9.2, the signature made now (each attempt signs afresh). */
function headersOf(row: ClaimedDelivery, nowMs: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'booking-webhooks/1',
    'booking-event-id': row.event_id,
    'booking-event-type': row.event_type,
    'booking-delivery-attempt': String(row.attempts),
    'booking-signature': signatureHeader(row.secret, row.payload, Math.floor(nowMs / 1000)),
  };
}

/** What a delivery to a disabled endpoint ends with (the words disableEndpoint writes). */
function disabledError(reason: string | null): string {
  return reason === null ? 'endpoint disabled' : `endpoint disabled (${reason})`;
}

function reasonOf(result: AttemptResult): string {
  return 'status' in result ? `the endpoint answered ${result.status}` : result.error;
}

/** Delivers until nothing is due (the tests, which then read what each receiver was sent). */
export async function deliverAllDueWebhooks(delivery: WebhookDelivery): Promise<WebhookCounts> {
  const total: WebhookCounts = { succeeded: 0, retried: 0, failed: 0 };
  for (;;) {
    const counts = await deliverDueWebhooks(delivery);
    for (const key of Object.keys(total) as (keyof WebhookCounts)[]) total[key] += counts[key];
    const handled = counts.succeeded + counts.retried + counts.failed;
    if (handled === 0 || (await countDueDeliveries(delivery.db, delivery.clock.nowMs())) === 0) return total;
  }
}

/** How long the deliveries log keeps what ended: long enough to look back on a month's deliveries. */
export const WEBHOOK_HISTORY_MS = 30 * 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1_000;

/** Forgets deliveries that ended more than WEBHOOK_HISTORY_MS ago, and their events, batch by batch. */
export async function pruneDeliveredWebhooks(db: Db, now: number): Promise<number> {
  let pruned = 0;
  for (;;) {
    const batch = await writeTransaction(db, (trx) =>
      pruneWebhookHistory(trx, now - WEBHOOK_HISTORY_MS, PRUNE_BATCH),
    );
    pruned += batch;
    if (batch < PRUNE_BATCH) return pruned;
  }
}

/**
 * Keeps up to `batchSize` attempts out (64), claiming every `intervalMs` what there is room for, and,
 * while more is due than was claimed, again as soon as a place frees: an attempt that hangs (a receiver
 * that never answers, a name that never resolves: up to 20 s) holds its own place only, not the
 * deliveries claimed with it. At most a quarter of the places go to one endpoint; once an endpoint is
 * failing (an attempt failed since its last success), at most 2 go to it and a quarter of them to all
 * such endpoints together, so that receivers that hang, however many, do not hold up the events of
 * those that answer (for longer than their first attempts take to fail). A failure is reported, never
 * fatal; once an hour it also forgets what ended a month ago. The short interval is what keeps an
 * event's delay under a second: the pass's read is how a worker learns of an event any process wrote,
 * there being no notification channel between processes. A pass with nothing to claim (nothing due, or
 * only deliveries waiting behind a failing one of their booking or to endpoints holding their share)
 * costs that one indexed read and takes no write lock. The returned stop waits for every attempt out.
 */
export function startWebhookWorker(
  delivery: WebhookDelivery,
  onError: (error: unknown) => void,
  intervalMs = 200,
): () => Promise<void> {
  const places = delivery.batchSize ?? DEFAULT_BATCH;
  const quarter = Math.max(1, Math.floor(places / 4));
  const shares: Shares = {
    perEndpoint: quarter,
    perFailingEndpoint: Math.min(quarter, FAILING_ENDPOINT_SHARE),
    failing: quarter,
  };
  const attempts = new Set<Promise<void>>();
  const out = new Map<string, { attempts: number; failing: boolean }>();
  /** Wakes a pass waiting for a place to free. */
  let placeFreed: (() => void) | null = null;
  const send = (row: ClaimedDelivery, failing: boolean, token: string) => {
    out.set(row.endpoint_id, { attempts: (out.get(row.endpoint_id)?.attempts ?? 0) + 1, failing });
    const attempt: Promise<void> = deliverOne(delivery, row, token)
      .then(() => undefined, onError)
      .finally(() => {
        attempts.delete(attempt);
        const before = out.get(row.endpoint_id);
        if (!before || before.attempts <= 1) out.delete(row.endpoint_id);
        else out.set(row.endpoint_id, { ...before, attempts: before.attempts - 1 });
        placeFreed?.();
        placeFreed = null;
      });
    attempts.add(attempt);
  };
  let prunedAt = Number.NEGATIVE_INFINITY;
  const stop = startPeriodicWork(
    async (stopping) => {
      const now = delivery.clock.nowMs();
      if (now - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = now;
        await pruneDeliveredWebhooks(delivery.db, now);
      }
      while (!stopping()) {
        const room = places - attempts.size;
        if (room > 0) {
          const claim = await claimDue(delivery, room, out, shares);
          for (const { row, failing } of claim.rows) send(row, failing, claim.token);
          if (!claim.more) return;
        }
        if (attempts.size === 0) return;
        // More is due: claim again once a place frees (a moment later, so that the attempts ending
        // with it free theirs too and one claim takes them all), or after the interval at the latest:
        // what is due may be waiting for an endpoint at its share, whose attempts may hang, while
        // other endpoints' events come due.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            placeFreed = null;
            resolve();
          }, intervalMs);
          placeFreed = () => {
            clearTimeout(timer);
            setTimeout(resolve, GATHER_MS);
          };
        });
      }
    },
    onError,
    intervalMs,
  );
  return async () => {
    await stop();
    await Promise.all(attempts);
    delivery.sender.close();
  };
}

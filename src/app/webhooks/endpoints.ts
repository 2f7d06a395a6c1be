import { createHash, randomUUID } from 'node:crypto';
import type { WebhookDelivery, WebhookEndpoint } from '../../contract/webhook.ts';
import { presentWebhookEndpoint } from '../../contract/webhook.ts';
import type { Db } from '../../data/database.ts';
import {
  deleteEndpoint,
  deliveriesOf,
  endpointsOf,
  findEndpoint,
  insertEndpoint,
  pendingOfKeys,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from '../../data/webhook-repository.ts';
import { takeTurn, webhookEndpointsTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import { AppError } from '../../domain/errors.ts';
import { isWebhookEventType, TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.ts';
import { alreadySent, idOfForm } from '../once-forms.ts';
import { checkEndpointUrl, type DestinationPolicy } from './destinations.ts';
import { publishEvent } from './events.ts';
import { newWebhookSecret } from './signature.ts';

/** Managing an organisation's webhook endpoints: the same for REST, the console and the CLI. */

export interface NewWebhookEndpoint {
  url: string;
  events: readonly string[];
  description?: string | undefined;
}

/** How many endpoints an organisation may have: a bound on the deliveries one change can fan out to. */
export const MAX_ENDPOINTS = 20;

/**
 * Registers an endpoint, enabled, with a new secret: the answer is the only time the secret is shown.
 * 400 naming `url` or `events` when one is not acceptable (destinations.ts). `formId`: the console
 * form's one-time id, which makes the endpoint's id; sent again, 409 (once-forms.ts alreadySent).
 */
export async function createWebhookEndpoint(
  db: Db,
  organisationId: string,
  input: NewWebhookEndpoint,
  policy: DestinationPolicy,
  now: number,
  formId?: string,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const events = [...new Set(input.events)];
  const unknown = events.find((event) => !isWebhookEventType(event));
  if (events.length === 0 || unknown !== undefined) {
    throw new AppError(
      'invalid_request',
      `events must name one or more of ${WEBHOOK_EVENT_TYPES.join(', ')}${unknown === undefined ? '' : ` (not "${unknown}")`}.`,
      'events',
    );
  }
  const description = input.description?.trim() || null;
  if (description !== null && [...description].length > 200) {
    throw new AppError('invalid_request', 'description must be at most 200 characters.', 'description');
  }
  const url = await checkEndpointUrl(input.url.trim(), policy);
  const secret = newWebhookSecret();
  const row: WebhookEndpointRow = {
    // The console's form names what it makes (once-forms.ts): sent again, it makes nothing.
    id: formId === undefined ? randomUUID() : idOfForm(organisationId, formId),
    organisation_id: organisationId,
    url,
    description,
    events: JSON.stringify(events),
    secret,
    status: 'enabled',
    disabled_reason: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
    disabled_at: null,
  };
  await writeTransaction(db, async (trx) => {
    // Simultaneous additions take turns (PostgreSQL): each counts what the others added.
    await takeTurn(trx, webhookEndpointsTurn(organisationId));
    const endpoints = await endpointsOf(trx, organisationId);
    if (formId !== undefined && endpoints.some((endpoint) => endpoint.id === row.id)) {
      throw alreadySent('endpoint');
    }
    if (endpoints.length >= MAX_ENDPOINTS) {
      throw new AppError(
        'conflict',
        `An organisation has at most ${MAX_ENDPOINTS} webhook endpoints: delete one first.`,
      );
    }
    await insertEndpoint(trx, row);
  });
  return { endpoint: toEndpoint(row), secret };
}

export async function listWebhookEndpoints(db: Db, organisationId: string): Promise<WebhookEndpoint[]> {
  return (await endpointsOf(db, organisationId)).map(toEndpoint);
}

/** The endpoint with this id, or 404. */
export async function getWebhookEndpoint(
  db: Db,
  organisationId: string,
  id: string,
): Promise<WebhookEndpoint> {
  const row = await findEndpoint(db, organisationId, id.toLowerCase());
  if (!row) throw notFound();
  return toEndpoint(row);
}

/** Deletes the endpoint and its deliveries (nothing more is sent to it), or 404. */
export async function deleteWebhookEndpoint(db: Db, organisationId: string, id: string): Promise<void> {
  const deleted = await writeTransaction(db, (trx) => deleteEndpoint(trx, organisationId, id.toLowerCase()));
  if (!deleted) throw notFound();
}

/**
 * Queues a `webhook.test` event to this endpoint alone (whatever it subscribes to, enabled or not:
 * 409 when disabled, nothing would go), delivered like any other; its id, to find in the deliveries.
 */
export async function sendTestEvent(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<{ eventId: string }> {
  return writeTransaction(db, async (trx) => {
    const row = await findEndpoint(trx, organisationId, id.toLowerCase());
    if (!row) throw notFound();
    if (row.status !== 'enabled') {
      throw new AppError('conflict', 'This endpoint is disabled: nothing is sent to it. Create a new one.');
    }
    const endpoint = presentWebhookEndpoint(toEndpoint(row));
    const eventId = await publishEvent(
      trx,
      organisationId,
      // A test event belongs to no booking, so has no order to keep: each gets a key of its own. One
      // key for all of an endpoint's held a new test back behind a failed one, for up to an hour,
      // as a receiver mended was tried again.
      { type: TEST_EVENT_TYPE, orderingKey: `test:${randomUUID()}`, data: () => ({ endpoint }) },
      now,
      { onlyEndpoint: row.id },
    );
    return { eventId: eventId! };
  });
}

/** A page of the endpoint's deliveries, the latest first, from before `beforeSeq` (the cursor's). */
export async function listDeliveries(
  db: Db,
  organisationId: string,
  id: string,
  page: { beforeSeq: number | null; limit: number },
): Promise<{ items: WebhookDelivery[]; next: number | null }> {
  const endpoint = await findEndpoint(db, organisationId, id.toLowerCase());
  if (!endpoint) throw notFound();
  const rows = await deliveriesOf(db, organisationId, endpoint.id, page);
  const shown = rows.slice(0, page.limit);
  const heldUntil = await heldBackUntil(db, organisationId, endpoint.id, shown);
  const items = shown.map((row) => toDelivery(row, heldUntil.get(Number(row.seq))));
  return { items, next: rows.length > page.limit ? items[items.length - 1]!.seq : null };
}

/**
 * When each pending delivery of `rows` held back behind an earlier one of its booking can go at the
 * soonest: once every earlier one still pending has been tried (claimableDeliveries), so not before the
 * latest of their next attempts. Its own next_attempt_at is when it became due, often long past while
 * it waits (an hour, behind a failing one): the log says when it is tried next, not that.
 */
async function heldBackUntil(
  db: Db,
  organisationId: string,
  endpointId: string,
  rows: readonly WebhookDeliveryRow[],
): Promise<Map<number, number>> {
  const pending = rows.filter((row) => row.status === 'pending');
  const held = new Map<number, number>();
  if (pending.length === 0) return held;
  const earlier = await pendingOfKeys(
    db,
    organisationId,
    endpointId,
    pending.map((row) => row.ordering_key),
  );
  for (const row of pending) {
    const seq = Number(row.seq);
    for (const other of earlier) {
      if (other.ordering_key !== row.ordering_key || Number(other.seq) >= seq) continue;
      held.set(seq, Math.max(held.get(seq) ?? 0, other.next_attempt_at));
    }
  }
  return held;
}

function notFound(): AppError {
  return new AppError('not_found', 'No webhook endpoint has this id.', 'id');
}

function toEndpoint(row: WebhookEndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as string[],
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * A delivery's id: a UUID (version 8, RFC 9562) hashed from its endpoint and event, which it is the
 * one delivery of. Not its row's seq: that sequence is shared by every organisation's deliveries, and
 * the gap between two of one's would count another's.
 */
function deliveryIdOf(endpointId: string, eventId: string): string {
  const hex = createHash('sha256').update(`${endpointId}\0${eventId}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function toDelivery(row: WebhookDeliveryRow, heldUntil?: number): WebhookDelivery {
  return {
    id: deliveryIdOf(row.endpoint_id, row.event_id),
    seq: Number(row.seq),
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    responseCode: row.response_code,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: Math.max(row.next_attempt_at, heldUntil ?? 0),
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

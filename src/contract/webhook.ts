import { z } from 'zod';
import { formatUtc } from '../domain/time-format.ts';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../domain/webhooks.ts';
import { omittable, textOf, Uuid } from './common.ts';

/** Webhook endpoints and their deliveries over REST (design.md 9.2; docs/webhooks.md). */

export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES).meta({ id: 'WebhookEventType' });

export const NewWebhookEndpointBody = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2000)
      .describe(
        'Where events are POSTed: https (plain http only to loopback, with WEBHOOK_ALLOW_INSECURE=1); never a private, link-local or metadata address unless the server allows them.',
      ),
    events: z
      .array(WebhookEventType)
      .min(1)
      .max(WEBHOOK_EVENT_TYPES.length)
      .refine((events) => new Set(events).size === events.length, 'must not name an event twice')
      .describe('The event types to receive.'),
    description: omittable(textOf(200)).describe('What the endpoint is for, for whoever reads the list.'),
  })
  .meta({ id: 'NewWebhookEndpoint' });

export const WebhookEndpointParams = z.strictObject({ id: z.uuid().describe('The endpoint id.') });

export const WebhookEndpointResource = z
  .object({
    id: Uuid,
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(WebhookEventType),
    status: z
      .enum(['enabled', 'disabled'])
      .describe('disabled: it answered 410 Gone, or failed every attempt for 3 days; nothing more is sent.'),
    disabled_reason: z.enum(['gone', 'failing']).nullable(),
    disabled_at: z.string().nullable().describe('UTC.'),
    failing_since: z
      .string()
      .nullable()
      .describe(
        'UTC: the first of the failed attempts since its last success; null while it succeeds (a 410 disables at once and does not set it).',
      ),
    created_at: z.string().describe('UTC.'),
    updated_at: z.string().describe('UTC.'),
  })
  .meta({ id: 'WebhookEndpoint' });

export const CreatedWebhookEndpointResource = WebhookEndpointResource.extend({
  secret: z
    .string()
    .describe(
      'The key of Booking-Signature (HMAC-SHA256). Shown in this answer only: keep it, it cannot be read again.',
    ),
}).meta({ id: 'CreatedWebhookEndpoint' });

export const WebhookDeliveryResource = z
  .object({
    id: Uuid.describe("The delivery's id: one for each event and endpoint, the same on every attempt."),
    event_id: z.string().describe("The event's id: Booking-Event-Id, the receiver's idempotency key."),
    event_type: z.union([WebhookEventType, z.literal(TEST_EVENT_TYPE)]),
    status: z
      .enum(['pending', 'succeeded', 'failed'])
      .describe('pending: to be tried (again); failed: given up (72 hours, or the endpoint disabled).'),
    attempt: z.int().describe('Attempts made so far (Booking-Delivery-Attempt of the latest).'),
    response_code: z
      .int()
      .nullable()
      .describe("The receiver's HTTP status at the latest attempt, if it answered."),
    error: z.string().nullable().describe('Why the latest attempt failed, when it did.'),
    attempted_at: z.string().nullable().describe('UTC: the latest attempt.'),
    next_attempt_at: z.string().nullable().describe('UTC: when it is tried next, while pending.'),
    created_at: z.string().describe('UTC: when the event happened.'),
    delivered_at: z.string().nullable().describe('UTC: when it succeeded.'),
  })
  .meta({ id: 'WebhookDelivery' });

/** An endpoint as the service layer gives it. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  disabledAt: number | null;
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookDelivery {
  id: string;
  /** Where it stands in the log (a sequence every organisation's deliveries share): never shown. */
  seq: number;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  responseCode: number | null;
  lastError: string | null;
  lastAttemptAt: number | null;
  nextAttemptAt: number;
  createdAt: number;
  deliveredAt: number | null;
}

const utcOrNull = (ms: number | null) => (ms === null ? null : formatUtc(ms));

export function presentWebhookEndpoint(endpoint: WebhookEndpoint): z.infer<typeof WebhookEndpointResource> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events as z.infer<typeof WebhookEventType>[],
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason as 'gone' | 'failing' | null,
    disabled_at: utcOrNull(endpoint.disabledAt),
    failing_since: utcOrNull(endpoint.failingSince),
    created_at: formatUtc(endpoint.createdAt),
    updated_at: formatUtc(endpoint.updatedAt),
  };
}

export function presentWebhookDelivery(delivery: WebhookDelivery): z.infer<typeof WebhookDeliveryResource> {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType as z.infer<typeof WebhookDeliveryResource>['event_type'],
    status: delivery.status,
    attempt: delivery.attempts,
    response_code: delivery.responseCode,
    error: delivery.lastError,
    attempted_at: utcOrNull(delivery.lastAttemptAt),
    next_attempt_at: delivery.status === 'pending' ? formatUtc(delivery.nextAttemptAt) : null,
    created_at: formatUtc(delivery.createdAt),
    delivered_at: utcOrNull(delivery.deliveredAt),
  };
}

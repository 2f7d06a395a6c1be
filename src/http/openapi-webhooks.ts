import type { OpenAPIV3_1 } from 'openapi-types';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '../domain/webhooks.ts';

/**
 * The OpenAPI document's top-level `webhooks` (OpenAPI 3.1): each event an integrator can subscribe
 * to, as the POST this server makes to the endpoint, with its headers and body (design.md 9.2,
 * docs/webhooks.md). The bodies refer to the component schemas of the REST resources they carry.
 */

const WHEN: Record<string, string> = {
  'booking.created':
    'A booking was made, by any face (REST, MCP, the public page, the console): confirmed at once, or a hold waiting for a deposit or the customer’s steps.',
  'booking.confirmed':
    'A pending hold became confirmed (deposit paid, contact proven, card set up, waitlist offer claimed).',
  'booking.rescheduled': 'A booking moved to another time or staff member.',
  'booking.cancelled': 'A booking was cancelled.',
  'booking.expired': 'A pending hold lapsed without being confirmed.',
  'booking.completed': 'Staff marked a booking completed.',
  'booking.no_show': 'Staff marked a booking a no-show.',
  'client.created':
    'A client went on file (registered, imported, or a public booking’s contact proven; without the code step, public_verification none, the record a public booking is made for).',
  'message.created': 'A caller left a message for staff (take_message, POST /v1/messages).',
  'waitlist.offered':
    'A freed time was offered to a waitlist entry: held for it as a pending_confirmation booking, which sends its own booking.created.',
  'waitlist.claimed':
    'A waitlist entry’s offer was booked: the entry ends as booked (sent after the booking’s booking.confirmed).',
  [TEST_EVENT_TYPE]: 'Sent on request (POST /v1/webhook-endpoints/{id}/test), to one endpoint only.',
};

/** The component schema of each event's `data`: the REST resource after the change. */
function dataSchemaOf(type: string): OpenAPIV3_1.SchemaObject | OpenAPIV3_1.ReferenceObject {
  if (type.startsWith('booking.')) {
    return {
      $ref: '#/components/schemas/Booking',
      description:
        'The Booking after the change, as GET /v1/bookings/{reference} answers a read_write key, except that its capability links payment_url and booking_page_url are always null in an event (each lets whoever holds it pay for or manage the booking): read the booking with your key when you need them.',
    };
  }
  if (type === 'client.created') return { $ref: '#/components/schemas/Client' };
  if (type === 'message.created') return { $ref: '#/components/schemas/Message' };
  if (type === TEST_EVENT_TYPE) {
    return {
      type: 'object',
      properties: { endpoint: { $ref: '#/components/schemas/WebhookEndpoint' } },
      required: ['endpoint'],
    };
  }
  return { $ref: '#/components/schemas/WaitlistEntry' };
}

const HEADERS: OpenAPIV3_1.ParameterObject[] = [
  {
    name: 'Booking-Event-Id',
    in: 'header',
    required: true,
    description: "The event's id, the same on every attempt: the receiver's idempotency key.",
    schema: { type: 'string' },
  },
  { name: 'Booking-Event-Type', in: 'header', required: true, schema: { type: 'string' } },
  {
    name: 'Booking-Delivery-Attempt',
    in: 'header',
    required: true,
    description: 'Which attempt this is, from 1.',
    schema: { type: 'integer', minimum: 1 },
  },
  {
    name: 'Booking-Signature',
    in: 'header',
    required: true,
    description:
      't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the endpoint secret>. Verify it on the raw body, and refuse an old t.',
    schema: { type: 'string', pattern: '^t=[0-9]+,v1=[0-9a-f]{64}$' },
  },
];

export function webhookOperations(): Record<string, OpenAPIV3_1.PathItemObject> {
  const types = [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE];
  return Object.fromEntries(
    types.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Event`,
          summary: WHEN[type],
          description:
            'POSTed to each endpoint subscribed to it, signed; 2xx within 10 s is success, anything else is retried ' +
            'after about 1, 2, 4, 8, 16 and 32 minutes, then hourly for 72 hours. 410 Gone disables the endpoint.',
          tags: ['Webhooks'],
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: eventBody(type),
              },
            },
          },
          responses: {
            '2XX': { description: 'Received: not sent again.' },
            '410': { description: 'Gone: the endpoint is disabled at once, nothing more is sent.' },
          },
        },
      } as OpenAPIV3_1.PathItemObject,
    ]),
  );
}

/** The body of one event: the envelope, and its data's schema. */
function eventBody(type: string): OpenAPIV3_1.SchemaObject {
  return {
    type: 'object',
    required: ['id', 'type', 'created_at', 'organisation', 'data'],
    properties: {
      id: { type: 'string', description: 'Booking-Event-Id.' },
      type: { type: 'string', enum: [type] },
      created_at: { type: 'string', format: 'date-time', description: 'UTC: when the change happened.' },
      organisation: { type: 'string', description: "The organisation's slug." },
      data: dataSchemaOf(type),
    },
  };
}

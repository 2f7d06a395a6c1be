import { presentBooking } from '../../contract/booking.ts';
import { presentClient } from '../../contract/client.ts';
import { presentMessage } from '../../contract/message.ts';
import { findBookingById } from '../../data/booking-repository.ts';
import type { Db } from '../../data/database.ts';
import { findOrganisationById } from '../../data/organisation-repository.ts';
import { enabledEndpointsOf, insertEvent } from '../../data/webhook-repository.ts';
import type { Booking } from '../../domain/booking/booking.ts';
import type { Client } from '../../domain/client.ts';
import type { StaffMessage } from '../../domain/message.ts';
import { formatUtc } from '../../domain/time-format.ts';
import type { DeliveredEventType, WebhookEventType } from '../../domain/webhooks.ts';
import { readCatalogue } from '../catalogue-cache.ts';
import { timeOrderedId } from '../time-ordered-id.ts';

/**
 * Writing webhook events, always inside the transaction of the change they report (the outbox
 * pattern, as for the customer's messages): the change and its event commit together or not at all,
 * whichever face made it. delivery.ts sends them.
 *
 * Whether anyone wants an event is decided from the organisation's enabled endpoints, kept in the
 * catalogue cache under its catalogue_version (migration 0024 bumps it on every change to an
 * endpoint's url, events or status): a change nobody subscribes to costs no statement. Only then is
 * the resource read and the event written, with one delivery for each subscribed endpoint.
 */

interface Subscriptions {
  slug: string;
  endpoints: { id: string; events: ReadonlySet<string> }[];
}

/**
 * The organisation's slug and enabled endpoints. Cached only under a catalogue_version the caller read
 * before its transaction (committed); without one, read afresh: a version read inside a transaction
 * that changes the catalogue (an import) may never commit, and must not name a cache entry.
 */
async function subscriptionsOf(
  trx: Db,
  organisationId: string,
  catalogueVersion?: number,
): Promise<Subscriptions> {
  return readCatalogue(trx, organisationId, catalogueVersion, 'webhook-endpoints', async () => {
    const [organisation, endpoints] = await Promise.all([
      findOrganisationById(trx, organisationId),
      enabledEndpointsOf(trx, organisationId),
    ]);
    return {
      slug: organisation?.slug ?? '',
      endpoints: endpoints.map((e) => ({ id: e.id, events: new Set(JSON.parse(e.events) as string[]) })),
    };
  });
}

/**
 * Whether any enabled endpoint of the organisation subscribes to `type`: no statement while the
 * subscriptions are cached (see subscriptionsOf).
 */
export async function subscribed(
  trx: Db,
  organisationId: string,
  type: WebhookEventType,
  catalogueVersion?: number,
): Promise<boolean> {
  const { endpoints } = await subscriptionsOf(trx, organisationId, catalogueVersion);
  return endpoints.some((e) => e.events.has(type));
}

/** An event to publish: its type, what orders it (a booking's id), and its data, read only if wanted. */
export interface EventToPublish {
  type: DeliveredEventType;
  orderingKey: string;
  data: () => Promise<unknown> | unknown;
}

/**
 * Writes the event (`{id, type, created_at, organisation, data}`, the body every attempt sends) for
 * the endpoints that want it, or, with `onlyEndpoint`, for that one whatever it subscribes to (the
 * test event). Nothing when none does, or the data is gone (undefined).
 */
export async function publishEvent(
  trx: Db,
  organisationId: string,
  event: EventToPublish,
  now: number,
  options: {
    catalogueVersion?: number | undefined;
    onlyEndpoint?: string;
    /** The event is the transaction's last write: see insertEvent. */
    lastStatement?: boolean;
  } = {},
): Promise<string | null> {
  const { slug, endpoints } = await subscriptionsOf(trx, organisationId, options.catalogueVersion);
  const targets = options.onlyEndpoint
    ? [options.onlyEndpoint]
    : endpoints.filter((e) => e.events.has(event.type)).map((e) => e.id);
  if (targets.length === 0) return null;
  const data = await event.data();
  if (data === undefined) return null;
  const id = timeOrderedId();
  const payload = JSON.stringify({
    id,
    type: event.type,
    created_at: formatUtc(now),
    organisation: slug,
    data,
  });
  await insertEvent(
    trx,
    { organisationId, id, type: event.type, orderingKey: event.orderingKey, payload, at: now },
    targets,
    { lastStatement: options.lastStatement },
  );
  return id;
}

/** A booking's event, its data the REST Booking after the change (without capability links). */
export function publishBookingEvent(
  trx: Db,
  organisationId: string,
  bookingId: string,
  type: WebhookEventType,
  now: number,
  catalogueVersion?: number,
): Promise<string | null> {
  return publishEvent(
    trx,
    organisationId,
    {
      type,
      orderingKey: bookingId,
      data: async () => {
        const booking = await findBookingById(trx, organisationId, bookingId);
        return booking && presentBooking(booking, now, null);
      },
    },
    now,
    { catalogueVersion },
  );
}

/** booking.created, from the booking just written (its data built from what was written, not read back). */
export function publishCreatedBooking(
  trx: Db,
  organisationId: string,
  booking: Booking,
  now: number,
  options: { catalogueVersion?: number | undefined; lastStatement?: boolean } = {},
): Promise<string | null> {
  return publishEvent(
    trx,
    organisationId,
    { type: 'booking.created', orderingKey: booking.id, data: () => presentBooking(booking, now, null) },
    now,
    options,
  );
}

/**
 * client.created: a client went on file (registered, imported, a public booking's proven contact, or
 * the record a public booking is made for without the code step).
 */
export function publishClientCreated(trx: Db, organisationId: string, client: Client, now: number) {
  return publishEvent(
    trx,
    organisationId,
    { type: 'client.created', orderingKey: client.id, data: () => presentClient(client) },
    now,
  );
}

/** message.created: a caller left a message for staff (take_message, POST /messages). */
export function publishMessageCreated(trx: Db, organisationId: string, message: StaffMessage, now: number) {
  return publishEvent(
    trx,
    organisationId,
    { type: 'message.created', orderingKey: message.id, data: () => presentMessage(message) },
    now,
  );
}

import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createWebhookEndpoint } from '../../src/app/webhooks/endpoints.ts';
import {
  BOOKINGS_SCENARIO,
  type BookingsBenchDatabase,
  bookingsCatalogue,
  createBookingsDatabase,
} from './bookings-database.ts';

/**
 * The webhook benchmarks' database: the booking scenario of bookings-database.ts twice over, as two
 * organisations alike in everything but their webhook endpoints:
 *
 * - `slot-studio` (`subscribed`) has one endpoint, enabled, subscribed to booking.created, at
 *   `endpointUrl`: each booking made there writes one webhook event and one pending delivery;
 * - `slot-studio-quiet` (`quiet`) has none: its bookings write no event (the catalogue cache says
 *   nobody listens, without a statement).
 *
 * Each has a read_write key that is never rate limited and the scenario's client (phone and e-mail).
 * Loopback endpoints need WEBHOOK_ALLOW_INSECURE, which this policy stands for.
 */
export const WEBHOOKS_SCENARIO = {
  subscribed: BOOKINGS_SCENARIO.organisation,
  quiet: 'slot-studio-quiet',
  location: BOOKINGS_SCENARIO.location,
} as const;

export type WebhookOrganisation = 'subscribed' | 'quiet';

export const LOOPBACK_POLICY = { allowInsecure: true, allowPrivateNetworks: false } as const;

export interface WebhooksOrganisation {
  id: string;
  writeKey: string;
  /** The `regular` client (phone and e-mail), the one booked for. */
  clientId: string;
  serviceId: string;
  /** Staff ids by index, as bookingSlot numbers them. */
  staffIds: string[];
}

export interface WebhooksBenchDatabase {
  database: BookingsBenchDatabase['database'];
  organisations: Record<WebhookOrganisation, WebhooksOrganisation>;
  endpoint: { id: string; secret: string; url: string };
  apiKeyId: string;
  /** Epoch milliseconds of BOOKINGS_SCENARIO.now. */
  now: number;
}

export async function createWebhooksDatabase(endpointUrl: string): Promise<WebhooksBenchDatabase> {
  const seeded = await createBookingsDatabase();
  try {
    const { db } = seeded.database;
    const catalogue = bookingsCatalogue();
    await importCatalogue(
      db,
      {
        ...catalogue,
        organisation: {
          ...catalogue.organisation,
          slug: WEBHOOKS_SCENARIO.quiet,
          name: 'Slot Studio Quiet',
          booking_reference_prefix: 'SQ',
        },
      },
      seeded.now,
    );
    const quietKey = await createApiKey(
      db,
      {
        organisationSlug: WEBHOOKS_SCENARIO.quiet,
        label: 'bench',
        scope: 'read_write',
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      seeded.now,
    );
    const organisationOf = async (slug: string, writeKey: string): Promise<WebhooksOrganisation> => {
      const { id } = await db
        .selectFrom('organisations')
        .select('id')
        .where('slug', '=', slug)
        .executeTakeFirstOrThrow();
      const service = await db
        .selectFrom('services')
        .select('id')
        .where('organisation_id', '=', id)
        .executeTakeFirstOrThrow();
      const client = await db
        .selectFrom('clients')
        .select('id')
        .where('organisation_id', '=', id)
        .where('ref', '=', 'regular')
        .executeTakeFirstOrThrow();
      const staff = await db
        .selectFrom('staff')
        .select('id')
        .where('organisation_id', '=', id)
        .orderBy('ref')
        .execute();
      return { id, writeKey, clientId: client.id, serviceId: service.id, staffIds: staff.map((s) => s.id) };
    };
    const subscribed = await organisationOf(WEBHOOKS_SCENARIO.subscribed, seeded.writeKey);
    const quiet = await organisationOf(WEBHOOKS_SCENARIO.quiet, quietKey.key);
    const created = await createWebhookEndpoint(
      db,
      subscribed.id,
      { url: endpointUrl, events: ['booking.created'] },
      LOOPBACK_POLICY,
      seeded.now,
    );
    return {
      database: seeded.database,
      organisations: { subscribed, quiet },
      endpoint: { id: created.endpoint.id, secret: created.secret, url: endpointUrl },
      apiKeyId: seeded.apiKeyId,
      now: seeded.now,
    };
  } catch (error) {
    await seeded.database.dispose();
    throw error;
  }
}

import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { ManualClock } from '../../src/app/clock.ts';
import {
  type AppDeps,
  createAppDeps,
  DEFAULT_LIMITS,
  type Limits,
  rateLimitStoreFor,
} from '../../src/app/deps.ts';
import { localCheckout, type PaymentProvider } from '../../src/app/payments.ts';
import { buildApp, type HttpOptions } from '../../src/http/build-app.ts';
import { smallCatalogue } from './catalogue-fixtures.ts';
import { OpenApiConformance } from './openapi-conformance.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from './temp-database.ts';

export const TEST_START = '2026-11-23T09:00:00Z';

export interface TestApp {
  database: TempDatabase;
  clock: ManualClock;
  deps: AppDeps;
  app: FastifyInstance;
  /** Keys of the first catalogue's organisation. */
  keys: { read: string; readWrite: string };
  /** inject() that also checks the response against the OpenAPI document (for documented routes). */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  keyFor(
    organisationSlug: string,
    scope?: 'read' | 'read_write',
    rateLimitPerMinute?: number,
  ): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real app on a real SQLite file with catalogues imported and keys issued, and a steppable clock.
 */
export async function startTestApp(
  options: {
    catalogues?: unknown[];
    limits?: Partial<Limits>;
    now?: string;
    http?: HttpOptions;
    /** BOOKING_SECRET; null leaves each organisation its own stored cursor secret. */
    secret?: string | null;
    /** PAYMENT_PROVIDER; the built-in test mode unless a test says otherwise (null: none). */
    payments?: PaymentProvider | null;
    /** Where webhook endpoints may point; tests' receivers listen on loopback. */
    webhookDestinations?: AppDeps['webhookDestinations'];
    /** The channels a provider sends on (SMTP_URL, TWILIO_*); none by default: messages only logged. */
    messageProviders?: AppDeps['messageProviders'];
  } = {},
): Promise<TestApp> {
  const database = await createTempDatabase();
  const clock = new ManualClock(options.now ?? TEST_START);
  const catalogues = options.catalogues ?? [smallCatalogue()];
  for (const catalogue of catalogues) await importCatalogue(database.db, catalogue, clock.nowMs());
  const deps = createAppDeps({
    db: database.db,
    clock,
    secret: options.secret === undefined ? 'test-secret' : options.secret,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    payments: options.payments === undefined ? localCheckout : options.payments,
    // As `booking serve` counts: in the database's shared store (a file beside a SQLite database).
    rateLimitStore: rateLimitStoreFor(database.db, onPostgres ? null : database.file),
    ...(options.webhookDestinations && { webhookDestinations: options.webhookDestinations }),
    ...(options.messageProviders && { messageProviders: options.messageProviders }),
  });
  const app = await buildApp(deps, options.http);
  const routeOf = new Map<string, string | undefined>();
  app.addHook('onResponse', async (request) => {
    routeOf.set(request.id, request.routeOptions.url);
  });
  await app.ready();
  const conformance = await OpenApiConformance.load(app);

  const keyFor = async (slug: string, scope: 'read' | 'read_write' = 'read_write', rate?: number) =>
    (
      await createApiKey(
        database.db,
        { organisationSlug: slug, label: `test ${scope}`, scope, rateLimitPerMinute: rate ?? null },
        clock.nowMs(),
      )
    ).key;
  const firstSlug = (catalogues[0] as { organisation: { slug: string } }).organisation.slug;
  const keys = { read: await keyFor(firstSlug, 'read'), readWrite: await keyFor(firstSlug, 'read_write') };

  return {
    database,
    clock,
    deps,
    app,
    keys,
    keyFor,
    async request({ key, ...injectOptions }) {
      const headers = { ...(injectOptions.headers ?? {}) };
      const bearer = key === undefined ? keys.readWrite : key;
      if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
      const response = await app.inject({ ...injectOptions, headers });
      const route = routeOf.get(String(response.headers['x-request-id']));
      if (route?.startsWith('/v1/') && route !== '/v1/openapi.json') {
        conformance.check(injectOptions.method ?? 'GET', route, response);
      }
      return response;
    },
    async close() {
      await app.close();
      deps.rateLimitStore.close?.();
      await database.dispose();
    },
  };
}

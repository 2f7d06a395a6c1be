import { type Clock, systemClock } from './app/clock.ts';
import type { Config } from './app/config.ts';
import { type AppDeps, createAppDeps, DEFAULT_LIMITS, rateLimitStoreFor } from './app/deps.ts';
import { paymentProviderFor } from './app/payments.ts';
import {
  type DatabaseHandle,
  type DatabaseOptions,
  ForeignDatabaseError,
  openDatabase,
  sqliteFileOf,
} from './data/database.ts';
import { isForeignDatabase, migrateToLatest } from './data/migrate.ts';
import { holdInUseLock } from './data/postgres.ts';
import { OUTBOX_CHANNELS, type OutboxChannel } from './domain/outbox.ts';

export interface Runtime {
  database: DatabaseHandle;
  deps: AppDeps;
  close(): Promise<void>;
}

/**
 * Opens the configured database, brings its schema up to date and assembles the dependencies every
 * face of the engine is built from.
 */
export async function openRuntime(
  config: Config,
  clock: Clock = systemClock,
  options: DatabaseOptions = {},
): Promise<Runtime> {
  const payments = await paymentProviderFor(config);
  const database = openDatabase(config.databaseUrl, options);
  // PostgreSQL: say this process uses the database for as long as it runs, so that `booking restore`
  // refuses meanwhile (a SQLite file's open connection says so by itself).
  let releaseUse: () => Promise<unknown> = async () => undefined;
  try {
    if (database.dialect === 'postgres') releaseUse = await holdInUseLock(config.databaseUrl);
    // A command that needs a booking database leaves another application's as it is.
    if (options.mustExist && (await isForeignDatabase(database.db))) {
      throw new ForeignDatabaseError(database.description);
    }
    await migrateToLatest(database.db);
    const rateLimitStore = rateLimitStoreFor(database.db, sqliteFileOf(config.databaseUrl));
    const limits = {
      ...DEFAULT_LIMITS,
      organisationRequestsPerMinute: config.organisationRequestsPerMinute,
      organisationSseStreams: config.organisationSseStreams,
    };
    const deps = createAppDeps({
      db: database.db,
      clock,
      secret: config.secret,
      payments,
      rateLimitStore,
      limits,
      webhookDestinations: config.webhookDestinations,
      messageProviders: messageProvidersOf(config),
    });
    const close = async () => {
      rateLimitStore.close?.();
      await database.close();
      await releaseUse();
    };
    return { database, deps, close };
  } catch (error) {
    await database.close();
    await releaseUse();
    throw error;
  }
}

/** The channels `config` names a provider for: the messages that leave the outbox for real. */
export function messageProvidersOf(config: Pick<Config, 'email' | 'sms'>): ReadonlySet<OutboxChannel> {
  return new Set(OUTBOX_CHANNELS.filter((channel) => config[channel] !== null));
}

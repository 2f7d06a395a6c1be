import { type Clock, systemClock } from './app/clock.ts';
import type { Config } from './app/config.ts';
import { type AppDeps, createAppDeps } from './app/deps.ts';
import { paymentProviderNamed } from './app/payments.ts';
import { type DatabaseHandle, type DatabaseOptions, openDatabase } from './data/database.ts';
import { migrateToLatest } from './data/migrate.ts';

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
  const payments = paymentProviderNamed(config.paymentProvider);
  const database = openDatabase(config.databaseUrl, options);
  try {
    await migrateToLatest(database.db);
    const deps = createAppDeps({ db: database.db, clock, secret: config.secret, payments });
    return { database, deps, close: () => database.close() };
  } catch (error) {
    await database.close();
    throw error;
  }
}

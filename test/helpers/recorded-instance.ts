import type { FastifyInstance } from 'fastify';
import { createAppDeps, rateLimitStoreFor } from '../../src/app/deps.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { type Db, openDatabase } from '../../src/data/database.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { onPostgres } from './temp-database.ts';
import type { TestApp } from './test-app.ts';

/** A second instance of the app: the test app's database through a connection of its own. */
export interface RecordedInstance {
  app: FastifyInstance;
  /** This instance's own connection to the database. */
  db: Db;
  /** Every SQL statement this instance has run, in order; the test empties it as it likes. */
  statements: string[];
  /** On PostgreSQL, every round trip to the server (DatabaseOptions.onRoundTrip), in order. */
  roundTrips: (readonly string[])[];
  close(): Promise<void>;
}

/** Another instance on `t`'s database (as another process would be), noting each statement it runs. */
export async function startRecordedInstance(t: TestApp): Promise<RecordedInstance> {
  const statements: string[] = [];
  const roundTrips: (readonly string[])[] = [];
  const handle = openDatabase(t.database.url, {
    onQuery: (sql) => statements.push(sql),
    onRoundTrip: (sql) => roundTrips.push(sql),
  });
  const app = await buildApp(
    createAppDeps({
      db: handle.db,
      clock: t.clock,
      secret: 'test-secret',
      payments: localCheckout,
      rateLimitStore: rateLimitStoreFor(handle.db, onPostgres ? null : t.database.file),
    }),
  );
  return {
    app,
    db: handle.db,
    statements,
    roundTrips,
    async close() {
      await app.close();
      await handle.close();
    },
  };
}

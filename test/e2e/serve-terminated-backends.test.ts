import pg from 'pg';
import { expect, it } from 'vitest';
import { startServer } from '../helpers/cli.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking serve` on PostgreSQL while every backend of its database is terminated again and again (its
 * workers' and its requests' connections, some of them just as they were made): requests may fail,
 * the process must not, and it answers again once the storm is over. A connection terminated at
 * start-up (ReadyForQuery and the FATAL error in one read) used to be an 'error' nobody heard.
 * A race: the old code exited in about half of the runs of this test.
 */
const served = eachTestServes('serve-terminated-');

it.runIf(onPostgres)('survives its backends being terminated over and over, and answers again', async () => {
  const [key] = await prepareDatabase(served.env.DATABASE_URL!, {
    keys: [{ organisation: 'acme-hair', rateLimitPerMinute: 1_000_000 }],
  });
  const server = await startServer(['--port', '0'], served.env);
  served.server = server;
  const admin = new pg.Client({ connectionString: served.env.DATABASE_URL });
  admin.on('error', () => undefined);
  await admin.connect();
  const headers = { authorization: `Bearer ${key}` };
  const ask = () =>
    fetch(`${server.url}/v1/locations`, { headers }).then(
      (response) => response.status,
      () => 0,
    );
  try {
    const until = Date.now() + 4_000;
    const storm = (async () => {
      while (Date.now() < until && server.process.exitCode === null) {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
    while (Date.now() < until && server.process.exitCode === null) {
      await Promise.all([ask(), ask(), ask()]);
    }
    await storm;
    expect(server.process.exitCode, server.stderr().slice(-2000)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await ask()).toBe(200);
  } finally {
    await admin.end();
  }
});

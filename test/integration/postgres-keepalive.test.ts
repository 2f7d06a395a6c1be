import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/data/database.ts';
import { KEEPALIVE_IDLE_MS } from '../../src/data/postgres.ts';
import { createTempDatabase, onPostgres, type TempDatabase } from '../helpers/temp-database.ts';

/**
 * The pool's connections have TCP keepalive on, so that a server that vanished without closing them
 * (a partition, a NAT that forgot them) is found dead by the kernel instead of waited on for ever.
 * Read off the kernel itself: an idle connection with SO_KEEPALIVE has its keepalive timer running
 * (timer 2 in /proc/net/tcp), one without has no timer at all.
 */
describe.runIf(onPostgres && process.platform === 'linux')('PostgreSQL connections', () => {
  let database: TempDatabase;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    database = await createTempDatabase();
    handle = openDatabase(database.url);
  });
  afterAll(async () => {
    await handle?.close();
    await database?.dispose();
  });

  it('have TCP keepalive on, probing after the idle time set', async () => {
    const { rows } = await sql<{ port: number }>`SELECT inet_client_port() AS port`.execute(handle.db);
    const port = rows[0]!.port;
    expect(port, 'the tests reach PostgreSQL over TCP').toBeGreaterThan(0);
    const socket = socketFromPort(port);
    expect(socket, `no TCP socket from local port ${port}`).toBeDefined();
    expect(socket!.timer).toBe(2);
    // Jiffies to the first probe: at most the idle time (the kernel counts in its own ticks; 1,000 a
    // second is the most any Linux build uses).
    expect(socket!.whenJiffies).toBeGreaterThan(0);
    expect(socket!.whenJiffies).toBeLessThanOrEqual(KEEPALIVE_IDLE_MS);
  });
});

/** The /proc/net/tcp{,6} entry of the socket whose local port is `port`: its timer and when it fires. */
function socketFromPort(port: number): { timer: number; whenJiffies: number } | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 6 || !fields[1]!.endsWith(`:${hexPort}`)) continue;
      const [timer, when] = fields[5]!.split(':');
      return { timer: Number.parseInt(timer!, 16), whenJiffies: Number.parseInt(when!, 16) };
    }
  }
  return undefined;
}

import net from 'node:net';
import { expect, it } from 'vitest';
import { startServer } from '../helpers/cli.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking serve` on PostgreSQL when the database server stops answering (down, restarting): the API
 * and the pages say so as the error catalogue does, `503 database_unavailable` (nothing changed; a
 * load balancer may send the request elsewhere), not `500 server_error`; and serve again once it is back.
 * The server reaches PostgreSQL through a TCP relay this test closes and opens again.
 */
const served = eachTestServes('serve-unreachable-');

it.runIf(onPostgres)(
  'answers 503 database_unavailable while PostgreSQL cannot be reached, then serves again',
  async () => {
    const [key] = await prepareDatabase(served.env.DATABASE_URL!, { keys: [{ organisation: 'acme-hair' }] });
    const target = new URL(served.env.DATABASE_URL!);
    const sockets = new Set<net.Socket>();
    const relay = () =>
      net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('error', () => undefined);
          socket.on('close', () => {
            sockets.delete(socket);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
    let proxy = relay();
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as net.AddressInfo).port;
    const through = new URL(target);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    const server = await startServer(['--port', '0'], { ...served.env, DATABASE_URL: through.toString() });
    served.server = server;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    try {
      expect((await fetch(`${server.url}/v1/locations`, { headers })).status).toBe(200);

      const closed = new Promise((resolve) => proxy.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const read = await fetch(`${server.url}/v1/locations`, { headers });
      expect(read.status).toBe(503);
      expect(((await read.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
      const write = await fetch(`${server.url}/v1/clients`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ first_name: 'Ann', last_name: 'Lee', email: 'ann@example.com' }),
      });
      expect(write.status).toBe(503);
      expect(((await write.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
      expect((await fetch(`${server.url}/p/acme-hair`)).status).toBe(503);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(503);

      proxy = relay();
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      expect((await fetch(`${server.url}/v1/locations`, { headers })).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await served.server.stop();
      served.server = undefined;
      for (const socket of sockets) socket.destroy();
      proxy.close();
    }
  },
);

import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A reverse proxy serving the app under `prefix`, as a deployment behind one path of a shared host:
 * it forwards `prefix/…` with the prefix removed (Host kept), and the exact paths of `routes`, and
 * answers 404 to everything else. It records the paths it could not route and the Path of every
 * cookie the app sets.
 */
export async function startPrefixProxy(prefix: string) {
  const unrouted: string[] = [];
  const cookiePaths: string[] = [];
  const routes = new Map<string, string>();
  const state = { target: 0 };
  const proxy = createServer((incoming, outgoing) => {
    const url = incoming.url ?? '/';
    const path = routes.get(url) ?? (url.startsWith(`${prefix}/`) ? url.slice(prefix.length) : undefined);
    if (path === undefined) {
      unrouted.push(url);
      outgoing.writeHead(404).end();
      return;
    }
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: state.target,
        method: incoming.method,
        path,
        headers: incoming.headers,
      },
      (answer) => {
        for (const cookie of answer.headers['set-cookie'] ?? []) {
          cookiePaths.push(/;\s*path=([^;]*)/i.exec(cookie)?.[1] ?? '(none)');
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.writeHead(502).end());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    unrouted,
    cookiePaths,
    /** Exact paths outside the prefix routed to a path of the server. */
    routes,
    set target(value: number) {
      state.target = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}

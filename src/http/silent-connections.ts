import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';

/**
 * A graceful shutdown waits for every open connection, and Node counts a connection that has not sent
 * a request yet as busy (it waits for its headers). A client that connects and says nothing (an SSE
 * client reconnecting as it closes, a preconnecting proxy) would hold the shutdown until the headers
 * timeout. Such connections carry no request to finish, so the shutdown cuts them; connections that
 * have sent one are left to the graceful close.
 */
export function cutSilentConnectionsOnClose(app: FastifyInstance): void {
  const silent = new Set<Socket>();
  const server = app.server;
  const accepted = server instanceof TlsServer ? 'secureConnection' : 'connection';
  server.on(accepted, (socket: Socket) => {
    silent.add(socket);
    socket.once('close', () => silent.delete(socket));
  });
  server.on('request', (request: { socket: Socket }) => silent.delete(request.socket));
  app.addHook('preClose', async () => {
    for (const socket of silent) socket.destroy();
    silent.clear();
  });
}

/** How often, once the server closes, connections that have fallen idle are closed. */
const REAP_EVERY_MS = 100;

/**
 * Once the server closes (preClose): every answer still given says `Connection: close` (Fastify says
 * so only of a request that arrives after the close began, not of one already running), and
 * connections are closed as they fall idle. Node closes the idle ones once, when the close begins, so
 * a keep-alive connection whose request finished later stayed open until the keep-alive timeout, and
 * the shutdown waited out its whole grace period for a client that had its answer. `closing()` is for
 * the hook that sends the answers.
 */
export function endConnectionsAsTheyFinish(app: FastifyInstance): { closing(): boolean } {
  let closing = false;
  let reaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    reaper = setInterval(() => app.server.closeIdleConnections(), REAP_EVERY_MS);
    reaper.unref();
  });
  app.addHook('onClose', async () => clearInterval(reaper));
  return { closing: () => closing };
}

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

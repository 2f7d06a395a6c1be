/**
 * The baseline of every HTTP benchmark: a bare Fastify route (no logger, no hooks, no schema) at the
 * same path as the endpoint under test, sending the very bytes the full stack sent (serialised once,
 * with the same content type). Whatever the full stack costs beyond this is auth, rate limiting,
 * logging, validation, database and serialisation.
 * Runs as a child process: see bench/lib/server-process.ts.
 */
import Fastify from 'fastify';
import { serveFromChild } from './lib/child.ts';

export interface BaselineInit {
  /** A route pattern such as /v1/locations/:slug/services. */
  route: string;
  /** The full stack's response body, as sent. */
  body: string;
}

export interface BaselineInfo {
  origin: string;
}

serveFromChild<BaselineInit, BaselineInfo>(async ({ route, body }) => {
  const app = Fastify({ logger: false });
  app.get(route, (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { info: { origin }, close: () => app.close() };
});

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../data/database.ts';
import { ErrorEnvelope } from '../resources/common.ts';

/** GET /healthz: 200 when the database answers, 503 otherwise. No key, no HTTPS rule (load balancers). */
export function healthRoutes(db: Db): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/healthz',
      {
        schema: { hide: true, response: { 200: z.object({ status: z.literal('ok') }), 503: ErrorEnvelope } },
      },
      async (request, reply) => {
        try {
          await sql`select 1`.execute(db);
          return { status: 'ok' as const };
        } catch (error) {
          request.log.error({ err: error }, 'health check failed');
          return reply
            .code(503)
            .send({ error: { code: 'server_error', message: 'The database is not reachable.' } });
        }
      },
    );
  };
}

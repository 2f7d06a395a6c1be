import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../app/deps.ts';
import { checkDatabase } from '../../app/health-service.ts';
import { ErrorEnvelope } from '../../contract/common.ts';

/**
 * GET /healthz: 200 when the database answers and can write, 503 otherwise (with the reason logged).
 * No key, no HTTPS rule (load balancers).
 */
export function healthRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/healthz',
      {
        schema: { hide: true, response: { 200: z.object({ status: z.literal('ok') }), 503: ErrorEnvelope } },
      },
      async (request, reply) => {
        try {
          await checkDatabase(deps.db);
          return { status: 'ok' as const };
        } catch (error) {
          request.log.error({ err: error }, 'health check failed');
          return reply.code(503).send({
            error: { code: 'database_unavailable', message: 'The database cannot be read or written.' },
          });
        }
      },
    );
  };
}

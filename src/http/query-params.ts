import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';

/**
 * For the REST API (registered in its scope): an optional query parameter sent empty (`?staff_id=`,
 * what a form or a URL template leaves where it has nothing) is the parameter left out, as the
 * OpenAPI document says (allowEmptyValue). A required one sent empty meets its own rule and is
 * refused naming it; so is an unknown one, empty or not.
 */
export function leaveOutEmptyOptionalQuery(app: FastifyInstance): void {
  // Attached to the operations that take optional parameters only, before their validation.
  app.addHook('onRoute', (route) => {
    const optional = optionalMembersOf(route.schema?.querystring);
    if (optional.length === 0) return;
    const leaveOut = (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
      const query = request.query as Record<string, unknown>;
      for (const name of optional) if (query[name] === '') delete query[name];
      done();
    };
    route.preValidation = [leaveOut, ...[route.preValidation ?? []].flat()];
  });
}

/** The members of a query schema (zod, through fastify-type-provider-zod) that may be left out. */
function optionalMembersOf(schema: unknown): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, member]) => member.safeParse(undefined).success)
    .map(([name]) => name);
}

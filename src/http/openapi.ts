import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';

export const OPENAPI_PATH = '/v1/openapi.json';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests, so it cannot
 * drift from what the routes accept. Must be registered before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Appointment Booking REST API',
        version: '1.0.0-alpha',
        description:
          'Locations, services, staff, availability, clients and bookings of one organisation, for AI phone ' +
          'receptionists and integrations. Every error uses the envelope {error: {code, message, param?}}.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'bk_…' } },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => withoutUnusedSchemas(jsonSchemaTransformObject(input) as OpenApiDocument),
  });
}

type OpenApiDocument = Partial<OpenAPIV3_1.Document>;

/**
 * The transformer emits an input and an output variant of every named schema; drop those that no
 * path refers to (today the *Input twins of response-only schemas), so the document lists only what
 * it uses.
 */
function withoutUnusedSchemas(document: OpenApiDocument): OpenApiDocument {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  const pending = [JSON.stringify(document.paths ?? {})];
  while (pending.length > 0) {
    for (const [, name] of pending.pop()!.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (name && !used.has(name) && schemas[name]) {
        used.add(name);
        pending.push(JSON.stringify(schemas[name]));
      }
    }
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...document, components: { ...document.components, schemas: kept } };
}

export function serveOpenApi(app: FastifyInstance): void {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}

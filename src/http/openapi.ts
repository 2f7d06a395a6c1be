import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { OpenAPIV3_1 } from 'openapi-types';
import { schemaTakesNoBody } from './json-body.ts';
import { responseHeaders, responsesEveryOperationMayGive } from './openapi-responses.ts';
import { webhookOperations } from './openapi-webhooks.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests, so it cannot
 * drift from what the routes accept. Must be registered before the routes it describes.
 *
 * What the generator leaves out is added here, for every operation alike: the answers any request may
 * get before its route runs (405, 408, 417, 431; 413 wherever a body is read), the headers every
 * answer carries (X-Request-Id and the rate-limit headers; Retry-After with 429, Allow with 405), that
 * an optional query parameter may be sent empty (allowEmptyValue), and where the API is served
 * (PUBLIC_BASE_URL, or this server). The component schemas are plain JSON Schema 2020-12: the
 * generator's `$id`s ("#/components/schemas/X", a fragment, which 2020-12 forbids) and `$schema`s go.
 */
export async function registerOpenApi(app: FastifyInstance, publicBaseUrl: string | null): Promise<void> {
  // The generator marks every requestBody required; these operations' bodies are optional.
  const optionalBodies = new Set<string>();
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
      servers: [{ url: publicBaseUrl ?? '/', description: 'This server (paths include /v1).' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'bk_…' } },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: (input) => {
      const { body, operationId } = (input.schema ?? {}) as { body?: unknown; operationId?: string };
      if (operationId && schemaTakesNoBody(body)) optionalBodies.add(operationId);
      return jsonSchemaTransform(input);
    },
    transformObject: (input) =>
      completed(
        withoutUnusedSchemas({
          ...(jsonSchemaTransformObject(input) as OpenApiDocument),
          webhooks: webhookOperations(),
        }),
        optionalBodies,
      ),
  });
}

type OpenApiDocument = Partial<OpenAPIV3_1.Document>;
type Operation = OpenAPIV3_1.OperationObject;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Plain component schemas, the shared responses and headers, and both added to every operation; the
 * requestBody of the operations in `optionalBodies` not required.
 */
function completed(document: OpenApiDocument, optionalBodies: ReadonlySet<string>): OpenApiDocument {
  const schemas = Object.fromEntries(
    Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => {
      const { $id: _id, $schema: _schema, ...plain } = schema as Record<string, unknown>;
      return [name, plain];
    }),
  );
  const shared = responsesEveryOperationMayGive();
  for (const operations of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = operations?.[method] as Operation | undefined;
      if (!operation) continue;
      if (
        operation.requestBody &&
        'required' in operation.requestBody &&
        optionalBodies.has(operation.operationId ?? '')
      ) {
        operation.requestBody.required = false;
      }
      // An optional query parameter sent empty is the parameter left out (query-params.ts).
      for (const parameter of operation.parameters ?? []) {
        if ('in' in parameter && parameter.in === 'query' && parameter.required !== true) {
          parameter.allowEmptyValue = true;
        }
      }
      // A body over the limit is refused as it is read, before the route: an operation's own 413 stays.
      const readsBody = method !== 'get' && method !== 'head' && !operation.responses?.['413'];
      operation.responses = {
        ...operation.responses,
        ...(readsBody && shared.bodyRead),
        ...shared.references,
      };
      const keyed = (operation.parameters ?? []).some(
        (parameter) =>
          'in' in parameter &&
          parameter.in === 'header' &&
          parameter.name.toLowerCase() === 'idempotency-key',
      );
      for (const [status, response] of Object.entries(operation.responses)) {
        if ('$ref' in response) continue;
        response.headers = {
          ...response.headers,
          ...responseHeaders(Number(status)),
          // An answer stored under the Idempotency-Key, given again (a 201, or a refusal that was stored).
          ...(keyed && Number(status) < 500 && { 'Idempotent-Replayed': REPLAYED_HEADER }),
        };
      }
    }
  }
  return {
    ...document,
    components: {
      ...document.components,
      schemas,
      responses: { ...document.components?.responses, ...shared.components },
      headers: { ...document.components?.headers, ...shared.headers },
    },
  };
}

const REPLAYED_HEADER: OpenAPIV3_1.HeaderObject = {
  description:
    "`true` when this is the answer stored under the request's Idempotency-Key, given again (the same key and body within 24 hours); absent otherwise.",
  required: false,
  schema: { type: 'string', enum: ['true'] },
};

/**
 * The transformer emits an input and an output variant of every named schema; drop those that no
 * path refers to (today the *Input twins of response-only schemas), so the document lists only what
 * it uses.
 */
function withoutUnusedSchemas(document: OpenApiDocument): OpenApiDocument {
  const schemas = document.components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  const pending = [JSON.stringify(document.paths ?? {}), JSON.stringify(document.webhooks ?? {})];
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

/**
 * Serves the document as published: what an answer carries (and a webhook, which sends the same
 * resources) says nothing of fields it does not list, as the contract has clients ignore unknown
 * response fields and fields may be added; request bodies keep `additionalProperties: false`, the
 * service refusing a field it does not take. `app.swagger()` stays strict, which the tests check real
 * answers against, so an undocumented field is still caught.
 */
export function serveOpenApi(app: FastifyInstance): void {
  let published: OpenApiDocument | undefined;
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => {
    published ??= openToAddedFields(app.swagger() as OpenApiDocument);
    return published;
  });
}

/** A copy of `document` whose answers' schemas, and the components they use, allow more fields. */
function openToAddedFields(strict: OpenApiDocument): OpenApiDocument {
  const document = JSON.parse(JSON.stringify(strict)) as OpenApiDocument;
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const answers: unknown[] = Object.values(document.components?.responses ?? {});
  for (const operations of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = operations?.[method] as Operation | undefined;
      if (operation?.responses) answers.push(operation.responses);
    }
  }
  // The components an answer names, and those they name in turn (no request body names one of them).
  const named = new Set<string>();
  const pending = [...answers];
  while (pending.length > 0) {
    for (const [, name] of JSON.stringify(pending.pop()).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (name && !named.has(name) && schemas[name]) {
        named.add(name);
        pending.push(schemas[name]);
      }
    }
  }
  for (const answer of answers) withoutClosedObjects(answer);
  for (const name of named) withoutClosedObjects(schemas[name]);
  return document;
}

/** Drops every `additionalProperties: false` in `value`, in place. */
function withoutClosedObjects(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) withoutClosedObjects(item);
  } else if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (object.additionalProperties === false) delete object.additionalProperties;
    for (const item of Object.values(object)) withoutClosedObjects(item);
  }
}

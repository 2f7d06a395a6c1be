import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
interface Operation {
  responses: Record<string, { content: Record<string, { schema: { $ref?: string } }> }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  security: unknown;
  components: {
    securitySchemes: Record<string, unknown>;
    schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } };
  };
}

let doc: OpenApiDocument;
beforeAll(async () => {
  t = await startTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = response.json();
});
afterAll(async () => {
  await t.close();
});

describe('the OpenAPI document', () => {
  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every endpoint implemented so far, with the bearer scheme', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/bookings',
      '/v1/bookings/{reference}',
      '/v1/bookings/{reference}/cancel',
      '/v1/clients',
      '/v1/clients/{client_id}',
      '/v1/clients/{client_id}/bookings',
      '/v1/locations',
      '/v1/locations/{slug}/availability',
      '/v1/locations/{slug}/info',
      '/v1/locations/{slug}/services',
      '/v1/locations/{slug}/staff',
      '/v1/messages',
    ]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents the authentication, rate-limit and fault errors of every operation', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of ['400', '401', '403', '429', '500']) {
          expect(operation.responses[status], `${method} ${path} ${status}`).toBeDefined();
          expect(operation.responses[status]?.content['application/json']?.schema.$ref).toBe(
            '#/components/schemas/Error',
          );
        }
      }
    }
  });

  it('lists every error code in the Error schema', () => {
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(ERROR_CODES);
  });
});

import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.ts';
import { OpenApiConformance } from '../helpers/openapi-conformance.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
type Json = Record<string, unknown>;
interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, { $ref: string }>;
  content: Record<string, { schema: { $ref?: string } }>;
}
interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string; schema: Json }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, Response>;
}
interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  security: unknown;
  components: {
    securitySchemes: Record<string, unknown>;
    responses: Record<string, Response>;
    headers: Record<string, Json>;
    schemas: Record<string, Json> & {
      Error: {
        properties: {
          error: { properties: { code: { enum: string[] }; reason: { description: string } } };
        };
      };
    };
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
      '/v1/bookings/protected-holds',
      '/v1/bookings/{reference}',
      '/v1/bookings/{reference}/cancel',
      '/v1/bookings/{reference}/send-link',
      '/v1/clients',
      '/v1/clients/{client_id}',
      '/v1/clients/{client_id}/bookings',
      '/v1/clients/{client_id}/usual',
      '/v1/locations',
      '/v1/locations/{slug}/availability',
      '/v1/locations/{slug}/info',
      '/v1/locations/{slug}/services',
      '/v1/locations/{slug}/staff',
      '/v1/messages',
      '/v1/waitlist',
      '/v1/waitlist/{id}',
      '/v1/webhook-endpoints',
      '/v1/webhook-endpoints/{id}',
      '/v1/webhook-endpoints/{id}/deliveries',
      '/v1/webhook-endpoints/{id}/test',
    ]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents the authentication, rate-limit, fault and storage errors of every operation', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(operation.responses['503']?.description, `${method} ${path}`).toContain(
          'database_unavailable',
        );
        for (const status of ['400', '401', '403', '429', '500', '503']) {
          expect(operation.responses[status], `${method} ${path} ${status}`).toBeDefined();
          expect(operation.responses[status]?.content['application/json']?.schema.$ref).toBe(
            '#/components/schemas/Error',
          );
        }
      }
    }
  });

  it('describes each webhook event under the top-level webhooks, its data the REST resource', () => {
    // biome-ignore lint/suspicious/noExplicitAny: the served document, read as JSON.
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: Record<string, any> }> }).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES, 'webhook.test'].sort());
    const created = webhooks['booking.created']!.post;
    expect(created.parameters.map((p: { name: string }) => p.name)).toEqual([
      'Booking-Event-Id',
      'Booking-Event-Type',
      'Booking-Delivery-Attempt',
      'Booking-Signature',
    ]);
    const body = created.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['id', 'type', 'created_at', 'organisation', 'data']);
    expect(body.properties.data.$ref).toBe('#/components/schemas/Booking');
    // What is sent: the capability links are always null in an event (docs/webhooks.md), which a
    // client generated from the document must be told, the Booking schema saying they may be URLs.
    for (const type of WEBHOOK_EVENT_TYPES.filter((type) => type.startsWith('booking.'))) {
      const data = webhooks[type]!.post.requestBody.content['application/json'].schema.properties.data;
      expect(data.description, type).toMatch(/payment_url and booking_page_url are always null/);
    }
    // Only the faces that make bookings are named: an import moves bookings, it makes none.
    expect(created.summary).not.toMatch(/import/);
    expect(
      webhooks['client.created']!.post.requestBody.content['application/json'].schema.properties.data.$ref,
    ).toBe('#/components/schemas/Client');
    expect(doc.components.schemas).toHaveProperty('Message');
  });

  it('describes the waitlist events’ data as the WaitlistEntry, the REST resource they carry', () => {
    // biome-ignore lint/suspicious/noExplicitAny: the served document, read as JSON.
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: Record<string, any> }> }).webhooks;
    for (const type of ['waitlist.offered', 'waitlist.claimed']) {
      const data = webhooks[type]!.post.requestBody.content['application/json'].schema.properties.data;
      expect(data.$ref, type).toBe('#/components/schemas/WaitlistEntry');
    }
    expect(doc.components.schemas).toHaveProperty('WaitlistEntry');
  });

  it('requires a body only where the service does (the cancel’s is optional)', () => {
    const required = Object.values(doc.paths).flatMap((operations) =>
      Object.values(operations)
        .filter((operation) => operation.requestBody)
        .map((operation) => [operation.operationId, operation.requestBody!.required ?? false] as const),
    );
    expect(Object.fromEntries(required)).toMatchObject({
      cancelBooking: false,
      createBooking: true,
      rescheduleBooking: true,
      registerClient: true,
    });
  });

  it('lists every error code in the Error schema', () => {
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toEqual(ERROR_CODES);
  });

  it('names series_clash among the conflicts of booking a series and of moving its following visits', () => {
    for (const [path, method] of [
      ['/v1/bookings', 'post'],
      ['/v1/bookings/{reference}', 'patch'],
    ] as const) {
      const conflict = doc.paths[path]![method]!.responses['409']!;
      const description =
        conflict.description ?? doc.components.responses[conflict.$ref!.split('/').pop()!]!.description;
      expect(description, `${method} ${path}`).toContain('series_clash');
    }
  });

  it("names every hold that needs more notice than the location's in the too_soon reason", () => {
    const reason = doc.components.schemas.Error.properties.error.properties.reason.description;
    const tooSoon = reason.slice(reason.indexOf('too_soon'), reason.indexOf('too_far_ahead'));
    for (const hold of ['deposit', 'card', 'code', 'waitlist offer']) expect(tooSoon).toContain(hold);
  });

  it('has component schemas that are valid JSON Schema 2020-12 (no $id fragments), each compiling strictly', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats.default(ajv);
    // Each component under an id of its own, its references to the others pointed at those ids.
    const idOf = (name: string) => `https://booking.test/schemas/${name}`;
    const pointed = (schema: unknown) =>
      JSON.parse(
        JSON.stringify(schema).replace(/"#\/components\/schemas\/([^"]+)"/g, (_, name) => `"${idOf(name)}"`),
      );
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      expect(schema, name).not.toHaveProperty('$id');
      expect(schema, name).not.toHaveProperty('$schema');
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
      ajv.addSchema({ ...pointed(schema), $id: idOf(name) });
    }
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.getSchema(idOf(name)), name).not.toThrow();
    }
  });

  it('names every operation and where it is served', () => {
    const ids = Object.values(doc.paths).flatMap((operations) =>
      Object.values(operations).map((operation) => operation.operationId),
    );
    expect(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)),
      String(ids),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('documents what any request may be answered before its route runs, and the headers of every answer', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const status of ['405', '408', '417', '431']) {
          expect(operation.responses[status]?.$ref, `${method} ${path} ${status}`).toMatch(
            /^#\/components\/responses\//,
          );
        }
        for (const [status, response] of Object.entries(operation.responses)) {
          const resolved = response.$ref
            ? doc.components.responses[response.$ref.split('/').at(-1)!]!
            : response;
          const headers = Object.keys(resolved.headers ?? {});
          expect(headers, `${method} ${path} ${status}`).toEqual(
            expect.arrayContaining([
              'X-Request-Id',
              'X-RateLimit-Limit',
              'X-RateLimit-Remaining',
              'X-RateLimit-Reset',
            ]),
          );
          if (status === '429') expect(headers).toContain('Retry-After');
          if (status === '405') expect(headers).toContain('Allow');
          // A replay of what is stored under an Idempotency-Key says so (bookings, protected holds).
          const keyed = (operation.parameters ?? []).some(
            (parameter: Json) => parameter.in === 'header' && parameter.name === 'idempotency-key',
          );
          if (keyed && (status === '201' || status === '409')) {
            expect(headers, `${method} ${path} ${status}`).toContain('Idempotent-Replayed');
          }
        }
      }
    }
    expect(doc.paths['/v1/bookings']!.post!.responses['201']!.headers!['Idempotent-Replayed']).toBeDefined();
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      [
        'Allow',
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Request-Id',
      ].sort(),
    );
  });

  it('documents the 413 of every operation that reads a body, as each answers one over 64 KiB', async () => {
    const tooLarge = JSON.stringify({ padding: 'x'.repeat(70_000) });
    const concrete = (path: string) =>
      path
        .replace('{reference}', 'AC-AAAAAA')
        .replace(/\{[a-z_]+\}/g, '00000000-0000-4000-8000-000000000001');
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations).filter((m) => m !== 'get' && m !== 'head')) {
        // t.request checks the answer against the document: an undocumented status fails here.
        const response = await t.request({
          method: method.toUpperCase() as 'POST',
          url: concrete(path),
          headers: { 'content-type': 'application/json' },
          payload: tooLarge,
        });
        expect(response.statusCode, `${method} ${path}`).toBe(413);
        expect(response.json().error.code).toBe('payload_too_large');
      }
    }
  });

  it('describes inputs no looser than the service takes them', async () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const client = ajv.compile(doc.components.schemas.NewClientInput as Json);
    const named = (first_name: string) => ({ first_name, last_name: 'Lee', phone: '+447911123456' });
    expect(client(named('A'.repeat(60)))).toBe(true);
    expect(client(named('A'.repeat(61)))).toBe(false);
    expect(client(named('   '))).toBe(false);
    expect(client(named('A\u0007B'))).toBe(false);
    expect(client({ ...named('Sam'), phone: '07911 123456' })).toBe(false);
    expect(client({ ...named('Sam'), phone: '+447911123456' })).toBe(true);
    expect(client({ first_name: 'Sam', last_name: 'Lee', email: 'not an e-mail' })).toBe(false);
    expect(client({ first_name: 'Sam', last_name: 'Lee', email: 'sam@example.com' })).toBe(true);

    const parameter = (path: string, method: string, name: string) =>
      ajv.compile(doc.paths[path]![method]!.parameters!.find((p) => p.name === name)!.schema);
    const date = parameter('/v1/locations/{slug}/availability', 'get', 'date');
    expect(date('2026-11-24')).toBe(true);
    expect(date('24/11/2026')).toBe(false);
    expect(date('2026-02-30')).toBe(false);
    const serviceIds = parameter('/v1/locations/{slug}/availability', 'get', 'service_ids');
    expect(serviceIds('0b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e')).toBe(true);
    expect(serviceIds('cut')).toBe(false);
    // A UUID of no RFC 4122 version or variant, which the service refuses, is refused here too.
    expect(serviceIds('0b5c1d5e-2f1a-0c3b-9d8e-7f6a5b4c3d2e')).toBe(false);
    expect(serviceIds('0b5c1d5e-2f1a-4c3b-cd8e-7f6a5b4c3d2e')).toBe(false);
    expect(serviceIds('0b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e,0b5c1d5e-2f1a-0c3b-9d8e-7f6a5b4c3d2e')).toBe(
      false,
    );
    const versionless = await t.request({
      method: 'GET',
      url: '/v1/locations/soho/availability?service_ids=0b5c1d5e-2f1a-0c3b-9d8e-7f6a5b4c3d2e&date=2026-11-24',
    });
    expect(versionless.statusCode, versionless.body).toBe(400);
    const phone = parameter('/v1/clients', 'get', 'phone');
    expect(phone('+447911123456')).toBe(true);
    expect(phone('07911123456')).toBe(false);
    const idempotencyKey = parameter('/v1/bookings', 'post', 'idempotency-key');
    expect(idempotencyKey('2f0c6c9e-8d5d-4a4f-9a5b-1f7c3e9d2b11')).toBe(true);
    expect(idempotencyKey('has space')).toBe(true);
    expect(idempotencyKey(' leading space')).toBe(false);
    expect(idempotencyKey('x'.repeat(256))).toBe(false);
    const booking = ajv.compile(doc.components.schemas.NewBookingInput as Json);
    const body = {
      location_slug: 'soho',
      service_ids: ['0b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e'],
      client_id: '1b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e',
      starts_at: '2026-11-24T10:00:00+00:00',
    };
    expect(booking(body)).toBe(true);
    expect(booking({ ...body, starts_at: '2026-11-24T10:00:00' })).toBe(false);
    expect(booking({ ...body, checkout_success_url: 'ftp://shop.example/' })).toBe(false);
  });
});

describe('the OpenAPI document’s answers', () => {
  it('leave room for fields added later, as clients ignore unknown ones, while requests refuse them', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'https://booking.test/doc.json', components: doc.components });
    const schema = (name: string) =>
      ajv.compile({ $ref: `https://booking.test/doc.json#/components/schemas/${name}` });
    const answered = JSON.stringify(doc.paths['/v1/locations']!.get!.responses['200']);
    expect(answered).not.toContain('"additionalProperties":false');
    for (const name of ['Booking', 'Location', 'Client', 'WaitlistEntry', 'WebhookEndpoint', 'Error']) {
      expect(JSON.stringify(doc.components.schemas[name]), name).not.toContain(
        '"additionalProperties":false',
      );
    }
    const error = schema('Error');
    expect(error({ error: { code: 'not_found', message: 'No.', hint: 'a field added later' } })).toBe(true);
    // A request still refuses a field it does not take, as the service does.
    const booking = schema('NewBookingInput');
    const body = {
      location_slug: 'soho',
      service_ids: ['0b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e'],
      client_id: '1b5c1d5e-2f1a-4c3b-9d8e-7f6a5b4c3d2e',
      starts_at: '2026-11-24T10:00:00+00:00',
    };
    expect(booking(body)).toBe(true);
    expect(booking({ ...body, colour: 'blue' })).toBe(false);
    expect(JSON.stringify(doc.components.schemas.NewClientInput)).toContain('"additionalProperties":false');
  });

  it('are still checked strictly in the tests: a field the document does not list is caught', async () => {
    const conformance = await OpenApiConformance.load(t.app);
    const answer = await t.app.inject({
      method: 'GET',
      url: '/v1/locations',
      headers: { authorization: `Bearer ${t.keys.readWrite}` },
    });
    expect(answer.statusCode).toBe(200);
    expect(() => conformance.check('GET', '/v1/locations', answer)).not.toThrow();
    const body = answer.json();
    const widened = { ...answer, json: () => ({ ...body, undocumented: true }) } as typeof answer;
    expect(() => conformance.check('GET', '/v1/locations', widened)).toThrow(/additional properties/);
  });
});

describe('the OpenAPI document behind PUBLIC_BASE_URL', () => {
  it('names PUBLIC_BASE_URL as its server', async () => {
    const own = await startTestApp({ http: { publicBaseUrl: 'https://book.salon.example' } });
    try {
      const served = (await own.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      expect(served.servers).toEqual([
        { url: 'https://book.salon.example', description: expect.any(String) },
      ]);
    } finally {
      await own.close();
    }
  });
});

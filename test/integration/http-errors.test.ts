import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await t.close();
});

const json = { 'content-type': 'application/json' };

function expectEnvelope(
  response: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
  code: string,
  param?: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['x-request-id']).toEqual(expect.any(String));
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const expected: Record<string, unknown> = { code, message: expect.any(String) };
  if (param !== undefined) expected.param = param;
  expect(response.json()).toEqual({ error: expected });
}

describe('the error envelope', () => {
  it('answers an unknown path with 404 not_found', async () => {
    expectEnvelope(await t.request({ method: 'GET', url: '/v1/nothing-here' }), 404, 'not_found');
    expectEnvelope(await t.request({ method: 'GET', url: '/' }), 404, 'not_found');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const response = await t.request({ method: 'DELETE', url: '/v1/locations' });
    expectEnvelope(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('GET, HEAD');
    const onParam = await t.request({ method: 'PUT', url: '/v1/locations/soho/services' });
    expectEnvelope(onParam, 405, 'method_not_allowed');
  });

  it('answers malformed JSON with invalid_request', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: json,
      payload: '{"first_name": "A",',
    });
    expectEnvelope(response, 400, 'invalid_request', 'body');
  });

  it('answers an empty JSON body with invalid_request', async () => {
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients', headers: json, payload: '' }),
      400,
      'invalid_request',
      'body',
    );
  });

  it('takes an empty JSON body as no body where the body is optional (cancel)', async () => {
    const ids = await catalogueIds(t.database.db);
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    expect(booked.statusCode).toBe(201);
    const response = await t.request({
      method: 'POST',
      url: `/v1/bookings/${booked.json().data.reference}/cancel`,
      headers: json,
      payload: '',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.status).toBe('cancelled');
  });

  it('takes a request without a body as one, whatever Content-Type an HTTP client put on it', async () => {
    // The contract asks for application/json on a request that sends a body; a POST without one (the
    // cancel's body is optional) is not refused for the type a client library sets on every request.
    const ids = await catalogueIds(t.database.db);
    for (const [i, type] of ['application/x-www-form-urlencoded', 'text/plain; charset=utf-8'].entries()) {
      const booked = await postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        client_id: ids.jo,
        starts_at: `2026-11-24T1${i}:00:00+00:00`,
      });
      expect(booked.statusCode).toBe(201);
      const response = await t.request({
        method: 'POST',
        url: `/v1/bookings/${booked.json().data.reference}/cancel`,
        headers: { 'content-type': type },
        payload: '',
      });
      expect(response.statusCode, type).toBe(200);
      expect(response.json().data.status).toBe('cancelled');
    }
    // A body that is there is still refused for not being JSON.
    expectEnvelope(
      await t.request({
        method: 'POST',
        url: '/v1/bookings/AC-AAAAAA/cancel',
        headers: { 'content-type': 'text/plain' },
        payload: 'reason=moving',
      }),
      400,
      'invalid_request',
      'Content-Type',
    );
  });

  it('takes an empty body on the operations that take none (DELETE, a test event, send-link)', async () => {
    const endpointOf = async () => {
      const created = await t.request({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        payload: { url: 'https://hooks.example.com/in', events: ['booking.created'] },
      });
      expect(created.statusCode, created.body).toBe(201);
      return created.json().data.id as string;
    };
    const id = await endpointOf();
    for (const headers of [json, { 'content-type': 'text/plain' }]) {
      const tested = await t.request({
        method: 'POST',
        url: `/v1/webhook-endpoints/${id}/test`,
        headers,
        payload: '',
      });
      expect(tested.statusCode, tested.body).toBe(202);
    }
    const ids = await catalogueIds(t.database.db);
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    const sent = await t.request({
      method: 'POST',
      url: `/v1/bookings/${booked.json().data.reference}/send-link`,
      headers: json,
      payload: '',
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const deleted = await t.request({
      method: 'DELETE',
      url: `/v1/webhook-endpoints/${id}`,
      headers: json,
      payload: '',
    });
    expect(deleted.statusCode, deleted.body).toBe(204);
    const other = await endpointOf();
    const deletedWithType = await t.request({
      method: 'DELETE',
      url: `/v1/webhook-endpoints/${other}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(deletedWithType.statusCode, deletedWithType.body).toBe(204);
  });

  it('refuses a body with fields on the operations that take none, naming the field', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: 'https://hooks.example.com/in', events: ['booking.created'] },
    });
    const id = created.json().data.id as string;
    expectEnvelope(
      await t.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${id}`, payload: { force: true } }),
      400,
      'invalid_request',
      'force',
    );
    expect((await t.request({ method: 'GET', url: `/v1/webhook-endpoints/${id}` })).statusCode).toBe(200);
    expectEnvelope(
      await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, payload: [1] }),
      400,
      'invalid_request',
      'body',
    );
    const ids = await catalogueIds(t.database.db);
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    });
    const url = `/v1/bookings/${booked.json().data.reference}/send-link`;
    // A caller that thinks it chooses the channel is told it does not, rather than sent both.
    expectEnvelope(
      await t.request({ method: 'POST', url, payload: { channel: 'sms' } }),
      400,
      'invalid_request',
      'channel',
    );
    // An empty object has no field to refuse.
    expect((await t.request({ method: 'POST', url, payload: {} })).statusCode).toBe(200);
  });

  it('answers a body that is not an object with invalid_request', async () => {
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients', headers: json, payload: '[1,2]' }),
      400,
      'invalid_request',
      'body',
    );
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients', headers: json, payload: 'null' }),
      400,
      'invalid_request',
      'body',
    );
  });

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
  ])('answers a %s body with invalid_request naming Content-Type', async (type) => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': type },
      payload: 'first_name=A',
    });
    expectEnvelope(response, 400, 'invalid_request', 'Content-Type');
  });

  it('answers a body without a content type with invalid_request naming Content-Type', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/clients',
      headers: { authorization: `Bearer ${t.keys.readWrite}` },
      payload: Buffer.from('{"first_name":"A"}'),
    });
    expectEnvelope(response, 400, 'invalid_request', 'Content-Type');
  });

  it('accepts application/json with a charset', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: JSON.stringify({ first_name: 'Al', last_name: 'Smith', email: 'al@example.com' }),
    });
    expect(response.statusCode).toBe(201);
  });

  it('answers a body over 64 KiB with 413 payload_too_large', async () => {
    const payload = JSON.stringify({
      first_name: 'A',
      last_name: 'B',
      email: 'a@example.com',
      pad: 'x'.repeat(70_000),
    });
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients', headers: json, payload }),
      413,
      'payload_too_large',
    );
  });

  it('names an unknown body field', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'A', last_name: 'B', email: 'a@example.com', nickname: 'Z' },
    });
    expectEnvelope(response, 400, 'invalid_request', 'nickname');
  });

  it('words a refused field for an API user: its name and what it takes, never zod’s own English', async () => {
    const ids = await catalogueIds(t.database.db);
    const booking = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-24T10:00:00+00:00',
    };
    const cases: Array<[string, string, unknown, string, string]> = [
      [
        'POST',
        '/v1/clients',
        { first_name: 5, last_name: 'Tester' },
        'first_name',
        'first_name must be a string, not a number.',
      ],
      [
        'POST',
        '/v1/clients',
        { last_name: 'Tester', phone: '+447911123000' },
        'first_name',
        'first_name is required and must be a string.',
      ],
      [
        'POST',
        '/v1/clients',
        { first_name: '', last_name: 'Tester' },
        'first_name',
        'first_name must not be empty.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, service_ids: 'cut' },
        'service_ids',
        'service_ids must be an array, not a string.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, service_ids: [ids.services.cut, ids.services.cut] },
        'service_ids',
        'service_ids: must not name a service twice.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, client_id: 'jo' },
        'client_id',
        'client_id must be a UUID, e.g. 3bfb2d49-4b43-512b-ab21-fcee7c1755e2.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, starts_at: '2026-11-24 10:00' },
        'starts_at',
        'starts_at must be an ISO 8601 date and time with its UTC offset, e.g. 2026-11-24T10:00:00+00:00.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, repeat: { every_weeks: 40, count: 2 } },
        'repeat',
        'repeat.every_weeks must be at most 12.',
      ],
      [
        'POST',
        '/v1/bookings',
        // zod's safe-integer range is checked too: the field's own bounds are what is said.
        { ...booking, repeat: { every_weeks: 1e308, count: -1e308 } },
        'repeat',
        'repeat.every_weeks must be at most 12. repeat.count must be at least 2.',
      ],
      [
        'POST',
        '/v1/bookings',
        { ...booking, repeat: { every_weeks: 1.5, count: 2 } },
        'repeat',
        'repeat.every_weeks must be a whole number (an integer).',
      ],
      [
        'POST',
        '/v1/waitlist',
        {
          location_slug: 'soho',
          service_ids: [ids.services.cut],
          client_id: ids.jo,
          from_date: '2026-11-24',
          to_date: '2026-11-25',
          times: ['night'],
        },
        'times',
        'times[0] must be one of morning, afternoon, evening.',
      ],
    ];
    for (const [method, url, payload, param, message] of cases) {
      const response = await t.request({
        method: method as 'POST',
        url,
        headers: json,
        payload: JSON.stringify(payload),
      });
      expectEnvelope(response, 400, 'invalid_request', param);
      expect(response.json().error.message, JSON.stringify(payload)).toBe(message);
    }
    // Every bad field is named, the first one in param; an unknown one is said to be unknown.
    const several = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: json,
      payload: JSON.stringify({ first_name: true, last_name: null, nickname: 'Jo' }),
    });
    expectEnvelope(several, 400, 'invalid_request', 'first_name');
    expect(several.json().error.message).toBe(
      'first_name must be a string, not true. last_name must be a string, not null. nickname is not a field this endpoint takes; remove it.',
    );
    const query = await t.request({ method: 'GET', url: '/v1/locations/soho/availability' });
    expectEnvelope(query, 400, 'invalid_request', 'service_ids');
    expect(query.json().error.message).toBe('service_ids is required. date is required.');
    const twice = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/availability?service_ids=${ids.services.cut},${ids.services.cut}&date=2026-11-24`,
    });
    expectEnvelope(twice, 400, 'invalid_request', 'service_ids');
    expect(twice.json().error.message).toBe('service_ids: must not name a service twice.');
    const unknown = await t.request({ method: 'GET', url: '/v1/locations?limt=5' });
    expect(unknown.json().error.message).toBe(
      'limt is not a query parameter this endpoint takes; remove it.',
    );
  });

  it('refuses prototype poisoning, naming the key (the body is JSON), and creates no client', async () => {
    const body = (key: string) =>
      `{"first_name":"A","last_name":"B","email":"a@example.com","nested":{${key}}}`;
    for (const [key, named] of [
      ['"__proto__":{"admin":true}', '__proto__'],
      ['"constructor":{"prototype":{"admin":true}}', 'constructor.prototype'],
    ]) {
      const response = await t.request({
        method: 'POST',
        url: '/v1/clients',
        headers: json,
        payload: body(key!),
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toEqual({
        code: 'invalid_request',
        message: `The body holds the key ${named}, which is not accepted.`,
        param: 'body',
      });
    }
    const found = await t.request({ method: 'GET', url: '/v1/clients?email=a%40example.com' });
    expect(found.statusCode).toBe(404);
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients', headers: json, payload: '{"first_name":' }),
      400,
      'invalid_request',
      'body',
    );
  });

  it('names an invalid query parameter, and an unknown one', async () => {
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/locations?limit=abc' }),
      400,
      'invalid_request',
      'limit',
    );
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/locations?limit=101' }),
      400,
      'invalid_request',
      'limit',
    );
    // Decimal digits only: Number() would read each of these as 5 (an empty limit is none:
    // http-empty-query.test.ts).
    for (const limit of ['%2B5', '5e0', '0x5', '5.0', '%205']) {
      expectEnvelope(
        await t.request({ method: 'GET', url: `/v1/locations?limit=${limit}` }),
        400,
        'invalid_request',
        'limit',
      );
    }
    expect((await t.request({ method: 'GET', url: '/v1/locations?limit=05' })).statusCode).toBe(200);
    // However many digits, a number past the bound is said to be too big; a parameter given twice is
    // said to be given twice.
    const said = async (url: string) => {
      const response = await t.request({ method: 'GET', url });
      expectEnvelope(response, 400, 'invalid_request', 'limit');
      return response.json().error.message;
    };
    expect(await said('/v1/locations?limit=99999999999999999999999')).toBe('limit must be at most 100.');
    expect(await said('/v1/locations?limit=1&limit=2')).toBe('limit is given 2 times; give it once.');
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/locations?limt=5' }),
      400,
      'invalid_request',
      'limt',
    );
    // Endpoints that take no query parameters refuse one too, rather than ignore it.
    const client = { first_name: 'Query', last_name: 'Tester', phone: '+447700900123' };
    expectEnvelope(
      await t.request({ method: 'POST', url: '/v1/clients?dry_run=1', payload: client }),
      400,
      'invalid_request',
      'dry_run',
    );
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/bookings/AC-AAAAAA?expand=client' }),
      400,
      'invalid_request',
      'expand',
    );
  });

  it('refuses a NUL character in the URL or the body, which PostgreSQL cannot store or compare, naming the parameter', async () => {
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/bookings/AC-%00' }),
      400,
      'invalid_request',
      'reference',
    );
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/locations/soho%00/services' }),
      400,
      'invalid_request',
      'slug',
    );
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/clients?phone=%2B447911123000&email=a%00b%40example.com' }),
      400,
      'invalid_request',
      'email',
    );
    // A parameter's name is no parameter's value: the URL's.
    expectEnvelope(
      await t.request({ method: 'GET', url: '/v1/locations?x%00=1' }),
      400,
      'invalid_request',
      'url',
    );
    const withNul = '{"first_name":"A","last_name":"B\\u0000","phone":"+447911123000"}';
    const refused = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: withNul,
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(refused, 400, 'invalid_request', 'last_name');
    expect(refused.json().error.message).toBe('last_name holds a NUL character (\\u0000); send text only.');
    // Deep in a field's value, the field; in a key of the body itself, or a body that is no object, the body.
    for (const [payload, param] of [
      ['{"location_slug":"soho","service_ids":["\\u0000"]}', 'service_ids'],
      ['{"repeat":{"count":"\\u0000"}}', 'repeat'],
      ['{"\\u0000":1}', 'body'],
      ['["\\u0000"]', 'body'],
    ] as const) {
      expectEnvelope(
        await t.request({
          method: 'POST',
          url: '/v1/bookings',
          payload,
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'invalid_request',
        param,
      );
    }
    // An escaped backslash before "u0000" is plain text, and accepted.
    const plain = '{"first_name":"A\\\\u0000","last_name":"B","phone":"+447911123001"}';
    const created = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: plain,
      headers: { 'content-type': 'application/json' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().data.first_name).toBe('A\\u0000');
  });

  it('answers a fault with 500 server_error and no detail', async () => {
    await t.database.db.schema
      .dropTable('staff_locations')
      .execute()
      .catch(() => undefined);
    await t.database.db.schema.alterTable('staff').renameTo('staff_gone').execute();
    const response = await t.request({ method: 'GET', url: '/v1/locations/soho/staff' });
    expectEnvelope(response, 500, 'server_error');
    expect(response.body).not.toMatch(/staff_gone|sqlite|no such table/i);
  });

  it('keeps a caller’s plain X-Request-Id and replaces anything else', async () => {
    const kept = await t.request({
      method: 'GET',
      url: '/v1/locations',
      headers: { 'x-request-id': 'call-42.a_b' },
    });
    expect(kept.headers['x-request-id']).toBe('call-42.a_b');
    const replaced = await t.request({
      method: 'GET',
      url: '/v1/locations',
      headers: { 'x-request-id': 'bad id\twith spaces' },
    });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives every response a distinct request id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++)
      ids.add(String((await t.request({ method: 'GET', url: '/v1/locations' })).headers['x-request-id']));
    expect(ids.size).toBe(5);
  });
});

describe('requests refused before authentication', () => {
  const expectAddressWindow = (response: { headers: Record<string, unknown> }) => {
    // No key was read: the window that applies is the address's failed authentications.
    expect(response.headers['x-ratelimit-limit']).toBe(String(t.deps.limits.failedAuthPerMinute));
    expect(response.headers['x-ratelimit-remaining']).toBe(String(t.deps.limits.failedAuthPerMinute));
    expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  };

  it('carry the rate-limit headers: an unknown path, a wrong method, a NUL, a missing key', async () => {
    for (const [method, url, status] of [
      ['GET', '/v1/nothing-here', 404],
      ['GET', '/nothing-here', 404],
      ['DELETE', '/v1/locations', 405],
      ['GET', '/v1/bookings/AC-%00', 400],
    ] as const) {
      const response = await t.request({ method, url, key: null });
      expect(response.statusCode, `${method} ${url}`).toBe(status);
      expectAddressWindow(response);
    }
    const keyless = await t.request({ method: 'GET', url: '/v1/locations', key: null });
    expect(keyless.statusCode).toBe(401);
    expect(keyless.headers['x-ratelimit-remaining']).toBe(String(t.deps.limits.failedAuthPerMinute - 1));
  });

  it('answer QUERY, which no endpoint takes, with 405 and Allow, without Fastify’s own codes', async () => {
    for (const headers of [{}, { 'content-type': 'application/json' }]) {
      const response = await t.request({
        method: 'QUERY' as 'GET',
        url: '/v1/locations',
        headers,
        key: null,
      });
      expectEnvelope(response, 405, 'method_not_allowed');
      expect(response.headers.allow).toBe('GET, HEAD');
      expect(response.body).not.toContain('FST_');
      expectAddressWindow(response);
    }
  });

  it('tell a wrong method from an unknown path whatever the length of a path parameter', async () => {
    for (const length of [6, 101, 300, 500]) {
      const reference = 'A'.repeat(length);
      const wrong = await t.request({ method: 'DELETE', url: `/v1/bookings/${reference}` });
      expectEnvelope(wrong, 405, 'method_not_allowed');
      expect(wrong.headers.allow, String(length)).toBe('GET, HEAD, PATCH');
      // GET is routed, and a reference no booking has is not found, however long (the contract's 404).
      const read = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
      expect(read.statusCode, String(length)).toBe(404);
      expect(read.json().error.code).toBe('not_found');
    }
  });

  it('answer a location slug no location has with 404 however long, in a path or in a body', async () => {
    const ids = await catalogueIds(t.database.db);
    for (const length of [7, 200, 201, 300, 500]) {
      const slug = 'a'.repeat(length);
      for (const tail of [
        'services',
        'staff',
        'info',
        `availability?service_ids=${ids.services.cut}&date=2030-01-07`,
      ]) {
        const read = await t.request({ method: 'GET', url: `/v1/locations/${slug}/${tail}` });
        expect(read.statusCode, `${length} ${tail}`).toBe(404);
        expect(read.json().error, `${length} ${tail}`).toMatchObject({ code: 'not_found', param: 'slug' });
      }
      for (const [url, payload] of [
        [
          '/v1/bookings',
          {
            location_slug: slug,
            service_ids: [ids.services.cut],
            client_id: ids.jo,
            starts_at: '2030-01-07T10:00:00Z',
          },
        ],
        [
          '/v1/waitlist',
          {
            location_slug: slug,
            service_ids: [ids.services.cut],
            client_id: ids.jo,
            from_date: '2030-01-07',
            to_date: '2030-01-07',
          },
        ],
        ['/v1/messages', { caller_name: 'Dee', message: 'Call me back', location_slug: slug }],
      ] as const) {
        const posted = await t.request({ method: 'POST', url, payload });
        expect(posted.statusCode, `${length} ${url}: ${posted.body}`).toBe(404);
        expect(posted.json().error, `${length} ${url}`).toMatchObject({
          code: 'not_found',
          param: 'location_slug',
        });
        // Quoted short: a slug of 60 KB is not written back whole.
        expect(posted.json().error.message.length, `${length} ${url}`).toBeLessThan(120);
      }
    }
  });
});

describe('health', () => {
  it('answers 200 while the database is reachable and 503 when it is not', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    await t.database.close();
    const down = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(down.statusCode).toBe(503);
    expect(down.json().error.code).toBe('database_unavailable');
  });
});

// PostgreSQL's own disk_full (53100), raised by the server as it would be when a file cannot grow; the
// real full disk of SQLite is test/e2e/disk-full.test.ts.
describe.runIf(onPostgres)('a write the storage refuses', () => {
  it('is 503 database_unavailable in REST and the same hint in MCP, as /healthz says, and keeps nothing', async () => {
    await sql`CREATE FUNCTION refuse_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`.execute(
      t.database.db,
    );
    for (const table of ['clients', 'messages']) {
      await sql`CREATE TRIGGER disk_full BEFORE INSERT ON ${sql.table(table)}
        FOR EACH ROW EXECUTE FUNCTION refuse_disk_full()`.execute(t.database.db);
    }
    const message =
      'The database cannot store changes just now (its disk is full or failing); nothing was changed. Try again later.';
    const refused = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Disk', last_name: 'Full', email: 'full@example.com' },
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({ error: { code: 'database_unavailable', message } });
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(503);
    const found = await t.request({ method: 'GET', url: '/v1/clients?email=full%40example.com' });
    expect(found.statusCode).toBe(404);

    // The tool's fault is logged (the storage's own error), and the agent hears the hint.
    const tool = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${t.keys.readWrite}`, accept: 'application/json, text/event-stream' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'take_message', arguments: { caller_name: 'Disk', message: 'Call me back' } },
      },
    });
    expect(tool.json().result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: `${ERROR_CATALOGUE.database_unavailable.hint} ${message}` }],
    });
  });
});

import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, countBookings, postBooking } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * `null` for an optional body field is the field omitted (docs/api.md, Rules): clients written by a
 * language model, and strict function calling, send null for every field they have nothing for. A
 * required field's null stays a 400 naming it. The small catalogue (Ana does cuts at Soho on Mondays
 * and Tuesdays); Monday 23 November 2026, 09:00 in London.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp({
    limits: { requestsPerMinute: 100_000 },
    webhookDestinations: { allowInsecure: true, allowPrivateNetworks: false },
  });
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

const tue = (hhmm: string) => `2026-11-24T${hhmm}:00+00:00`;
const cut = (startsAt: string, extra: Record<string, unknown> = {}) => ({
  location_slug: 'soho',
  service_ids: [ids.services.cut],
  client_id: ids.jo,
  starts_at: startsAt,
  ...extra,
});
const NULL_OPTIONALS = {
  staff_id: null,
  notes: null,
  checkout_success_url: null,
  checkout_cancel_url: null,
  repeat: null,
};

describe('POST /v1/bookings', () => {
  it('takes null for every optional field as the field omitted', async () => {
    const response = await postBooking(t, cut(tue('10:00'), NULL_OPTIONALS));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data).toMatchObject({
      status: 'confirmed',
      staff_id: ids.staff.ana, // the any-staff rule's choice
      notes: null,
      series_id: null,
    });
  });

  it.each(['location_slug', 'service_ids', 'client_id', 'starts_at'])(
    'refuses null for the required %s, naming it',
    async (field) => {
      const before = await countBookings(t.database.db);
      const response = await postBooking(t, cut(tue('11:00'), { [field]: null }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'invalid_request', param: field });
      expect(await countBookings(t.database.db)).toBe(before);
    },
  );

  it('replays a body with null for a field as the body without it, and the other way round', async () => {
    const omitted = cut(tue('12:00'));
    const key = randomUUID();
    const first = await postBooking(t, omitted, { idempotencyKey: key });
    expect(first.statusCode, first.body).toBe(201);
    const before = await countBookings(t.database.db);
    const nulls = await postBooking(t, { ...omitted, ...NULL_OPTIONALS }, { idempotencyKey: key });
    expect(nulls.statusCode, nulls.body).toBe(201);
    expect(nulls.headers['idempotent-replayed']).toBe('true');
    expect(nulls.json()).toEqual(first.json());

    const otherKey = randomUUID();
    const withNull = cut(tue('13:00'), { notes: null });
    expect((await postBooking(t, withNull, { idempotencyKey: otherKey })).statusCode).toBe(201);
    const without = await postBooking(t, cut(tue('13:00')), { idempotencyKey: otherKey });
    expect(without.statusCode).toBe(201);
    expect(without.headers['idempotent-replayed']).toBe('true');
    expect(await countBookings(t.database.db)).toBe(before + 1);

    // Null is no note, which a note is not.
    const noted = await postBooking(t, cut(tue('13:00'), { notes: 'Fringe' }), { idempotencyKey: otherKey });
    expect(noted.statusCode).toBe(409);
    expect(noted.json().error.code).toBe('idempotency_key_reused');
  });
});

describe('PATCH /v1/bookings/{reference} and POST /v1/bookings/{reference}/cancel', () => {
  it('keep the staff member for staff_id null (a booking always has one), and take null as omitted', async () => {
    const booked = await postBooking(t, cut(tue('14:00')));
    const { reference, staff_id } = booked.json().data;
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: tue('15:00'), staff_id: null, dry_run: null, scope: null },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toMatchObject({
      starts_at: tue('15:00'),
      staff_id,
      change: { dry_run: false },
    });

    const noStart = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: null },
    });
    expect(noStart.statusCode).toBe(400);
    expect(noStart.json().error).toMatchObject({ code: 'invalid_request', param: 'starts_at' });

    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: { reason: null, dry_run: null, scope: null },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', change: { dry_run: false } });
  });
});

describe('the other POST bodies', () => {
  it('POST /v1/clients: marketing_consent null is the default, false', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: {
        first_name: 'Sam',
        last_name: 'Lee',
        phone: null,
        email: 'sam@example.com',
        marketing_consent: null,
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data).toMatchObject({ phone: null, marketing_consent: false });
  });

  it('POST /v1/messages: no phone, reference or location', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/messages',
      payload: { caller_name: 'Sam', message: 'Call me', phone: null, reference: null, location_slug: null },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data).toMatchObject({ phone: null, reference: null, location_slug: null });
  });

  it('POST /v1/waitlist: any staff, a new client, any time of day', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: null,
        client_id: null,
        client: { first_name: 'Wai', last_name: 'Ting', email: 'wai@example.com', phone: null },
        from_date: '2026-11-30',
        to_date: '2026-12-01',
        times: null,
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data).toMatchObject({ staff_id: null, times: null });
  });

  it('POST /v1/webhook-endpoints: no description', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: { url: 'http://127.0.0.1:9/hook', events: ['booking.created'], description: null },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data.description).toBeNull();
  });
});

type Json = Record<string, unknown>;
interface Operation {
  requestBody?: { content?: Record<string, { schema: Json }> };
}

describe('the OpenAPI document', () => {
  it('says every optional body field takes null, and no required one does', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const schemas = doc.components.schemas as Record<string, Json>;
    const resolve = (schema: Json): Json => {
      const ref = schema.$ref;
      if (typeof ref === 'string') return resolve(schemas[ref.split('/').at(-1)!]!);
      const anyOf = schema.anyOf as Json[] | undefined;
      const object = anyOf?.find((member) => member.type === 'object' || member.$ref !== undefined);
      return object ? resolve(object) : schema;
    };
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const content = operation.requestBody?.content?.['application/json'];
        if (!content) continue;
        const body = resolve(content.schema);
        const required = new Set((body.required as string[] | undefined) ?? []);
        for (const [field, schema] of Object.entries(body.properties as Record<string, object>)) {
          // Beside the components, which its $refs ("#/components/schemas/...") point into.
          const takesNull = ajv.compile({ ...schema, components: { schemas } })(null);
          expect(takesNull, `${method.toUpperCase()} ${path} ${field}`).toBe(!required.has(field));
          checked.push(`${method} ${path} ${field}`);
        }
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'post /v1/bookings notes',
        'post /v1/bookings staff_id',
        'patch /v1/bookings/{reference} staff_id',
        'post /v1/bookings/{reference}/cancel reason',
        'post /v1/waitlist times',
        'post /v1/webhook-endpoints description',
      ]),
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An optional query parameter sent empty (`?staff_id=`, what a form or a URL template leaves when it
 * has nothing) is the parameter left out; a required one sent empty is still a 400 naming it. The
 * small catalogue (Ana works at Soho on Mondays and Tuesdays); Monday 23 November 2026, 09:00 in London.
 */
let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

const get = (url: string) => t.request({ method: 'GET', url });

describe('an empty optional query parameter', () => {
  it('is left out on GET availability (staff_id, days)', async () => {
    const base = `/v1/locations/soho/availability?service_ids=${ids.services.cut}&date=2026-11-24`;
    const omitted = await get(base);
    expect(omitted.statusCode, omitted.body).toBe(200);
    const empty = await get(`${base}&staff_id=&days=`);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toEqual(omitted.json());
  });

  it('is left out on the lists (cursor, limit, and the waitlist’s location_slug and status)', async () => {
    const services = await get('/v1/locations/soho/services?cursor=&limit=');
    expect(services.statusCode, services.body).toBe(200);
    expect(services.json()).toEqual((await get('/v1/locations/soho/services')).json());
    const waitlist = await get('/v1/waitlist?location_slug=&status=&cursor=&limit=');
    expect(waitlist.statusCode, waitlist.body).toBe(200);
  });

  it('is left out on GET /v1/clients: an empty phone beside an e-mail finds by the e-mail', async () => {
    const found = await get('/v1/clients?phone=&email=jo%40example.com');
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json().data.id).toBe(ids.jo);
    const neither = await get('/v1/clients?phone=&email=');
    expect(neither.statusCode).toBe(400);
    expect(neither.json().error.code).toBe('invalid_request');
  });
});

describe('an empty required query parameter', () => {
  it.each([
    ['date', `service_ids=${'{cut}'}&date=`],
    ['service_ids', 'service_ids=&date=2026-11-24'],
  ])('is a 400 naming %s', async (param, query) => {
    const response = await get(
      `/v1/locations/soho/availability?${query.replace('{cut}', ids.services.cut!)}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param });
  });

  it('is a 400 naming series_id on GET /v1/bookings', async () => {
    const response = await get('/v1/bookings?series_id=');
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'series_id' });
  });
});

describe('the OpenAPI document', () => {
  it('says an optional query parameter may be sent empty, and a required one may not', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const parameters = Object.values(
      doc.paths as Record<string, Record<string, { parameters?: Record<string, unknown>[] }>>,
    )
      .flatMap((operations) => Object.values(operations))
      .flatMap((operation) => operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'query');
    expect(parameters.length).toBeGreaterThan(0);
    for (const parameter of parameters) {
      expect(parameter.allowEmptyValue === true, String(parameter.name)).toBe(parameter.required !== true);
    }
  });
});

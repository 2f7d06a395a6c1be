import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAppDeps } from '../../src/app/deps.ts';
import { buildApp } from '../../src/http/build-app.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp({ catalogues: [smallCatalogue({ extraServices: 125 })] });
});
afterEach(async () => {
  await t.close();
});

async function walk(url: string, limit?: number) {
  const items: { id: string; name: string }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const params = new URLSearchParams();
    if (limit) params.set('limit', String(limit));
    if (cursor) params.set('cursor', cursor);
    const response = await t.request({ method: 'GET', url: `${url}?${params}` });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    items.push(...body.data);
    cursor = body.next_cursor;
    pages++;
  } while (cursor);
  return { items, pages };
}

describe('pagination', () => {
  it('walks 128 services in pages of 50 with no duplicates or gaps, sorted by name then id', async () => {
    const { items, pages } = await walk('/v1/locations/soho/services');
    expect(pages).toBe(3);
    expect(items).toHaveLength(128);
    expect(new Set(items.map((s) => s.id)).size).toBe(128);
    const offered = await t.database.db
      .selectFrom('service_locations')
      .innerJoin('services', 'services.id', 'service_locations.service_id')
      .innerJoin('locations', 'locations.id', 'service_locations.location_id')
      .select(['services.id', 'services.name'])
      .where('locations.slug', '=', 'soho')
      .execute();
    const expected = offered.sort((a, b) =>
      a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1,
    );
    expect(items.map((s) => s.id)).toEqual(expected.map((s) => s.id));
  });

  it('walks the same items with any page size', async () => {
    const all = (await walk('/v1/locations/soho/services', 100)).items.map((s) => s.id);
    const small = await walk('/v1/locations/soho/services', 7);
    expect(small.pages).toBe(Math.ceil(128 / 7));
    expect(small.items.map((s) => s.id)).toEqual(all);
  });

  it('omits next_cursor on the last page', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations?limit=100' });
    expect(response.json()).not.toHaveProperty('next_cursor');
  });

  it('keeps its place when items are added before it', async () => {
    const first = await t.request({ method: 'GET', url: '/v1/locations/soho/services?limit=10' });
    const firstIds = first.json().data.map((s: { id: string }) => s.id);
    // A service sorting first ("AAA") appears between the two pages: the walk neither repeats nor skips.
    const { organisation, locations } = await catalogueIds(t.database.db);
    const id = '00000000-0000-4000-8000-000000000001';
    await t.database.db
      .insertInto('services')
      .values({
        id,
        organisation_id: organisation,
        ref: 'aaa',
        name: 'AAA',
        category: null,
        duration_minutes: 10,
        buffer_after_minutes: 0,
        price_minor: 1,
        deposit_minor: null,
        online_bookable: 1,
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    await t.database.db
      .insertInto('service_locations')
      .values({
        organisation_id: organisation,
        service_id: id,
        location_id: locations.soho!,
        duration_minutes: null,
        price_minor: null,
        deposit_overridden: 0,
        deposit_minor: null,
        online_bookable: null,
      })
      .execute();
    const second = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/services?limit=10&cursor=${first.json().next_cursor}`,
    });
    const secondIds = second.json().data.map((s: { id: string }) => s.id);
    expect(secondIds).not.toContain(id);
    expect(secondIds.some((s: string) => firstIds.includes(s))).toBe(false);
  });
});

describe('cursors', () => {
  async function firstCursor(url = '/v1/locations/soho/services?limit=5') {
    return (await t.request({ method: 'GET', url })).json().next_cursor as string;
  }

  const expectCursorError = (response: { statusCode: number; json(): { error: unknown } }) => {
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  };

  it('refuses a tampered cursor', async () => {
    const cursor = await firstCursor();
    const [body, signature] = cursor.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    payload.k.name = 'A';
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
    expectCursorError(
      await t.request({ method: 'GET', url: `/v1/locations/soho/services?cursor=${forged}` }),
    );
    const flipped = `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`;
    expectCursorError(
      await t.request({ method: 'GET', url: `/v1/locations/soho/services?cursor=${flipped}` }),
    );
    expectCursorError(await t.request({ method: 'GET', url: '/v1/locations/soho/services?cursor=garbage' }));
  });

  it('refuses a cursor after an hour', async () => {
    const cursor = await firstCursor();
    t.clock.advance({ minutes: 59 });
    expect(
      (await t.request({ method: 'GET', url: `/v1/locations/soho/services?cursor=${cursor}` })).statusCode,
    ).toBe(200);
    t.clock.advance({ minutes: 1 });
    expectCursorError(
      await t.request({ method: 'GET', url: `/v1/locations/soho/services?cursor=${cursor}` }),
    );
  });

  it('refuses a cursor from another listing', async () => {
    const cursor = await firstCursor();
    expectCursorError(
      await t.request({ method: 'GET', url: `/v1/locations/kings-cross/services?cursor=${cursor}` }),
    );
    expectCursorError(await t.request({ method: 'GET', url: `/v1/locations/soho/staff?cursor=${cursor}` }));
    expectCursorError(await t.request({ method: 'GET', url: `/v1/locations?cursor=${cursor}` }));
  });
});

describe('cursor secrets stored per organisation (no BOOKING_SECRET)', () => {
  it('signs each organisation with its own stored secret, which every instance on the database reads', async () => {
    const stored = await startTestApp({
      catalogues: [smallCatalogue({ slug: 'org-a', extraServices: 60 }), smallCatalogue({ slug: 'org-b' })],
      secret: null,
    });
    // A second instance over the same database, started after the first has made its secrets.
    const other = await buildApp(
      createAppDeps({ db: stored.database.db, clock: stored.clock, secret: null }),
    );
    try {
      const keyB = await stored.keyFor('org-b', 'read');
      const first = await stored.request({ method: 'GET', url: '/v1/locations/soho/services?limit=5' });
      const cursor = first.json().next_cursor as string;
      expect(cursor).toEqual(expect.any(String));
      await stored.request({ key: keyB, method: 'GET', url: '/v1/locations' });

      const secrets = await stored.database.db
        .selectFrom('cursor_secrets')
        .innerJoin('organisations', 'organisations.id', 'cursor_secrets.organisation_id')
        .select(['organisations.slug', 'cursor_secrets.secret'])
        .orderBy('organisations.slug')
        .execute();
      expect(secrets.map((s) => s.slug)).toEqual(['org-a', 'org-b']);
      expect(secrets[0]!.secret).not.toBe(secrets[1]!.secret);
      expect(secrets[0]!.secret.length).toBeGreaterThanOrEqual(32);

      const next = await other.inject({
        method: 'GET',
        url: `/v1/locations/soho/services?limit=5&cursor=${cursor}`,
        headers: { authorization: `Bearer ${stored.keys.read}` },
      });
      expect(next.statusCode).toBe(200);
      expect(next.json().data).toHaveLength(5);

      // Signed with org-a's secret, so org-b's secret refuses it before the listing is even compared.
      const [body] = cursor.split('.');
      const resigned = `${body}.${createHmac('sha256', secrets[1]!.secret).update(body!).digest('base64url')}`;
      const foreign = await other.inject({
        method: 'GET',
        url: `/v1/locations/soho/services?limit=5&cursor=${resigned}`,
        headers: { authorization: `Bearer ${stored.keys.read}` },
      });
      expect(foreign.statusCode).toBe(400);
      expect(foreign.json().error.param).toBe('cursor');
    } finally {
      await other.close();
      await stored.close();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { expectRefusedBy } from '../helpers/database-refusal.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Two organisations with the same location slugs, service names and client phone: every endpoint
 * answers each key from its own organisation only.
 */
let t: TestApp;
let keyA: string;
let keyB: string;
beforeEach(async () => {
  const a = smallCatalogue({ slug: 'org-a', extraServices: 3 });
  const b = smallCatalogue({ slug: 'org-b' });
  b.locations[0]!.name = 'Soho (B)';
  b.locations.push({
    ref: 'b-only',
    slug: 'b-only',
    name: 'B only',
    timezone: 'Europe/Paris',
    active: true,
  } as never);
  b.clients[0]!.first_name = 'Bea';
  t = await startTestApp({ catalogues: [a, b] });
  keyA = t.keys.read;
  keyB = await t.keyFor('org-b', 'read_write');
});
afterEach(async () => {
  await t.close();
});

const ids = (response: { json(): { data: { id: string }[] } }) =>
  response
    .json()
    .data.map((x) => x.id)
    .sort();

async function orgIdOf(slug: string) {
  return (
    await t.database.db
      .selectFrom('organisations')
      .select('id')
      .where('slug', '=', slug)
      .executeTakeFirstOrThrow()
  ).id;
}

describe('organisation isolation', () => {
  it('lists only the caller’s locations', async () => {
    const a = await t.request({ method: 'GET', url: '/v1/locations', key: keyA });
    const b = await t.request({ method: 'GET', url: '/v1/locations', key: keyB });
    expect(
      a
        .json()
        .data.map((l: { name: string }) => l.name)
        .sort(),
    ).toEqual(['Kings Cross', 'Soho']);
    expect(
      b
        .json()
        .data.map((l: { name: string }) => l.name)
        .sort(),
    ).toEqual(['B only', 'Kings Cross', 'Soho (B)']);
    const dbA = await t.database.db
      .selectFrom('locations')
      .select('id')
      .where('organisation_id', '=', await orgIdOf('org-a'))
      .where('active', '=', 1)
      .execute();
    expect(ids(a)).toEqual(dbA.map((r) => r.id).sort());
    expect(ids(a).some((id: string) => ids(b).includes(id))).toBe(false);
  });

  it('resolves the same slug to each organisation’s own location, services and staff', async () => {
    for (const path of ['/v1/locations/soho/services', '/v1/locations/soho/staff']) {
      const a = await t.request({ method: 'GET', url: path, key: keyA });
      const b = await t.request({ method: 'GET', url: path, key: keyB });
      expect(a.statusCode).toBe(200);
      expect(b.statusCode).toBe(200);
      expect(ids(a).some((id: string) => ids(b).includes(id))).toBe(false);
    }
    const servicesA = await t.request({ method: 'GET', url: '/v1/locations/soho/services', key: keyA });
    expect(servicesA.json().data).toHaveLength(6);
  });

  it('hides another organisation’s location', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations/b-only/services', key: keyA });
    expect(response.statusCode).toBe(404);
  });

  it('finds only the caller’s client for a shared phone, and registers a separate one', async () => {
    const phone = encodeURIComponent('+447911123456');
    const a = await t.request({ method: 'GET', url: `/v1/clients?phone=${phone}`, key: keyA });
    const b = await t.request({ method: 'GET', url: `/v1/clients?phone=${phone}`, key: keyB });
    expect(a.json().data.first_name).toBe('Jo');
    expect(b.json().data.first_name).toBe('Bea');
    const newInA = await t.request({
      method: 'POST',
      url: '/v1/clients',
      key: t.keys.readWrite,
      payload: { first_name: 'New', last_name: 'Person', phone: '+447400123456' },
    });
    expect(newInA.statusCode).toBe(201);
    const lookupInB = await t.request({ method: 'GET', url: '/v1/clients?phone=%2B447400123456', key: keyB });
    expect(lookupInB.statusCode).toBe(404);
  });

  it('refuses a cursor issued to another organisation', async () => {
    const cursor = (
      await t.request({ method: 'GET', url: '/v1/locations/soho/services?limit=2', key: keyA })
    ).json().next_cursor;
    const response = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/services?limit=2&cursor=${cursor}`,
      key: keyB,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.param).toBe('cursor');
  });

  it('cannot link rows across organisations even by writing to the database directly', async () => {
    const orgA = await orgIdOf('org-a');
    const staffA = await t.database.db
      .selectFrom('staff')
      .select('id')
      .where('organisation_id', '=', orgA)
      .executeTakeFirstOrThrow();
    const serviceB = await t.database.db
      .selectFrom('services')
      .select('id')
      .where('organisation_id', '=', await orgIdOf('org-b'))
      .executeTakeFirstOrThrow();
    // The composite foreign key (organisation_id, service_id) finds no service of organisation A.
    await expectRefusedBy(
      t.database.db
        .insertInto('staff_services')
        .values({ organisation_id: orgA, staff_id: staffA.id, service_id: serviceB.id })
        .execute(),
      'foreign_key',
      { constraint: 'staff_services_service' },
    );
  });
});

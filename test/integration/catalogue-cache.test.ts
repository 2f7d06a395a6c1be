import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { type RecordedInstance, startRecordedInstance } from '../helpers/recorded-instance.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A booking's re-check reuses the catalogue reads of earlier requests that saw the same
 * catalogue_version (src/app/catalogue-cache.ts), and a change to the catalogue made elsewhere
 * (another instance, `booking import`) is seen by the very next request, whichever instance serves it.
 */
let t: TestApp;
let ids: CatalogueIds;
/** A second instance: its own connection to the database, every statement it runs noted. */
let instance: RecordedInstance;
let other: FastifyInstance;
let statements: string[];
const MINUTE = 60_000;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  instance = await startRecordedInstance(t);
  ({ app: other, statements } = instance);
});
afterAll(async () => {
  await instance.close();
  await t.close();
});

/** POST /v1/bookings for Ana's cut on Monday 30 November at `time` (London is on UTC then). */
function bookAna(app: 'this' | 'other', time: string) {
  const request = {
    method: 'POST' as const,
    url: '/v1/bookings',
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: `2026-11-30T${time}:00+00:00`,
    },
  };
  return app === 'this'
    ? t.request({ ...request, key: t.keys.readWrite })
    : other.inject({ ...request, headers: { authorization: `Bearer ${t.keys.readWrite}` } });
}

const CATALOGUE_TABLES =
  /"(locations|services|service_locations|staff|staff_services|staff_locations|staff_working_hours|staff_time_off|location_closures)"/;

describe('the catalogue reads of a booking', () => {
  it('are reused while the catalogue stays, and a change made elsewhere is seen at once', async () => {
    expect((await bookAna('other', '09:00')).statusCode).toBe(201);
    statements.length = 0;
    expect((await bookAna('other', '10:00')).statusCode).toBe(201);
    // The second booking of the same staff member and day read no catalogue table: only the key, the
    // client, a free reference, the turn, the bookings, and its writes.
    expect(statements.filter((sql) => CATALOGUE_TABLES.test(sql.split(/\bwhere\b/i)[0]!))).toEqual([]);

    // Time off for Ana from 13:00, written through the first instance's connection (as an import
    // would write it): the second instance refuses 13:00 at once, and books 12:00.
    await t.database.db
      .insertInto('staff_time_off')
      .values({
        id: crypto.randomUUID(),
        organisation_id: ids.organisation,
        staff_id: ids.staff.ana!,
        starts_at: Date.parse('2026-11-30T13:00:00Z'),
        ends_at: Date.parse('2026-11-30T13:00:00Z') + 120 * MINUTE,
        reason: 'Dentist',
      })
      .execute();
    const refused = await bookAna('other', '13:00');
    expect(refused.statusCode, refused.body).toBe(409);
    expect((await bookAna('other', '12:00')).statusCode).toBe(201);

    // Ana made inactive through the other connection: the first instance refuses her at once.
    await instance.db.updateTable('staff').set({ active: 0 }).where('id', '=', ids.staff.ana!).execute();
    const inactive = await bookAna('this', '15:00');
    expect(inactive.statusCode).toBe(400);
    expect(inactive.json().error.param).toBe('staff_id');
    await instance.db.updateTable('staff').set({ active: 1 }).where('id', '=', ids.staff.ana!).execute();
    expect((await bookAna('this', '15:00')).statusCode).toBe(201);
  });
});

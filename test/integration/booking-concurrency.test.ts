import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  bookingsAt,
  catalogueIds,
  countBookings,
  mondayBarber,
  postBooking,
} from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Many requests for one slot at once, in one process: the booking transaction re-checks the slot
 * under the write lock, so exactly one wins. The clock stands at Monday 2026-11-23 09:00Z.
 */
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const LIMITS = { requestsPerMinute: 100_000 };
const MONDAY_11 = '2026-11-23T11:00:00+00:00';

function tally(responses: LightMyRequestResponse[]) {
  const created = responses.filter((r) => r.statusCode === 201);
  const conflicts = responses.filter(
    (r) =>
      r.statusCode === 409 && r.json().error?.code === 'conflict' && r.json().error?.param === 'starts_at',
  );
  return { created, conflicts };
}

describe('concurrent POST /bookings', () => {
  it('lets exactly one of 50 requests for the same staff member and slot through', async () => {
    t = await startTestApp({ limits: LIMITS });
    const app = t;
    const ids = await catalogueIds(app.database.db);
    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: MONDAY_11,
    };
    const responses = await Promise.all(Array.from({ length: 50 }, () => postBooking(app, body)));
    const { created, conflicts } = tally(responses);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    const rows = await bookingsAt(app.database.db, ids.staff.ana!, MONDAY_11);
    expect(rows).toEqual([expect.objectContaining({ status: 'confirmed' })]);
    expect(rows[0]!.reference).toBe(created[0]!.json().data.reference);
    expect(await countBookings(app.database.db)).toBe(1);
  });

  it('gives each of the 4 free staff one of 12 any-staff requests and refuses the rest', async () => {
    const catalogue = smallCatalogue();
    catalogue.staff.push(...(['dee', 'eve', 'fay'].map(mondayBarber) as never[]));
    t = await startTestApp({ catalogues: [catalogue], limits: LIMITS });
    const app = t;
    const ids = await catalogueIds(app.database.db);
    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: MONDAY_11,
    };
    const responses = await Promise.all(Array.from({ length: 12 }, () => postBooking(app, body)));
    const { created, conflicts } = tally(responses);
    expect(created).toHaveLength(4);
    expect(conflicts).toHaveLength(8);
    const assigned = created.map((r) => r.json().data.staff_id).sort();
    const expected = ['ana', 'dee', 'eve', 'fay'].map((ref) => ids.staff[ref]).sort();
    expect(assigned).toEqual(expected);
    expect(await countBookings(app.database.db)).toBe(4);
  });

  it('answers 10 parallel retries with one Idempotency-Key with the same booking, written once', async () => {
    t = await startTestApp({ limits: LIMITS });
    const app = t;
    const ids = await catalogueIds(app.database.db);
    const body = {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: MONDAY_11,
    };
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => postBooking(app, body, { idempotencyKey: key })),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.body)).size).toBe(1);
    expect(await countBookings(app.database.db)).toBe(1);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, getBooking, postBooking } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * PATCH /bookings/{reference} moves the booking's own services, and without staff_id keeps its staff
 * member. When the catalogue changed since it was booked (its staff member made inactive, a service no
 * longer bookable online), the move is refused as a conflict about the booking (409, param staff_id or
 * service_ids), not as a 400 invalid_request naming a field the request did not send. Ana does cuts at
 * Soho on Tuesdays, Bo on Wednesdays.
 */
let t: TestApp;
let ids: CatalogueIds;

beforeEach(async () => {
  t = await startTestApp({ limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
});
afterEach(async () => {
  await t.close();
});

async function anasCut(): Promise<string> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.cut],
    staff_id: ids.staff.ana,
    client_id: ids.jo,
    starts_at: '2026-11-24T10:00:00+00:00',
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

function move(reference: string, body: Record<string, unknown>) {
  return t.request({ method: 'PATCH', url: `/v1/bookings/${reference}`, payload: body });
}

describe('PATCH /bookings/{reference} when the booking’s staff member can no longer take it', () => {
  it('answers 409 conflict naming staff_id, and moves it once staff_id names someone who can', async () => {
    const reference = await anasCut();
    await t.database.db.updateTable('staff').set({ active: 0 }).where('id', '=', ids.staff.ana!).execute();

    for (const dryRun of [true, false]) {
      const refused = await move(reference, {
        starts_at: '2026-11-25T11:00:00+00:00',
        ...(dryRun && { dry_run: true }),
      });
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json().error).toMatchObject({ code: 'conflict', param: 'staff_id' });
    }
    const unchanged = (await getBooking(t, reference)).json().data;
    expect(unchanged).toMatchObject({ staff_id: ids.staff.ana, starts_at: '2026-11-24T10:00:00+00:00' });

    const moved = await move(reference, { starts_at: '2026-11-25T11:00:00+00:00', staff_id: ids.staff.bo });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toMatchObject({
      staff_id: ids.staff.bo,
      starts_at: '2026-11-25T11:00:00+00:00',
    });
  });

  it('still answers 400 invalid_request when the staff_id sent is no one who can take it', async () => {
    const reference = await anasCut();
    const refused = await move(reference, {
      starts_at: '2026-11-25T11:00:00+00:00',
      staff_id: '3bfb2d49-4b43-412b-ab21-fcee7c1755e2',
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'invalid_request', param: 'staff_id' });
  });

  it('answers 409 conflict naming service_ids when a service of the booking is no longer bookable online', async () => {
    const reference = await anasCut();
    await t.database.db
      .updateTable('services')
      .set({ online_bookable: 0 })
      .where('id', '=', ids.services.cut!)
      .execute();
    const refused = await move(reference, { starts_at: '2026-11-24T11:00:00+00:00' });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error).toMatchObject({ code: 'conflict', param: 'service_ids' });
  });
});

describe('PATCH /bookings/{reference} when the booking’s location no longer takes bookings', () => {
  it('answers 409 conflict and leaves the booking where it is, which can still be cancelled', async () => {
    const reference = await anasCut();
    await t.database.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'soho').execute();

    for (const dryRun of [true, false]) {
      const refused = await move(reference, {
        starts_at: '2026-11-24T11:00:00+00:00',
        ...(dryRun && { dry_run: true }),
      });
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json().error).toMatchObject({ code: 'conflict', reason: 'closed' });
    }
    const unchanged = (await getBooking(t, reference)).json().data;
    expect(unchanged).toMatchObject({ status: 'confirmed', starts_at: '2026-11-24T10:00:00+00:00' });

    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
  });
});

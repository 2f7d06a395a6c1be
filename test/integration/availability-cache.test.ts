import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availabilityAt, cachedAnswers } from '../../src/app/availability-cache.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The availability cache keeps only answers of the organisation's current versions: a booking made
 * drops the answers computed before it at once (they would never be asked for again).
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

describe('availability answers of superseded versions', () => {
  it('are dropped when a booking changes the organisation’s bookings', async () => {
    const db = t.database.db;
    const ask = (fromDate: string) => ({
      locationSlug: 'soho',
      serviceIds: [ids.services.cut!],
      fromDate,
      days: 1,
    });
    for (const date of ['2026-11-24', '2026-11-25', '2026-11-26'])
      await availabilityAt(db, ids.organisation, ask(date), t.clock.nowMs());
    expect(cachedAnswers(db).count).toBe(3);
    const first = await availabilityAt(db, ids.organisation, ask('2026-11-24'), t.clock.nowMs());
    expect(cachedAnswers(db).count).toBe(3);

    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: new Date(first.availability.slots[0]!.startsAt).toISOString(),
    });
    expect(booked.statusCode).toBe(201);
    await availabilityAt(db, ids.organisation, ask('2026-11-24'), t.clock.nowMs());
    expect(cachedAnswers(db).count).toBe(1);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getLocationInfo } from '../../src/app/location-info-service.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * Soho with split shifts (Ana Mon 09:00-12:00 and 13:00-17:00, Tue 09:00-17:00; Di Tue 16:00-20:00 and
 * Sat 10:00-14:00; Bo Wed 10:00-18:00; Cy, inactive, Fri) and closures before, inside and beyond the
 * next 60 days. The clock: Monday 2026-11-23 09:00 GMT.
 */
let t: TestApp;
let ids: CatalogueIds;

function catalogue() {
  const c = smallCatalogue();
  Object.assign(c.locations[0]!, {
    closures: [
      { date: '2026-11-01', reason: 'Past' },
      { date: '2026-11-23', reason: 'Staff training' },
      { date: '2026-12-25', reason: 'Christmas Day' },
      { date: '2026-12-26' },
      { date: '2027-01-22', reason: 'Stocktake' },
      { date: '2027-01-23', reason: 'Beyond sixty days' },
    ],
  });
  const ana = c.staff.find((s) => s.ref === 'ana')!;
  ana.working_hours = {
    soho: {
      mon: [
        ['09:00', '12:00'],
        ['13:00', '17:00'],
      ],
      tue: [['09:00', '17:00']],
    },
  } as never;
  c.staff.push({
    ref: 'di',
    name: 'Di',
    services: ['cut'],
    working_hours: {
      soho: {
        tue: [['16:00', '20:00']],
        sat: [['10:00', '14:00']],
      },
    },
  } as never);
  c.clients.push({
    ref: 'sam',
    first_name: 'Sam',
    last_name: 'Lee',
    phone: '+447400123456',
    email: 'sam@example.com',
    marketing_consent: false,
  });
  return c;
}

beforeAll(async () => {
  t = await startTestApp({ catalogues: [catalogue()], limits: { requestsPerMinute: 100_000 } });
  ids = await catalogueIds(t.database.db);
});
afterEach(() => t.clock.set(TEST_START));
afterAll(async () => {
  await t.close();
});

describe('getLocationInfo', () => {
  it('gives address, hours (the union of active staff hours), closures ahead, deposits and the policy', async () => {
    const info = await getLocationInfo(t.database.db, ids.organisation, 'soho', t.clock.nowMs());
    expect(info).toEqual({
      id: ids.locations.soho,
      slug: 'soho',
      name: 'Soho',
      timezone: 'Europe/London',
      streetAddress: '1 Dean Street',
      city: 'London',
      postalCode: 'W1D 3RB',
      country: 'GB',
      phone: '+442071234567',
      today: '2026-11-23',
      openingHours: [
        {
          weekday: 'mon',
          intervals: [
            { start: '09:00', end: '12:00' },
            { start: '13:00', end: '17:00' },
          ],
        },
        { weekday: 'tue', intervals: [{ start: '09:00', end: '20:00' }] },
        { weekday: 'wed', intervals: [{ start: '10:00', end: '18:00' }] },
        { weekday: 'thu', intervals: [] },
        { weekday: 'fri', intervals: [] },
        { weekday: 'sat', intervals: [{ start: '10:00', end: '14:00' }] },
        { weekday: 'sun', intervals: [] },
      ],
      closures: [
        { date: '2026-11-23', reason: 'Staff training' },
        { date: '2026-12-25', reason: 'Christmas Day' },
        { date: '2026-12-26', reason: null },
        { date: '2027-01-22', reason: 'Stocktake' },
      ],
      deposits: [
        { serviceId: ids.services.colour, serviceName: 'Colour', depositMinor: 2000, currency: 'GBP' },
      ],
      protection: { applies: false, lateCancellationFeePercentage: null, noShowFeePercentage: null },
      policy: {
        slotIntervalMinutes: 15,
        minNoticeMinutes: 60,
        maxAdvanceDays: 60,
        cancellationWindowHours: 24,
        lateCancellation: 'allow',
        lateReschedule: 'allow',
        pendingConfirmationHoldMinutes: 15,
        pendingPaymentHoldMinutes: 30,
        reminderHoursBefore: 24,
        waitlistOfferMinutes: 15,
      },
    });
  });

  it('says where Booking Protection applies, with its percentages, and no deposits there', async () => {
    const info = await getLocationInfo(t.database.db, ids.organisation, 'kings-cross', t.clock.nowMs());
    expect(info).toMatchObject({
      phone: null,
      streetAddress: null,
      deposits: [],
      protection: { applies: true, lateCancellationFeePercentage: 50, noShowFeePercentage: 100 },
      closures: [],
    });
    expect(info.openingHours.find((d) => d.weekday === 'thu')!.intervals).toEqual([
      { start: '10:00', end: '18:00' },
    ]);
  });

  it('is 404 for an unknown or inactive location', async () => {
    for (const slug of ['nowhere', 'closed-branch']) {
      await expect(
        getLocationInfo(t.database.db, ids.organisation, slug, t.clock.nowMs()),
      ).rejects.toMatchObject({
        code: 'not_found',
        param: 'location',
      });
    }
  });
});

describe('GET /v1/locations/{slug}/info', () => {
  it('answers the same in REST representation, for a read key, and 404 for an unknown location', async () => {
    const response = await t.request({ method: 'GET', url: '/v1/locations/soho/info', key: t.keys.read });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toMatchObject({
      slug: 'soho',
      today: '2026-11-23',
      opening_hours: expect.arrayContaining([{ weekday: 'sun', intervals: [] }]),
      closures: [
        { date: '2026-11-23', reason: 'Staff training' },
        { date: '2026-12-25', reason: 'Christmas Day' },
        { date: '2026-12-26', reason: null },
        { date: '2027-01-22', reason: 'Stocktake' },
      ],
      deposits: [
        {
          service_id: ids.services.colour,
          service_name: 'Colour',
          deposit: { amount: 2000, currency: 'GBP' },
        },
      ],
      booking_protection_policy: { applies: false },
      policy: { cancellation_window_hours: 24, late_cancellation: 'allow', min_notice_minutes: 60 },
    });
    // The refusal names the path's parameter, as every /locations/{slug} operation does.
    for (const slug of ['nowhere', 'closed-branch']) {
      const unknown = await t.request({ method: 'GET', url: `/v1/locations/${slug}/info` });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toMatchObject({ code: 'not_found', param: 'slug' });
    }
  });
});

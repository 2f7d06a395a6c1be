import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findLiveBookingAt } from '../../src/app/booking-service.ts';
import { getLocationInfo } from '../../src/app/location-info-service.ts';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
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

describe('findLiveBookingAt', () => {
  const find = (clientId: string, location: { id: string } | { slug: string }, startsAt: string) =>
    findLiveBookingAt(
      t.database.db,
      ids.organisation,
      clientId,
      location,
      Date.parse(startsAt),
      t.clock.nowMs(),
    );
  const book = async (startsAt: string, service = ids.services.cut) => {
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [service],
      client_id: ids.jo,
      starts_at: startsAt,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.reference as string;
  };

  it("finds the client's live booking starting at that instant there, by slug or id", async () => {
    const reference = await book('2026-11-24T10:00:00+00:00');
    expect((await find(ids.jo, { slug: 'soho' }, '2026-11-24T10:00:00Z'))?.reference).toBe(reference);
    expect((await find(ids.jo, { id: ids.locations.soho! }, '2026-11-24T10:00:00Z'))?.reference).toBe(
      reference,
    );
    // Another instant, location or client: none.
    expect(await find(ids.jo, { slug: 'soho' }, '2026-11-24T10:15:00Z')).toBeNull();
    expect(await find(ids.jo, { slug: 'kings-cross' }, '2026-11-24T10:00:00Z')).toBeNull();
    const sam = await t.database.db
      .selectFrom('clients')
      .select('id')
      .where('ref', '=', 'sam')
      .executeTakeFirstOrThrow();
    expect(await find(sam.id, { slug: 'soho' }, '2026-11-24T10:00:00Z')).toBeNull();
  });

  it('ignores cancelled bookings and lapsed holds', async () => {
    const cancelled = await book('2026-11-24T12:00:00+00:00');
    await t.request({ method: 'POST', url: `/v1/bookings/${cancelled}/cancel` });
    expect(await find(ids.jo, { slug: 'soho' }, '2026-11-24T12:00:00Z')).toBeNull();

    const hold = await book('2026-11-24T14:00:00+00:00', ids.services.colour);
    expect((await find(ids.jo, { slug: 'soho' }, '2026-11-24T14:00:00Z'))?.reference).toBe(hold);
    t.clock.advance({ minutes: 31 }); // the deposit hold lapses, written or not
    expect(await find(ids.jo, { slug: 'soho' }, '2026-11-24T14:00:00Z')).toBeNull();
  });

  it('is 404 for an unknown location slug', async () => {
    await expect(find(ids.jo, { slug: 'nowhere' }, '2026-11-24T10:00:00Z')).rejects.toMatchObject({
      code: 'not_found',
      param: 'location',
    });
  });
});

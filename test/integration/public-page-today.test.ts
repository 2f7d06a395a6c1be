import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { pageGet } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Today on the public booking page with no times left: the page says why as it is, "Too soon" only
 * when the notice is what keeps a time that is free from being booked, not whenever today is empty.
 * The small catalogue: Ana works at Soho on Mondays 09:00-17:00; a Cut takes 45 minutes and 15 of
 * buffer; Bo works at Kings Cross on Thursdays only. Monday 23 November 2026 in London (on UTC).
 */
const MONDAY = '2026-11-23';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function start(minNoticeMinutes: number, now: string) {
  const c = smallCatalogue();
  for (const location of c.locations) {
    (location as Record<string, unknown>).policy = { min_notice_minutes: minNoticeMinutes };
  }
  t = await startTestApp({ catalogues: [c], now });
  return catalogueIds(t.database.db);
}

async function todaySays(location: string, service: string): Promise<string> {
  const response = await pageGet(t, `/p/acme-hair?location=${location}&services=${service}&date=${MONDAY}`);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).not.toContain('name="starts_at"');
  return /<p role="status">No free times that day\. (.*?)<\/p>/.exec(response.body)?.[1] ?? response.body;
}

describe('today with no times left on the public page', () => {
  it('is too soon when the notice keeps free times from being booked', async () => {
    const ids = await start(60, `${MONDAY}T15:30:00Z`);
    expect(await todaySays('soho', ids.services.cut!)).toBe(
      'Too soon: no times are left to book online today. Call <a href="tel:+442071234567">020 7123 4567</a> to ask.',
    );
  });

  it('is over, not too soon, once the working day has ended, whatever the notice', async () => {
    const ids = await start(0, `${MONDAY}T17:30:00Z`);
    expect(await todaySays('soho', ids.services.cut!)).toBe('No more times today: the working day is over.');
  });

  it('is fully booked, not too soon, when every time left is taken', async () => {
    const ids = await start(0, `${MONDAY}T14:00:00Z`);
    for (const hour of ['14', '15', '16']) {
      const booked = await postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        client_id: ids.jo,
        starts_at: `${MONDAY}T${hour}:00:00Z`,
      });
      expect(booked.statusCode, booked.body).toBe(201);
    }
    expect(await todaySays('soho', ids.services.cut!)).toBe('Fully booked that day.');
  });

  it('is closed when nobody who does the services works today', async () => {
    const ids = await start(0, `${MONDAY}T09:00:00Z`);
    expect(await todaySays('kings-cross', ids.services.cut!)).toBe('Closed that day.');
  });
});

describe("today with no times left on a booking's move page", () => {
  it('says the working day is over, or too soon, as the booking page does', async () => {
    const ids = await start(60, `${MONDAY}T15:30:00Z`);
    const booked = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2026-11-30T10:00:00Z',
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const path = new URL(booked.json().data.booking_page_url).pathname;
    const moveToday = async () => {
      const response = await pageGet(t, `${path}/reschedule?date=${MONDAY}`);
      expect(response.statusCode, response.body).toBe(200);
      return /<p role="status">No free times that day\. (.*?)<\/p>/.exec(response.body)?.[1];
    };
    expect(await moveToday()).toBe(
      'Too soon: no times are left to book online today. Call <a href="tel:+442071234567">020 7123 4567</a> to ask.',
    );
    t.clock.set(`${MONDAY}T17:30:00Z`);
    expect(await moveToday()).toBe('No more times today: the working day is over.');
  });
});

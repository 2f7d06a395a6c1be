import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { signInNewAccount } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The any-staff rule (design.md section 6) gives a start to the eligible free member with the fewest
 * booked minutes that local day. An appointment whose time has come and that the desk then marks
 * completed, needs checkout or no-show was booked all the same: it must keep counting, or the
 * assignment of the rest of the day flips the moment the desk presses a button.
 *
 * Ana and Bo both cut (30 min) and colour (60 min), every day 09:00-18:00 in London (GMT in
 * November), no notice. Each case books, from 08:00, a colour at 09:00 (Ana, by name: both have 0)
 * and a cut at 10:00 (Bo: 0 against Ana's 60), so Bo has the fewer booked minutes (30 against 60).
 */
const WEEK = Object.fromEntries(
  ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => [day, [['09:00', '18:00']]]),
);

const catalogue = {
  organisation: {
    slug: 'even-hands',
    name: 'Even Hands',
    currency: 'GBP',
    booking_reference_prefix: 'EH',
    locale: 'en-GB',
  },
  locations: [
    {
      ref: 'soho',
      slug: 'soho',
      name: 'Soho',
      timezone: 'Europe/London',
      active: true,
      policy: { slot_interval_minutes: 15, min_notice_minutes: 0, max_advance_days: 60 },
      booking_protection: {
        applies: false,
        late_cancellation_fee_percentage: null,
        no_show_fee_percentage: null,
      },
    },
  ],
  services: [
    {
      ref: 'cut',
      name: 'Cut',
      duration_minutes: 30,
      price: { amount: 3000, currency: 'GBP' },
      locations: ['soho'],
    },
    {
      ref: 'colour',
      name: 'Colour',
      duration_minutes: 60,
      price: { amount: 6000, currency: 'GBP' },
      locations: ['soho'],
    },
  ],
  staff: [
    { ref: 'bo', name: 'Bo', services: ['cut', 'colour'], working_hours: { soho: WEEK } },
    { ref: 'ana', name: 'Ana', services: ['cut', 'colour'], working_hours: { soho: WEEK } },
  ],
  clients: [
    { ref: 'jo', first_name: 'Jo', last_name: 'Bloggs', phone: '+447911123456', marketing_consent: false },
  ],
};

let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp({ catalogues: [catalogue], now: '2026-11-23T08:00:00Z' });
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

async function bookAnyone(service: 'cut' | 'colour', startsAt: string) {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services[service]],
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as { reference: string; staff_id: string };
}

async function offeredStaffAt(startsAt: string): Promise<string | undefined> {
  const response = await t.request({
    method: 'GET',
    url: `/v1/locations/soho/availability?service_ids=${ids.services.cut}&date=${startsAt.slice(0, 10)}`,
  });
  expect(response.statusCode).toBe(200);
  const slots: { starts_at: string; staff_id: string }[] = response.json().data.slots;
  return slots.find((slot) => slot.starts_at === startsAt)?.staff_id;
}

describe('any staff, once an appointment of the day has been kept or missed', () => {
  const cases = [
    { action: 'complete', date: '2026-11-23' },
    { action: 'check_out', date: '2026-11-24' },
    { action: 'no_show', date: '2026-11-25' },
  ];
  it.each(cases)('still counts its minutes after the desk marks it ($action)', async ({ action, date }) => {
    t.clock.set(`${date}T08:00:00Z`);
    const colour = await bookAnyone('colour', `${date}T09:00:00+00:00`);
    expect(colour.staff_id).toBe(ids.staff.ana);
    expect((await bookAnyone('cut', `${date}T10:00:00+00:00`)).staff_id).toBe(ids.staff.bo);
    const later = `${date}T15:00:00+00:00`;
    expect(await offeredStaffAt(later)).toBe(ids.staff.bo);

    // Ana's colour has begun; the desk marks it.
    t.clock.set(`${date}T09:30:00Z`);
    const desk = await signInNewAccount(t, 'even-hands', `desk-${action}@even-hands.test`, 'staff');
    const marked = await desk.post(`/console/bookings/${colour.reference}/action`, { action });
    expect(marked.statusCode, marked.body).toBe(303);

    // Ana still had 60 booked minutes that day, Bo 30: availability and booking both give Bo.
    expect(await offeredStaffAt(later)).toBe(ids.staff.bo);
    expect((await bookAnyone('cut', later)).staff_id).toBe(ids.staff.bo);
  });
});

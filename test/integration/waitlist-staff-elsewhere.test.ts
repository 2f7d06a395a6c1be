import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna, joinForAna, TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * A staff member who works at two locations on the same day is busy at both while booked at either
 * (availability reads their bookings at any location), so a booking of theirs cancelled at one frees
 * time at the other too: the waitlist there is offered it (design.md 9.4). The small catalogue, with
 * Ana also at Kings Cross on Tuesdays 09:00-17:00 (no Booking Protection, so REST books there); Monday
 * 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

function anaAtTwoPlaces() {
  const catalogue = smallCatalogue();
  const kingsCross = catalogue.locations.find((location) => location.slug === 'kings-cross')!;
  kingsCross.booking_protection = {
    applies: false,
    late_cancellation_fee_percentage: null,
    no_show_fee_percentage: null,
  };
  const ana = catalogue.staff.find((member) => member.ref === 'ana')!;
  Object.assign(ana.working_hours, { 'kings-cross': { tue: [['09:00', '17:00']] } });
  return catalogue;
}

describe('a waitlist where its staff member also works elsewhere', () => {
  it('is offered the time freed by a cancellation of theirs at the other location', async () => {
    t = await startTestApp({ catalogues: [anaAtTwoPlaces()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    // Ana's Tuesday morning: Soho at 09:00 and 11:15, Kings Cross at 10:00 (an hour's cut there and 15
    // minutes of buffer, to 11:15). No morning start is left at Soho.
    for (const start of ['09:00', '11:15']) {
      const booked = await bookAna(t, `${TUESDAY}T${start}:00Z`);
      expect(booked.statusCode, booked.body).toBe(201);
    }
    const elsewhere = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'kings-cross',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.ana,
        client_id: ids.jo,
        starts_at: `${TUESDAY}T10:00:00Z`,
      },
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(201);
    const ada = await joinForAna(t, 'Ada', { times: ['morning'] });
    expect(await waitlistPass(t)).toBe(0);

    const reference = JSON.parse(elsewhere.body).data.reference as string;
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await waitlistPass(t)).toBe(1);
    const entry = await t.request({ method: 'GET', url: `/v1/waitlist/${ada.id}` });
    expect(JSON.parse(entry.body).data.offer).toMatchObject({ starts_at: `${TUESDAY}T10:00:00+00:00` });
  });
});

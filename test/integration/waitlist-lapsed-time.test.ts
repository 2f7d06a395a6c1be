import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import {
  anaTuesdayStarts,
  bookAnaOnTuesday,
  joinForAna,
  joinWaitlist,
  TUESDAY,
  waitlistPass,
} from '../helpers/waitlist-fixtures.ts';

/**
 * An offer that lapses goes to the next entry (design.md 9.4): the time it held is not offered to the
 * same entry again a quarter of an hour later, as it would be where the freed time holds more than one
 * start. The small catalogue: Ana's Cuts at Soho (45 minutes and 15 of buffer) on Tuesday 24 November
 * 2026, 09:00-17:00 London; Monday 23 November, 09:00.
 */
const NOW = '2026-11-23T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const offerOf = async (id: string) =>
  JSON.parse((await t.request({ method: 'GET', url: `/v1/waitlist/${id}` })).body).data.offer;

/** Ana's afternoon booked but for 13:00-14:30 (12:00, 14:30, 15:30): the starts 13:00, 13:15 and 13:30 fit in it. */
async function afternoonFreeFrom13To1430() {
  t = await startTestApp({ now: NOW });
  const booked = await bookAnaOnTuesday(t, ['12', '13', '14']);
  for (const [hour, start] of [
    ['14', '15:30'],
    ['13', '14:30'],
  ] as const) {
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${booked.get(hour)}`,
      payload: { starts_at: `${TUESDAY}T${start}:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
  }
  return booked;
}

describe('an offer that lapses unanswered', () => {
  it('passes its freed time to the next entry, not to the same entry at the next start', async () => {
    await afternoonFreeFrom13To1430();
    expect((await anaTuesdayStarts(t)).filter((s) => s >= `${TUESDAY}T12`)).toEqual([
      `${TUESDAY}T13:00:00+00:00`,
      `${TUESDAY}T13:15:00+00:00`,
      `${TUESDAY}T13:30:00+00:00`,
    ]);
    const ada = await joinForAna(t, 'Ada', { times: ['afternoon'] });
    const bea = await joinForAna(t, 'Bea', { times: ['afternoon'] });
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
    expect(await offerOf(bea.id)).toBeNull();

    // Ada's 15 minutes pass unanswered: the time goes to Bea.
    t.clock.advance({ minutes: 16 });
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toBeNull();
    expect(await offerOf(bea.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
  });

  // docs/decisions/waitlist-offers-as-holds.md: "never offered again a time it let go, nor another
  // start overlapping it". With nobody after it, the entry was offered 13:15 at once, then 13:30.
  it('is not followed by a start overlapping it, even with nobody else waiting', async () => {
    const booked = await afternoonFreeFrom13To1430();
    const ada = await joinForAna(t, 'Ada', { times: ['afternoon'] });
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
    for (let hold = 0; hold < 3; hold += 1) {
      t.clock.advance({ minutes: 16 });
      expect(await waitlistPass(t)).toBe(0);
      expect(await offerOf(ada.id)).toBeNull();
    }
    const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${ada.id}` })).json().data;
    expect(entry.status).toBe('waiting');
    // A time clear of the one it let go is still offered: 15:30 freed.
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T15:30:00+00:00` });
  });
});

describe('two offers that lapse side by side', () => {
  // 13:00-15:00 free: Ada is offered 13:00 (busy to 14:00 with its buffer), Bea 14:00. Both lapse.
  // Ada's next start clear of 13:00-13:45 alone was 13:45, whose hold kept 13:00 from Bea: each time
  // let go must go to the next entry, so each is now offered the other's.
  it('trade their times: a new offer never keeps from the next entry the time its entry let go', async () => {
    t = await startTestApp({ now: NOW });
    await bookAnaOnTuesday(t, ['09', '10', '11', '12', '15', '16']);
    const ada = await joinForAna(t, 'Ada', { times: ['afternoon'] });
    const bea = await joinForAna(t, 'Bea', { times: ['afternoon'] });
    expect(await waitlistPass(t)).toBe(2);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
    expect(await offerOf(bea.id)).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });

    t.clock.advance({ minutes: 16 });
    expect(await waitlistPass(t)).toBe(2);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
    expect(await offerOf(bea.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });

    // Each has now let both go: nothing more for either.
    t.clock.advance({ minutes: 16 });
    expect(await waitlistPass(t)).toBe(0);
  });

  it('offers an entry for anyone another stylist’s start just after the time it let go', async () => {
    // Bo works Tuesdays at Soho too, free only at 13:45 (booked 09:45 to 12:45 and from 14:45); Ana
    // only at 13:00. A hold of Bo's 13:45 keeps nothing of Ana's 13:00 from the next entry.
    const catalogue = smallCatalogue() as { staff: { working_hours: Record<string, unknown> }[] };
    catalogue.staff[1]!.working_hours.soho = { tue: [['09:00', '17:00']] };
    t = await startTestApp({ now: NOW, catalogues: [catalogue] });
    const ids = await catalogueIds(t.database.db);
    await bookAnaOnTuesday(t, ['09', '10', '11', '12', '14', '15', '16']);
    for (const start of ['09:45', '10:45', '11:45', '12:45', '14:45', '15:45']) {
      const booked = await postBooking(t, {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.bo,
        client_id: ids.jo,
        starts_at: `${TUESDAY}T${start}:00Z`,
      });
      expect(booked.statusCode, booked.body).toBe(201);
    }
    const ada = await joinWaitlist(t, {
      client: { first_name: 'Ada', last_name: 'Waiting', email: 'ada@example.com' },
      from_date: TUESDAY,
      to_date: TUESDAY,
      times: ['afternoon'],
    });
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toMatchObject({ starts_at: `${TUESDAY}T13:00:00+00:00` });
    t.clock.advance({ minutes: 16 });
    expect(await waitlistPass(t)).toBe(1);
    expect(await offerOf(ada.id)).toMatchObject({
      starts_at: `${TUESDAY}T13:45:00+00:00`,
      staff_id: ids.staff.bo,
    });
  });
});

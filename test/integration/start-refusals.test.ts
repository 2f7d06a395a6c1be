import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, countBookings, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * Why a start is refused, through REST, on a fixed clock (Monday 2026-11-23 09:00 GMT). The small
 * catalogue (Ana: Soho Mon/Tue 09:00-17:00; Bo: Soho Wed, Kings Cross Thu, 10:00-18:00), plus:
 * - Soho is closed on Friday 25 December ("Christmas Day"), and Bo is off on Wednesday 9 December;
 *   defaults otherwise (60 minutes' notice, 60 days ahead, 15-minute grid, 24-hour window, late
 *   changes allowed);
 * - "Strict", Soho's twin where late changes are forbidden (Ana works there on Tuesdays);
 * - "Night owls" (London) on a 45-minute grid, where Nox works Sundays 00:00-06:00, across the night
 *   the clocks go forward (29 March 2026, 01:00 GMT becomes 02:00 BST).
 */
let t: TestApp;
let ids: CatalogueIds;

function catalogue() {
  const c = smallCatalogue();
  const soho = c.locations[0]!;
  Object.assign(soho, { closures: [{ date: '2026-12-25', reason: 'Christmas Day' }] });
  c.locations.push(
    {
      ...soho,
      ref: 'strict',
      slug: 'strict',
      name: 'Strict',
      closures: [],
      policy: { late_reschedule: 'forbid' },
    } as never,
    {
      ...soho,
      ref: 'night',
      slug: 'night',
      name: 'Night owls',
      closures: [],
      policy: { slot_interval_minutes: 45 },
    } as never,
  );
  c.services.find((s) => s.ref === 'cut')!.locations.push('strict', 'night');
  // Bo, the only one who works at Soho on Wednesdays, is off on Wednesday 9 December.
  const bo = c.staff.find((s) => s.ref === 'bo')! as { time_off?: unknown[] };
  bo.time_off = [{ start: '2026-12-09T00:00:00', end: '2026-12-10T00:00:00', reason: 'Holiday' }];
  const ana = c.staff.find((s) => s.ref === 'ana')!;
  ana.working_hours = { ...ana.working_hours, strict: { tue: [['09:00', '17:00']] } } as never;
  c.staff.push({
    ref: 'nox',
    name: 'Nox',
    services: ['cut'],
    working_hours: { night: { sun: [['00:00', '06:00']] } },
  } as never);
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

const cut = (startsAt: string, extra: Record<string, unknown> = {}) => ({
  location_slug: 'soho',
  service_ids: [ids.services.cut],
  client_id: ids.jo,
  starts_at: startsAt,
  ...extra,
});

async function refused(payload: Record<string, unknown>) {
  const before = await countBookings(t.database.db);
  const response = await postBooking(t, payload);
  expect(response.statusCode, response.body).toBe(409);
  expect(await countBookings(t.database.db)).toBe(before);
  const { error } = response.json();
  expect(error.code).toBe('conflict');
  return error as { code: string; message: string; param?: string; reason?: string };
}

async function book(payload: Record<string, unknown>): Promise<string> {
  const response = await postBooking(t, payload);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.reference;
}

const patch = (reference: string, body: Record<string, unknown>) =>
  t.request({ method: 'PATCH', url: `/v1/bookings/${reference}`, payload: body });

describe('POST /bookings: 409 conflict names its reason', () => {
  it('too_soon: in the past, or inside the minimum notice', async () => {
    expect(await refused(cut('2026-11-23T08:00:00+00:00'))).toEqual({
      code: 'conflict',
      message: 'That time has already passed.',
      param: 'starts_at',
      reason: 'too_soon',
      details: { min_notice_minutes: 60, earliest_starts_at: '2026-11-23T10:00:00+00:00' },
    });
    expect(await refused(cut('2026-11-23T09:45:00+00:00'))).toMatchObject({
      reason: 'too_soon',
      param: 'starts_at',
      message: "That time is too soon: bookings here need at least 60 minutes' notice.",
    });
    // Ten o'clock is exactly the minimum notice: a slot.
    await book(cut('2026-11-23T10:00:00+00:00'));
  });

  it('too_far_ahead: beyond max_advance_days (60 days: up to 22 January)', async () => {
    expect(await refused(cut('2027-01-25T10:00:00+00:00'))).toEqual({
      code: 'conflict',
      message: 'That date is too far ahead: Soho takes bookings up to 60 days ahead (until 2027-01-22).',
      param: 'starts_at',
      reason: 'too_far_ahead',
      details: { max_advance_days: 60, last_date: '2027-01-22' },
    });
  });

  it('closed: a closure, with its reason', async () => {
    expect(await refused(cut('2026-12-25T10:00:00+00:00'))).toEqual({
      code: 'conflict',
      message: 'Soho is closed on 2026-12-25 (Christmas Day).',
      param: 'starts_at',
      reason: 'closed',
      details: { date: '2026-12-25', closed_because: 'closure', closure_reason: 'Christmas Day' },
    });
    // Closed comes before the grid and before the staff member.
    expect(await refused(cut('2026-12-25T10:05:00+00:00', { staff_id: ids.staff.bo }))).toMatchObject({
      reason: 'closed',
    });
  });

  it('closed: nobody who delivers the services works that day', async () => {
    // Thursday: Bo works at Kings Cross, nobody at Soho.
    expect(await refused(cut('2026-11-26T10:00:00+00:00'))).toMatchObject({
      reason: 'closed',
      param: 'starts_at',
      message: 'Soho is closed on 2026-11-26: nobody who offers these services works that day.',
    });
  });

  it('closed: on a day the location opens, says nobody who offers the services works, not that it is closed', async () => {
    // Wednesday: Bo (cuts only) works at Soho; Ana, the only one who colours, does not.
    const colour = { ...cut('2026-11-25T10:00:00+00:00'), service_ids: [ids.services.colour] };
    expect(await refused(colour)).toEqual({
      code: 'conflict',
      message:
        'Nobody who offers these services works at Soho on 2026-11-25, though it is open that day for others.',
      param: 'starts_at',
      reason: 'closed',
      details: { date: '2026-11-25', closed_because: 'nobody_works', closure_reason: null },
    });
  });

  it('closed: on a day everyone there is off (time off, not a closure), says it closed, not open for others', async () => {
    expect(await refused(cut('2026-12-09T10:00:00+00:00'))).toEqual({
      code: 'conflict',
      message: 'Soho is closed on 2026-12-09: nobody who offers these services works that day.',
      param: 'starts_at',
      reason: 'closed',
      details: { date: '2026-12-09', closed_because: 'nobody_works', closure_reason: null },
    });
  });

  it('not_on_grid: a time between the grid times', async () => {
    expect(await refused(cut('2026-11-24T10:05:00+00:00'))).toMatchObject({
      reason: 'not_on_grid',
      param: 'starts_at',
      message:
        'Appointments here start every 15 minutes from midnight, local time; that time is not one of them.',
    });
  });

  it('not_on_grid: a time a fraction of a second from a grid time, however small the fraction', async () => {
    for (const near of [
      '10:00:00.5',
      '10:00:00.0001',
      '10:00:00.000000000001',
      '09:59:59.9991',
      '09:59:59.99999',
    ]) {
      expect(await refused(cut(`2026-11-24T${near}+00:00`)), near).toMatchObject({ reason: 'not_on_grid' });
    }
    // Zeros past the second name the grid time itself.
    const response = await postBooking(t, cut('2026-11-24T10:00:00.000000000+00:00'));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data.starts_at).toBe('2026-11-24T10:00:00+00:00');
  });

  it('staff_not_working: names the staff member, and where and when they work', async () => {
    expect(await refused(cut('2026-11-24T10:00:00+00:00', { staff_id: ids.staff.bo }))).toEqual({
      code: 'conflict',
      message: 'Bo does not work then; Bo works at Kings Cross Thu 10:00-18:00, and at Soho Wed 10:00-18:00.',
      param: 'starts_at',
      reason: 'staff_not_working',
      details: {
        staff_id: ids.staff.bo,
        staff_name: 'Bo',
        on_time_off: false,
        works: [
          {
            location_slug: 'kings-cross',
            location_name: 'Kings Cross',
            hours: [{ weekday: 'thu', intervals: [{ start: '10:00', end: '18:00' }] }],
          },
          {
            location_slug: 'soho',
            location_name: 'Soho',
            hours: [{ weekday: 'wed', intervals: [{ start: '10:00', end: '18:00' }] }],
          },
        ],
      },
    });
    // Working that day, but not that late: the appointment would run past closing.
    expect(await refused(cut('2026-11-24T16:30:00+00:00', { staff_id: ids.staff.ana }))).toMatchObject({
      reason: 'staff_not_working',
    });
  });

  it('slot_unavailable: allowed, but taken (or blocked by a buffer), or outside everyone’s hours', async () => {
    await book(cut('2026-11-24T14:00:00+00:00'));
    for (const start of ['2026-11-24T14:00:00+00:00', '2026-11-24T14:30:00+00:00']) {
      expect(await refused(cut(start))).toEqual({
        code: 'conflict',
        message: 'That time is not available; ask for availability again.',
        param: 'starts_at',
        reason: 'slot_unavailable',
      });
    }
    // Ana, the only one at Soho on Tuesdays, stops at 17:00: nobody is working then, which is said.
    for (const start of [
      '2026-11-24T17:30:00+00:00',
      '2026-11-24T16:30:00+00:00',
      '2026-11-24T07:00:00+00:00',
    ]) {
      expect(await refused(cut(start))).toEqual({
        code: 'conflict',
        message:
          'Nobody who offers these services works at that time on 2026-11-24; ask for availability again.',
        param: 'starts_at',
        reason: 'slot_unavailable',
        details: { date: '2026-11-24', outside_hours: true },
      });
    }
  });

  it('a DST gap: a wall time the clocks skip, sent with the old offset, is not on the grid', async () => {
    t.clock.set('2026-03-20T09:00:00Z');
    const night = (startsAt: string) => cut(startsAt, { location_slug: 'night' });
    // 01:30 "GMT" on 29 March never shows on a London clock: that instant reads 02:30 BST, which is
    // not a time of the 45-minute grid (00:00, 00:45, 02:15, 03:00, ...), counted on the wall clock.
    expect(await refused(night('2026-03-29T01:30:00+00:00'))).toMatchObject({ reason: 'not_on_grid' });
    // 02:15 BST is: sent with either offset, it is booked and answered with the offset in force.
    const response = await postBooking(t, night('2026-03-29T01:15:00+00:00'));
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().data.starts_at).toBe('2026-03-29T02:15:00+01:00');
    // Midnight GMT, before the change, is a slot too.
    await book(night('2026-03-29T00:00:00+00:00'));
  });

  it('stores the reason with an idempotent refusal and replays it', async () => {
    const key = 'refusal-replay-1';
    const first = await postBooking(t, cut('2026-11-24T10:05:00+00:00'), { idempotencyKey: key });
    const again = await postBooking(t, cut('2026-11-24T10:05:00+00:00'), { idempotencyKey: key });
    expect(again.json()).toEqual(first.json());
    expect(again.json().error.reason).toBe('not_on_grid');
  });
});

describe('PATCH /bookings/{reference}: the same reasons, and the policy’s', () => {
  it('refuses a move for each reason a start can be refused for', async () => {
    const reference = await book(cut('2026-11-30T10:00:00+00:00', { staff_id: ids.staff.ana }));
    const moved = async (body: Record<string, unknown>) => {
      const response = await patch(reference, body);
      expect(response.statusCode, response.body).toBe(409);
      return response.json().error;
    };
    expect(await moved({ starts_at: '2026-11-23T09:30:00+00:00' })).toMatchObject({ reason: 'too_soon' });
    expect(await moved({ starts_at: '2027-02-01T10:00:00+00:00' })).toMatchObject({
      reason: 'too_far_ahead',
    });
    expect(await moved({ starts_at: '2026-12-25T10:00:00+00:00' })).toMatchObject({
      reason: 'closed',
      message: 'Soho is closed on 2026-12-25 (Christmas Day).',
    });
    expect(await moved({ starts_at: '2026-11-30T10:10:00+00:00' })).toMatchObject({ reason: 'not_on_grid' });
    expect(await moved({ starts_at: '2026-11-30T10:00:00.0000001+00:00' })).toMatchObject({
      reason: 'not_on_grid',
    });
    // Without staff_id the booking stays with Ana, who does not work Wednesdays (Bo does).
    expect(await moved({ starts_at: '2026-12-02T10:00:00+00:00' })).toMatchObject({
      reason: 'staff_not_working',
      param: 'starts_at',
      message: expect.stringMatching(
        /^Ana does not work then; Ana works at Soho Mon 09:00-17:00; Tue 09:00-17:00/,
      ),
    });
    expect(await moved({ starts_at: '2026-12-01T10:00:00+00:00', staff_id: ids.staff.bo })).toMatchObject({
      reason: 'staff_not_working',
      param: 'starts_at',
    });
    await book(cut('2026-12-01T10:00:00+00:00'));
    expect(await moved({ starts_at: '2026-12-01T10:00:00+00:00' })).toMatchObject({
      reason: 'slot_unavailable',
      param: 'starts_at',
    });
    // Its own time does not count as busy; the move to Bo's Wednesday is fine.
    expect(
      (await patch(reference, { starts_at: '2026-12-02T10:00:00+00:00', staff_id: ids.staff.bo })).statusCode,
    ).toBe(200);
  });

  it('late_change where the policy forbids it, not_changeable once cancelled', async () => {
    const strict = await book(cut('2026-11-24T11:00:00+00:00', { location_slug: 'strict' }));
    t.clock.set('2026-11-23T12:00:00Z');
    const late = await patch(strict, { starts_at: '2026-11-24T13:00:00+00:00' });
    expect(late.json().error).toEqual({
      code: 'conflict',
      message: 'Changes less than 24 hours before the appointment are not allowed here.',
      param: 'starts_at',
      reason: 'late_change',
    });
    const reference = await book(cut('2026-11-30T12:00:00+00:00'));
    await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
    expect((await patch(reference, { starts_at: '2026-11-30T13:00:00+00:00' })).json().error).toMatchObject({
      reason: 'not_changeable',
    });
  });
});

describe('GET /availability: closed_days says which days searched are closed, and why', () => {
  const closedDays = async (date: string, days: number, serviceIds = [ids.services.cut!]) => {
    const response = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/availability?service_ids=${serviceIds.join(',')}&date=${date}&days=${days}`,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.closed_days;
  };

  it('names a closure with its reason and a day nobody works, as a booking refusal would', async () => {
    // Thursday 24th, Saturday 26th and Sunday 27th nobody works at Soho; Christmas is a closure
    // (on a Friday, when Soho would otherwise open); Monday 28th is open.
    expect(await closedDays('2026-12-24', 5)).toEqual([
      { date: '2026-12-24', reason: 'nobody_works', closure_reason: null },
      { date: '2026-12-25', reason: 'closure', closure_reason: 'Christmas Day' },
      { date: '2026-12-26', reason: 'nobody_works', closure_reason: null },
      { date: '2026-12-27', reason: 'nobody_works', closure_reason: null },
    ]);
    expect(await closedDays('2026-11-26', 1)).toEqual([
      { date: '2026-11-26', reason: 'nobody_works', closure_reason: null },
    ]);
    expect(await closedDays('2026-11-25', 1)).toEqual([]);
    // Wednesday: Bo works, but does not colour.
    expect(await closedDays('2026-11-25', 1, [ids.services.colour!])).toEqual([
      { date: '2026-11-25', reason: 'nobody_works', closure_reason: null },
    ]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { catalogueIds, countBookings } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna } from '../helpers/waitlist-fixtures.ts';

/**
 * Recurring appointments through REST (design.md 9.5), on the small catalogue: Ana does Cuts (45
 * minutes and 15 of buffer) and Colour (£20 deposit) at Soho, London, on Mondays and Tuesdays
 * 09:00-17:00. The clock stands on Monday 1 March 2027; the clocks go forward on Sunday 28 March.
 */
const NOW = '2027-03-01T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

interface Occurrence {
  reference: string;
  starts_at: string;
  status: string;
  series_id: string;
  staff_id: string;
  deposit: { amount: number } | null;
  payment_url: string | null;
}

async function bookSeries(
  startsAt: string,
  repeat: { every_weeks: number; count: number },
  options: { service?: 'cut' | 'colour'; clientId?: string; key?: string; staffNamed?: boolean } = {},
) {
  const ids = await catalogueIds(t.database.db);
  return t.request({
    method: 'POST',
    url: '/v1/bookings',
    headers: options.key ? { 'idempotency-key': options.key } : {},
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services[options.service ?? 'cut']],
      ...(options.staffNamed !== false && { staff_id: ids.staff.ana }),
      client_id: options.clientId ?? ids.jo,
      starts_at: startsAt,
      repeat,
    },
  });
}

const occurrencesOf = (response: { body: string }) => json(response).data.series.occurrences as Occurrence[];

describe('recurring series', () => {
  it('books every occurrence at the same local wall time across the clock change, sharing series_id', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 2, count: 3 });
    expect(booked.statusCode, booked.body).toBe(201);
    const data = json(booked).data;
    expect(data.series).toMatchObject({ every_weeks: 2, count: 3 });
    const occurrences = occurrencesOf(booked);
    expect(occurrences.map((o) => o.starts_at)).toEqual([
      '2027-03-16T10:00:00+00:00',
      '2027-03-30T10:00:00+01:00',
      '2027-04-13T10:00:00+01:00',
    ]);
    expect(new Set(occurrences.map((o) => o.series_id))).toEqual(new Set([data.series.id]));
    expect(data.reference).toBe(occurrences[0]!.reference);
    expect(occurrences.every((o) => o.status === 'confirmed')).toBe(true);

    const listed = await t.request({ method: 'GET', url: `/v1/bookings?series_id=${data.series.id}` });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(json(listed).data.map((b: Occurrence) => b.reference)).toEqual(
      occurrences.map((o) => o.reference),
    );
    const single = await t.request({ method: 'GET', url: `/v1/bookings/${occurrences[1]!.reference}` });
    expect(json(single).data.series_id).toBe(data.series.id);

    // One confirmation for the series; each occurrence its own reminder.
    const ids = await catalogueIds(t.database.db);
    const outbox = await listOutbox(t.database.db, ids.organisation);
    const kinds = outbox.map((m) => `${m.kind}:${m.reference}`);
    expect(kinds.filter((k) => k.startsWith('confirmed:'))).toHaveLength(2); // SMS and e-mail
    expect(
      kinds.filter((k) => k.startsWith('confirmed:')).every((k) => k.endsWith(occurrences[0]!.reference)),
    ).toBe(true);
    for (const o of occurrences) expect(kinds.filter((k) => k === `reminder:${o.reference}`)).toHaveLength(2);
  });

  it('lets later occurrences lie beyond max_advance_days when the first is within it', async () => {
    t = await startTestApp({ now: NOW });
    // max_advance_days is 60: the first in two weeks, the sixth 30 weeks on.
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 6, count: 6 });
    expect(booked.statusCode, booked.body).toBe(201);
    expect(occurrencesOf(booked).at(-1)!.starts_at).toBe('2027-10-12T10:00:00+01:00');
    const tooFar = await bookSeries('2027-06-15T10:00:00Z', { every_weeks: 1, count: 2 });
    expect(tooFar.statusCode).toBe(409);
    expect(json(tooFar).error.details.clashes[0]).toMatchObject({ occurrence: 1, reason: 'too_far_ahead' });
  });

  it('offers no alternative for a first occurrence beyond max_advance_days that it could not book either', async () => {
    t = await startTestApp({ now: NOW });
    // Bookable until 30 April; a weekly pair may reach 7 May with its second visit, never its first.
    const refused = await bookSeries('2027-05-04T09:00:00+01:00', { every_weeks: 1, count: 2 });
    expect(refused.statusCode, refused.body).toBe(409);
    const [first] = json(refused).error.details.clashes;
    expect(first).toMatchObject({ occurrence: 1, date: '2027-05-04', reason: 'too_far_ahead' });
    expect(first.alternatives).toEqual([]);
  });

  it('books nothing when any occurrence clashes, and lists each clash with alternatives that day', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const other = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Ola', last_name: 'Other', phone: '+447400123987' },
    });
    const taken = await bookSeries(
      '2027-03-30T09:00:00Z',
      { every_weeks: 1, count: 2 },
      { clientId: json(other).data.id },
    );
    expect(taken.statusCode, taken.body).toBe(201);
    const before = await countBookings(t.database.db);

    const refused = await bookSeries(
      '2027-03-16T10:00:00Z',
      { every_weeks: 2, count: 4 },
      { key: 'series-1' },
    );
    expect(refused.statusCode, refused.body).toBe(409);
    const error = json(refused).error;
    expect(error).toMatchObject({ code: 'conflict', reason: 'series_clash', param: 'starts_at' });
    expect(error.details.clashes).toHaveLength(1);
    const [clash] = error.details.clashes;
    expect(clash).toMatchObject({
      occurrence: 2,
      date: '2027-03-30',
      starts_at: '2027-03-30T10:00:00+01:00',
      reason: 'slot_unavailable',
    });
    expect(clash.alternatives.length).toBeGreaterThan(0);
    for (const alternative of clash.alternatives) {
      expect(alternative.starts_at.startsWith('2027-03-30T')).toBe(true);
      expect(alternative.staff_id).toBe(ids.staff.ana);
    }
    expect(await countBookings(t.database.db)).toBe(before);
  });

  it('replays the whole series for a repeated Idempotency-Key and never books it twice', async () => {
    t = await startTestApp({ now: NOW });
    const first = await bookSeries(
      '2027-03-16T10:00:00Z',
      { every_weeks: 4, count: 3 },
      { key: 'regular-7' },
    );
    expect(first.statusCode, first.body).toBe(201);
    const count = await countBookings(t.database.db);
    const again = await bookSeries(
      '2027-03-16T10:00:00Z',
      { every_weeks: 4, count: 3 },
      { key: 'regular-7' },
    );
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(occurrencesOf(again).map((o) => o.reference)).toEqual(
      occurrencesOf(first).map((o) => o.reference),
    );
    expect(await countBookings(t.database.db)).toBe(count);
    const other = await bookSeries(
      '2027-03-16T10:00:00Z',
      { every_weeks: 4, count: 4 },
      { key: 'regular-7' },
    );
    expect(json(other).error.code).toBe('idempotency_key_reused');
  });

  it('takes a deposit per occurrence, each with its own checkout', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries(
      '2027-03-15T10:00:00Z',
      { every_weeks: 1, count: 2 },
      { service: 'colour' },
    );
    expect(booked.statusCode, booked.body).toBe(201);
    const occurrences = occurrencesOf(booked);
    for (const o of occurrences) {
      expect(o.status).toBe('pending_payment');
      expect(o.deposit).toMatchObject({ amount: 2000 });
      expect(o.payment_url).toMatch(/^http/);
    }
    expect(occurrences[0]!.payment_url).not.toBe(occurrences[1]!.payment_url);
  });

  it('keeps the first stylist when none was named', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries(
      '2027-03-16T10:00:00Z',
      { every_weeks: 1, count: 3 },
      { staffNamed: false },
    );
    expect(booked.statusCode, booked.body).toBe(201);
    expect(new Set(occurrencesOf(booked).map((o) => o.staff_id)).size).toBe(1);
  });

  it('cancels one occurrence, or it and every later one, each under its own policy window', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 4 });
    expect(booked.statusCode, booked.body).toBe(201);
    const refs = occurrencesOf(booked).map((o) => o.reference);
    t.clock.set('2027-03-01T12:00:00Z');
    const one = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[1]}/cancel`,
      payload: { scope: 'one' },
    });
    expect(one.statusCode, one.body).toBe(200);
    expect(json(one).data.following).toEqual([]);

    // The first occurrence is 22 hours away: inside the 24-hour window, late; the others are not.
    const preview = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[0]}/cancel`,
      payload: { scope: 'following', dry_run: true },
    });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(json(preview).data.change).toMatchObject({ dry_run: true, late: true });
    expect(json(preview).data.following.map((c: { reference: string }) => c.reference)).toEqual([
      refs[2],
      refs[3],
    ]);
    expect(json(preview).data.following[0].change).toMatchObject({ dry_run: true, late: false });

    const all = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[0]}/cancel`,
      payload: { scope: 'following', reason: 'Moving away' },
    });
    expect(all.statusCode, all.body).toBe(200);
    expect(json(all).data.following.map((c: { reference: string }) => c.reference)).toEqual([
      refs[2],
      refs[3],
    ]);
    for (const ref of refs) {
      const read = await t.request({ method: 'GET', url: `/v1/bookings/${ref}` });
      expect(json(read).data.status).toBe('cancelled');
    }
  });

  it('cancels the following visits when asked of a visit cancelled on its own meanwhile, and answers again once none is left', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-02T10:00:00Z', { every_weeks: 1, count: 4 });
    expect(booked.statusCode, booked.body).toBe(201);
    const refs = occurrencesOf(booked).map((o) => o.reference);
    const alone = await t.request({ method: 'POST', url: `/v1/bookings/${refs[0]}/cancel`, payload: {} });
    expect(alone.statusCode, alone.body).toBe(200);
    const cancelledAt = json(alone).data.cancelled_at;

    t.clock.set('2027-03-01T10:00:00Z');
    const ask = (payload: Record<string, unknown>) =>
      t.request({
        method: 'POST',
        url: `/v1/bookings/${refs[0]}/cancel`,
        payload: { scope: 'following', reason: 'Moving away', ...payload },
      });
    const preview = await ask({ dry_run: true });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(json(preview).data.following.map((c: { reference: string }) => c.reference)).toEqual(
      refs.slice(1),
    );

    const following = await ask({});
    expect(following.statusCode, following.body).toBe(200);
    // The visit asked about, as it was cancelled; the later ones, cancelled now.
    expect(json(following).data).toMatchObject({
      reference: refs[0],
      status: 'cancelled',
      cancelled_at: cancelledAt,
      change: { dry_run: false, late: false },
    });
    expect(json(following).data.following.map((c: { reference: string }) => c.reference)).toEqual(
      refs.slice(1),
    );
    for (const ref of refs) {
      const read = await t.request({ method: 'GET', url: `/v1/bookings/${ref}` });
      expect(json(read).data.status).toBe('cancelled');
    }

    // Asked once more: nothing is left to cancel, and the answer says so.
    const again = await ask({});
    expect(again.statusCode, again.body).toBe(200);
    expect(json(again).data).toMatchObject({ reference: refs[0], cancelled_at: cancelledAt, following: [] });
    // A visit cancelled on its own is still refused on its own.
    const one = await t.request({ method: 'POST', url: `/v1/bookings/${refs[0]}/cancel`, payload: {} });
    expect(one.statusCode, one.body).toBe(409);
  });

  it('refuses "this and the following" of a booking of no series cancelled already, as any change of one not live', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookAna(t, '2027-03-02T10:00:00Z');
    expect(booked.statusCode, booked.body).toBe(201);
    const { reference } = json(booked).data;
    const cancel = (payload: Record<string, unknown>) =>
      t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload });
    expect((await cancel({})).statusCode).toBe(200);
    // No series, so nothing follows it: cancelled already is not live (design.md 6), whatever the scope.
    for (const payload of [{ scope: 'following' }, { scope: 'following', dry_run: true }]) {
      const again = await cancel(payload);
      expect(again.statusCode, again.body).toBe(409);
      expect(json(again).error).toMatchObject({ code: 'conflict', reason: 'not_changeable' });
    }
  });

  it('refuses "this and the following" of a visit too late to move as its own late_change, offering no other times', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 2, count: 3 });
    const refs = occurrencesOf(booked).map((o) => o.reference);
    // 700 hours from 1 March: the visits of 16 and 30 March are late, and late moves are refused.
    await t.database.db
      .updateTable('locations')
      .set({ cancellation_window_hours: 700, late_reschedule: 'forbid' })
      .where('slug', '=', 'soho')
      .execute();
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-16T11:00:00Z', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(409);
    // Not a clash of times "not free" with 11 am, the very time asked, among the free ones.
    expect(json(moved).error).toMatchObject({
      code: 'conflict',
      reason: 'late_change',
      message: 'Changes less than 700 hours before the appointment are not allowed here.',
    });
  });

  it('names the later visit whose stylist has gone when the following cannot move, not the visit asked about', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    const refs = occurrencesOf(booked).map((o) => o.reference);
    // The third visit is with Cy, who has since left (inactive).
    const ids = await catalogueIds(t.database.db);
    await t.database.db
      .updateTable('bookings')
      .set({ staff_id: ids.staff.cy! })
      .where('reference', '=', refs[2]!)
      .execute();
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-16T11:00:00Z', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(409);
    expect(json(moved).error.reason).toBe('series_clash');
    expect(
      json(moved).error.details.clashes.map(
        (c: { occurrence: number; date: string; reason: string }) => `${c.occurrence} ${c.date} ${c.reason}`,
      ),
    ).toEqual(['3 2027-03-30 staff_not_working']);
    const first = await t.request({ method: 'GET', url: `/v1/bookings/${refs[0]}` });
    expect(json(first).data.starts_at).toBe('2027-03-16T10:00:00+00:00');
  });

  it('moves an occurrence and the following ones by the same days to the new wall time, or none of them', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 3 });
    const refs = occurrencesOf(booked).map((o) => o.reference);
    // Tuesday 10:00 to Monday 11:00 from the second on: 22, 29 March (after the change: +01:00).
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[1]}`,
      payload: { starts_at: '2027-03-22T11:00:00Z', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(json(moved).data.starts_at).toBe('2027-03-22T11:00:00+00:00');
    expect(json(moved).data.following.map((b: Occurrence) => b.starts_at)).toEqual([
      '2027-03-29T11:00:00+01:00',
    ]);
    const first = await t.request({ method: 'GET', url: `/v1/bookings/${refs[0]}` });
    expect(json(first).data.starts_at).toBe('2027-03-16T10:00:00+00:00');

    // Moving them all a week later each moves into time the next one leaves.
    const week = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-23T10:00:00Z', scope: 'following' },
    });
    expect(week.statusCode, week.body).toBe(200);
    // A week later each, at the first one's new wall time (10:00).
    expect(json(week).data.following.map((b: Occurrence) => b.starts_at)).toEqual([
      '2027-03-29T10:00:00+01:00',
      '2027-04-05T10:00:00+01:00',
    ]);

    // And a week earlier again: the one asked about moves first, each then into time just left.
    const back = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-16T10:00:00Z', scope: 'following' },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect(json(back).data.following.map((b: Occurrence) => b.starts_at)).toEqual([
      '2027-03-22T10:00:00+00:00',
      '2027-03-29T10:00:00+01:00',
    ]);

    // Ana does not work on Wednesdays: from Monday 22 March nine days on, both clash, nothing moves.
    const refused = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[1]}`,
      payload: { starts_at: '2027-03-31T09:00:00Z', scope: 'following' },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(json(refused).error.reason).toBe('series_clash');
    // A move refused: nothing was moved (not "booked", which the visits are and stay).
    expect(json(refused).error.message).toMatch(/^Nothing was moved: 2 dates of the series are not free/);
    const clashes = json(refused).error.details.clashes;
    expect(
      clashes.map(
        (c: { occurrence: number; date: string; reason: string }) => `${c.occurrence} ${c.date} ${c.reason}`,
      ),
    ).toEqual(['2 2027-03-31 staff_not_working', '3 2027-04-07 staff_not_working']);
    const last = await t.request({ method: 'GET', url: `/v1/bookings/${refs[2]}` });
    expect(json(last).data.starts_at).toBe('2027-03-29T10:00:00+01:00');

    // Alone, the occurrence asked about answers its own refusal.
    const alone = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[2]}`,
      payload: { starts_at: '2027-04-07T09:00:00Z', scope: 'following' },
    });
    expect(json(alone).error.reason).toBe('staff_not_working');
  });

  it('offers, for a later visit a move of the following cannot take, the free times of its date, its own included', async () => {
    t = await startTestApp({ now: NOW });
    // Every six weeks from Tuesday 16 March: 27 April, and 20 July beyond max_advance_days (60).
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 6, count: 4 });
    expect(booked.statusCode, booked.body).toBe(201);
    const refs = occurrencesOf(booked).map((o) => o.reference);
    // Someone else at 11:00 on 27 April and 20 July.
    const other = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Al', last_name: 'Smith', email: 'al@example.com' },
    });
    const taken = await bookSeries(
      '2027-04-27T11:00:00+01:00',
      { every_weeks: 12, count: 2 },
      { clientId: json(other).data.id },
    );
    expect(taken.statusCode, taken.body).toBe(201);

    const refused = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-16T11:00:00Z', scope: 'following' },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    const clashes = json(refused).error.details.clashes;
    expect(clashes.map((c: { occurrence: number }) => c.occurrence)).toEqual([2, 4]);
    // Nearest 11:00: the visit's own 10:00 (it may stay or move within its own time), then noon.
    expect(clashes[0].alternatives.map((a: { starts_at: string }) => a.starts_at)).toEqual(
      expect.arrayContaining(['2027-04-27T10:00:00+01:00', '2027-04-27T12:00:00+01:00']),
    );
    // A visit the series took beyond max_advance_days has the free times of its date too.
    expect(clashes[1].alternatives.map((a: { starts_at: string }) => a.starts_at)).toContain(
      '2027-07-20T12:00:00+01:00',
    );
  });

  it('refuses a start whose local date is past 9999 or before year 0 as starts_at, not a 500 or "date"', async () => {
    t = await startTestApp({ now: NOW });
    // Both are valid RFC 3339; in London the first is 10000-01-01 and the second 31 December of year -1.
    const starts = ['9999-12-31T23:00:00-12:00', '0000-01-01T00:00:00+14:00'];
    const answers = [];
    for (const startsAt of starts) {
      answers.push(await bookSeries(startsAt, { every_weeks: 1, count: 3 }));
      answers.push(await bookSeries(startsAt, { every_weeks: 1, count: 3 }, { staffNamed: false }));
    }
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 1, count: 2 });
    const [reference] = occurrencesOf(booked).map((o) => o.reference);
    for (const startsAt of starts) {
      for (const scope of ['one', 'following']) {
        answers.push(
          await t.request({
            method: 'PATCH',
            url: `/v1/bookings/${reference}`,
            payload: { starts_at: startsAt, scope },
          }),
        );
      }
    }
    for (const answer of answers) {
      expect(answer.statusCode, answer.body).toBe(400);
      expect(json(answer).error).toMatchObject({ code: 'invalid_request', param: 'starts_at' });
    }
  });

  it('answers 404 for an unknown series and 400 for a repeat out of bounds', async () => {
    t = await startTestApp({ now: NOW });
    const unknown = await t.request({
      method: 'GET',
      url: '/v1/bookings?series_id=0190a0b0-0000-7000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
    const bad = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 13, count: 27 });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.param).toMatch(/^repeat/);
  });
});

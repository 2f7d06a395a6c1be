import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds, countBookings } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { connectInProcess } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Recurring appointments (design.md 9.5) where the other series tests do not look: the bounds of
 * `repeat` one past each end over REST and MCP, the webhook events of a series (one per visit, for
 * each change of "this and the following"), and the wall time kept by a move of the following across
 * London's autumn clock change and Lord Howe's half-hour one. The small catalogue: Ana does Cuts at
 * Soho on Mondays and Tuesdays 09:00-17:00; Monday 1 March 2027.
 */
const NOW = '2027-03-01T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

async function bookSeries(startsAt: string, repeat: unknown, key?: string) {
  const ids = await catalogueIds(t.database.db);
  return t.request({
    method: 'POST',
    url: '/v1/bookings',
    headers: key ? { 'idempotency-key': key } : {},
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: startsAt,
      repeat,
    },
  });
}

const referencesOf = (response: { body: string }) =>
  (json(response).data.series.occurrences as { reference: string }[]).map((o) => o.reference);

/** The webhook events written so far, as `type reference`, in order. */
async function events(): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('webhook_events')
    .select(['type', 'payload'])
    .orderBy('seq')
    .execute();
  return rows.map((row) => `${row.type} ${JSON.parse(row.payload).data.reference}`);
}

describe('repeat out of bounds', () => {
  const bounds: [string, unknown, string][] = [
    ['every_weeks 0', { every_weeks: 0, count: 3 }, 'repeat.every_weeks must be at least 1.'],
    ['every_weeks 13', { every_weeks: 13, count: 3 }, 'repeat.every_weeks must be at most 12.'],
    ['count 1', { every_weeks: 2, count: 1 }, 'repeat.count must be at least 2.'],
    ['count 27', { every_weeks: 2, count: 27 }, 'repeat.count must be at most 26.'],
    ['count 2.5', { every_weeks: 2, count: 2.5 }, 'repeat.count must be a whole number (an integer).'],
    ['every_weeks "2"', { every_weeks: '2', count: 3 }, 'repeat.every_weeks must be a number, not a string.'],
  ];

  it.each(bounds)(
    '%s: 400 invalid_request in the contract’s envelope, nothing booked',
    async (_, repeat, message) => {
      t = await startTestApp({ now: NOW });
      const before = await countBookings(t.database.db);
      const refused = await bookSeries('2027-03-16T10:00:00Z', repeat);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(json(refused)).toEqual({ error: { code: 'invalid_request', message, param: 'repeat' } });
      expect(await countBookings(t.database.db)).toBe(before);
    },
  );

  it('is refused by MCP book naming the argument and its bounds, nothing booked', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const before = await countBookings(t.database.db);
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      for (const [repeat, said] of [
        [{ every_weeks: 0, count: 3 }, 'repeat.every_weeks is at least 1'],
        [{ every_weeks: 13, count: 3 }, 'repeat.every_weeks is at most 12'],
        [{ every_weeks: 2, count: 1 }, 'repeat.count is at least 2'],
        [{ every_weeks: 2, count: 27 }, 'repeat.count is at most 26'],
        [{ every_weeks: 1.5, count: 3 }, 'repeat.every_weeks is a whole number from 1 to 12'],
      ] as const) {
        const answer = await mcp.raw('book', {
          location: 'soho',
          services: 'cut',
          staff: 'Ana',
          starts_at: '2027-03-16T10:00:00Z',
          client_id: ids.jo,
          repeat,
        });
        expect(answer.isError, JSON.stringify(answer)).toBe(true);
        expect(JSON.stringify(answer.content)).toContain(said);
      }
    } finally {
      await mcp.close();
    }
    expect(await countBookings(t.database.db)).toBe(before);
  });
});

describe('the webhook events of a series', () => {
  it('are one per visit: booked, moved with the following, cancelled from the last and from the first', async () => {
    t = await startTestApp({ now: NOW });
    const endpoint = await t.request({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      payload: {
        url: 'https://hooks.example.com/series',
        events: ['booking.created', 'booking.rescheduled', 'booking.cancelled'],
      },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);

    // A series refused (its third Tuesday taken) writes no event.
    const ids = await catalogueIds(t.database.db);
    const taken = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.ana,
        client_id: ids.jo,
        starts_at: '2027-03-23T10:00:00Z',
      },
    });
    expect(taken.statusCode, taken.body).toBe(201);
    expect(await events()).toHaveLength(1);
    const clash = await bookSeries('2027-03-09T10:00:00Z', { every_weeks: 1, count: 3 }, 'clash-1');
    expect(clash.statusCode, clash.body).toBe(409);
    expect(await events()).toHaveLength(1);

    const booked = await bookSeries('2027-03-16T11:00:00Z', { every_weeks: 2, count: 4 }, 'series-1');
    expect(booked.statusCode, booked.body).toBe(201);
    const refs = referencesOf(booked);
    expect((await events()).slice(1)).toEqual(refs.map((r) => `booking.created ${r}`));
    // Replayed under its key: nothing new happens, so nothing new is told.
    const replay = await bookSeries('2027-03-16T11:00:00Z', { every_weeks: 2, count: 4 }, 'series-1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await events()).toHaveLength(1 + refs.length);

    // The second visit and the following, a day earlier at 14:00: an event for each visit moved.
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[1]}`,
      payload: { starts_at: '2027-03-29T14:00:00+01:00', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await events()).slice(1 + refs.length)).toEqual(
      refs.slice(1).map((r) => `booking.rescheduled ${r}`),
    );
    const afterMove = (await events()).length;

    // Cancelling the last visit with the following cancels it alone.
    const last = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[3]}/cancel`,
      payload: { scope: 'following' },
    });
    expect(last.statusCode, last.body).toBe(200);
    expect(json(last).data).toMatchObject({ reference: refs[3], status: 'cancelled', following: [] });
    expect((await events()).slice(afterMove)).toEqual([`booking.cancelled ${refs[3]}`]);

    // From the first: it and every later visit still live, each once.
    const first = await t.request({
      method: 'POST',
      url: `/v1/bookings/${refs[0]}/cancel`,
      payload: { scope: 'following' },
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(json(first).data.following.map((c: { reference: string }) => c.reference)).toEqual([
      refs[1],
      refs[2],
    ]);
    expect((await events()).slice(afterMove + 1)).toEqual(
      refs.slice(0, 3).map((r) => `booking.cancelled ${r}`),
    );
    for (const ref of refs) {
      const read = json(await t.request({ method: 'GET', url: `/v1/bookings/${ref}` })).data;
      expect(read.status, ref).toBe('cancelled');
    }
  });
});

describe('a move of the following across a clock change', () => {
  it('keeps the new wall time on every later visit, across London’s autumn change', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookSeries('2027-03-16T10:00:00Z', { every_weeks: 12, count: 4 });
    expect(booked.statusCode, booked.body).toBe(201);
    expect(json(booked).data.series.occurrences.map((o: { starts_at: string }) => o.starts_at)).toEqual([
      '2027-03-16T10:00:00+00:00',
      '2027-06-08T10:00:00+01:00',
      '2027-08-31T10:00:00+01:00',
      '2027-11-23T10:00:00+00:00',
    ]);
    const refs = referencesOf(booked);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[1]}`,
      payload: { starts_at: '2027-06-07T11:30:00+01:00', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const data = json(moved).data;
    expect([data.starts_at, ...data.following.map((b: { starts_at: string }) => b.starts_at)]).toEqual([
      '2027-06-07T11:30:00+01:00',
      '2027-08-30T11:30:00+01:00',
      '2027-11-22T11:30:00+00:00',
    ]);
  });

  it('books and moves a series at its wall time across Lord Howe’s half-hour change', async () => {
    const catalogue = smallCatalogue();
    const soho = catalogue.locations.find((l) => l.ref === 'soho')!;
    soho.timezone = 'Australia/Lord_Howe';
    t = await startTestApp({ catalogues: [catalogue], now: NOW });
    // Tuesdays at 10 am, Lord Howe's summer (+11:00) until Sunday 4 April 2027, then +10:30.
    const booked = await bookSeries('2027-03-23T10:00:00+11:00', { every_weeks: 1, count: 3 });
    expect(booked.statusCode, booked.body).toBe(201);
    expect(json(booked).data.series.occurrences.map((o: { starts_at: string }) => o.starts_at)).toEqual([
      '2027-03-23T10:00:00+11:00',
      '2027-03-30T10:00:00+11:00',
      '2027-04-06T10:00:00+10:30',
    ]);
    const refs = referencesOf(booked);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${refs[0]}`,
      payload: { starts_at: '2027-03-22T15:30:00+11:00', scope: 'following' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const data = json(moved).data;
    expect([data.starts_at, ...data.following.map((b: { starts_at: string }) => b.starts_at)]).toEqual([
      '2027-03-22T15:30:00+11:00',
      '2027-03-29T15:30:00+11:00',
      '2027-04-05T15:30:00+10:30',
    ]);
  });
});

describe('a series whose first visit is further ahead than the location takes bookings', () => {
  it('lists every visit as too far ahead by the location’s own max_advance_days, over REST', async () => {
    t = await startTestApp({ now: NOW });
    // Soho takes bookings 60 days ahead: until Friday 30 April.
    const refused = await bookSeries('2027-05-04T10:00:00+01:00', { every_weeks: 1, count: 3 });
    expect(refused.statusCode, refused.body).toBe(409);
    const error = json(refused).error;
    expect(error).toMatchObject({ code: 'conflict', reason: 'series_clash' });
    expect(error.details.clashes).toEqual(
      ['2027-05-04', '2027-05-11', '2027-05-18'].map((date, i) => ({
        occurrence: i + 1,
        date,
        starts_at: `${date}T10:00:00+01:00`,
        reason: 'too_far_ahead',
        message: 'That date is too far ahead: Soho takes bookings up to 60 days ahead (until 2027-04-30).',
        alternatives: [],
      })),
    );
  });

  it('is said by MCP book as too far ahead, not as "not free"', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const answer = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-05-04T10:00:00+01:00',
        client_id: ids.jo,
        repeat: { every_weeks: 1, count: 2 },
      });
      expect(answer, JSON.stringify(answer)).toMatchObject({ ok: false, reason: 'series_clash' });
      expect(String(answer.hint)).toContain(
        'Tuesday 4 May is further ahead than Soho takes bookings (until Friday 30 April); Tuesday 11 May is further ahead than Soho takes bookings (until Friday 30 April).',
      );
      expect(String(answer.hint)).not.toContain('not free');
      // A first visit inside the notice the location needs: too soon, with the free times later that day.
      const soon = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: '2027-03-01T09:30:00Z',
        client_id: ids.jo,
        repeat: { every_weeks: 1, count: 2 },
      });
      expect(soon, JSON.stringify(soon)).toMatchObject({ ok: false, reason: 'series_clash' });
      expect(String(soon.hint)).toContain(
        'Nothing was booked: Today, Monday 1 March: that time is too soon to book (free that day: 10 am with Ana,',
      );
    } finally {
      await mcp.close();
    }
  });
});

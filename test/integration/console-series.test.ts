import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import {
  addAcmeAccount,
  expectNamedControls,
  type SignedIn,
  signInToConsole,
} from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console offers what REST and MCP offer for a visit of a series (design.md 9.5): a change of this
 * visit only, or of it and every later one. On the small catalogue (acme-hair): Ana does Cuts at Soho,
 * London, on Mondays and Tuesdays. The clock stands on Monday 1 March 2027.
 */
const PASSWORD = 'correct horse battery';
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

async function weeklySeries(count: number): Promise<string[]> {
  const ids = await catalogueIds(t.database.db);
  const booked = await t.request({
    method: 'POST',
    url: '/v1/bookings',
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: '2027-03-02T10:00:00Z',
      repeat: { every_weeks: 1, count },
    },
  });
  expect(booked.statusCode, booked.body).toBe(201);
  return (json(booked).data.series.occurrences as { reference: string }[]).map((o) => o.reference);
}

async function read(reference: string): Promise<{ status: string; starts_at: string }> {
  return json(await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).data;
}

async function desk(): Promise<SignedIn> {
  await addAcmeAccount(t, 'desk@acme.test', 'staff', PASSWORD);
  return signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
}

describe('a visit of a series in the console', () => {
  it('cancels this visit only, or it and every later one, as chosen', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await weeklySeries(4);
    const me = await desk();

    const page = await me.get(`/console/bookings/${refs[1]}/cancel`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<input type="radio" name="scope" value="one" checked> This visit only');
    expect(page.body).toContain('This visit and the 2 later visits');
    expectNamedControls(page.body);
    // The last visit has none after it: nothing to choose.
    expect((await me.get(`/console/bookings/${refs[3]}/cancel`)).body).not.toContain('name="scope"');

    const one = await me.post(`/console/bookings/${refs[1]}/cancel`, { scope: 'one' });
    expect(one.statusCode, one.body).toBe(303);
    expect((await Promise.all(refs.map(read))).map((b) => b.status)).toEqual([
      'confirmed',
      'cancelled',
      'confirmed',
      'confirmed',
    ]);

    expect(one.headers.location).toBe(`/console/bookings/${refs[1]}?done=cancelled`);
    const following = await me.post(`/console/bookings/${refs[0]}/cancel`, { scope: 'following' });
    expect(following.statusCode, following.body).toBe(303);
    // The page it leads to says the later visits went too, not just "Cancelled.".
    expect(following.headers.location).toBe(`/console/bookings/${refs[0]}?done=cancelled_following`);
    expect((await me.get(String(following.headers.location))).body).toContain(
      'Cancelled, with the later visits of its series.',
    );
    expect((await Promise.all(refs.map(read))).map((b) => b.status)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
  });

  it('moves this visit only, or it and every later one by as many days, or none when one cannot move', async () => {
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const refs = await weeklySeries(3);
    const me = await desk();

    const only = await me.get(`/console/bookings/${refs[0]}/reschedule?date=2027-03-08`);
    expect(only.body).toContain('a time picked moves this visit only');
    expect(only.body).not.toContain('name="scope" value="following"');
    const all = await me.get(`/console/bookings/${refs[0]}/reschedule?date=2027-03-08&scope=following`);
    expect(all.body).toContain('A time picked moves this visit and the 2 later visits');
    expect(all.body).toContain('<input type="hidden" name="scope" value="following">');
    expectNamedControls(all.body);

    // Monday 8 March 11:00 instead of Tuesday 2 March 10:00: each visit six days later, at 11:00.
    const moved = await me.post(`/console/bookings/${refs[0]}/reschedule`, {
      starts_at: '2027-03-08T11:00:00.000Z',
      scope: 'following',
    });
    expect(moved.statusCode, moved.body).toBe(303);
    expect((await me.get(String(moved.headers.location))).body).toContain(
      'Rescheduled, with the later visits of its series.',
    );
    expect((await Promise.all(refs.map(read))).map((b) => b.starts_at)).toEqual([
      '2027-03-08T11:00:00+00:00',
      '2027-03-15T11:00:00+00:00',
      '2027-03-22T11:00:00+00:00',
    ]);

    // Wednesday: Ana does not work then; nothing moves and the page says which visits clash.
    const refused = await me.post(`/console/bookings/${refs[0]}/reschedule`, {
      starts_at: '2027-03-10T11:00:00.000Z',
      scope: 'following',
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('Nothing was moved');
    expect((await read(refs[2]!)).starts_at).toBe('2027-03-22T11:00:00+00:00');

    // One visit alone.
    const alone = await me.post(`/console/bookings/${refs[1]}/reschedule`, {
      starts_at: '2027-03-16T11:00:00.000Z',
    });
    expect(alone.statusCode, alone.body).toBe(303);
    expect(alone.headers.location).toBe(`/console/bookings/${refs[1]}?done=rescheduled`);
    expect((await Promise.all(refs.map(read))).map((b) => b.starts_at)).toEqual([
      '2027-03-08T11:00:00+00:00',
      '2027-03-16T11:00:00+00:00',
      '2027-03-22T11:00:00+00:00',
    ]);
  });
});

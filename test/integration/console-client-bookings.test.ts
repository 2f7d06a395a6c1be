import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { addAcmeAccount, signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console's Clients page for a client with many bookings (design.md 8.4, 9.5): the desk asked
 * "when is my next appointment?" finds it, however many visits a weekly series booked ahead, and
 * still sees the visits just past. The small catalogue: Ana does Cuts at Soho on Mondays and Tuesdays.
 */
const NOW = '2027-03-01T09:00:00Z';
const PASSWORD = 'correct horse battery staple';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ now: NOW });
  await addAcmeAccount(t, 'desk@acme.test', 'staff', PASSWORD);
});
afterAll(async () => {
  await t.close();
});

describe('console: a client found', () => {
  it('shows the next visits first, however many are booked ahead, and the last ones before', async () => {
    const ids = await catalogueIds(t.database.db);
    const book = (startsAt: string, repeat?: { every_weeks: number; count: number }) =>
      t.request({
        method: 'POST',
        url: '/v1/bookings',
        payload: {
          location_slug: 'soho',
          service_ids: [ids.services.cut],
          staff_id: ids.staff.ana,
          client_id: ids.jo,
          starts_at: startsAt,
          ...(repeat && { repeat }),
        },
      });
    const past = await book('2027-03-02T10:00:00Z');
    expect(past.statusCode, past.body).toBe(201);
    const series = await book('2027-03-08T10:00:00Z', { every_weeks: 1, count: 20 });
    expect(series.statusCode, series.body).toBe(201);
    const occurrences = JSON.parse(series.body).data.series.occurrences as { reference: string }[];
    t.clock.set('2027-03-03T09:00:00Z');

    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
    const page = await desk.get('/console/clients?q=Jo');
    expect(page.statusCode).toBe(200);
    const listed = [...page.body.matchAll(/<a href="\/console\/bookings\/([^"]+)">/g)].map((m) => m[1]);
    // The next visit (Monday 8 March) comes first, then the following weeks, soonest first.
    expect(listed[0]).toBe(occurrences[0]!.reference);
    expect(listed.slice(0, 3)).toEqual(occurrences.slice(0, 3).map((o) => o.reference));
    // The visit of yesterday is there too.
    expect(listed).toContain(JSON.parse(past.body).data.reference);
  });
});

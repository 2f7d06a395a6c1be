import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { type CalendarServer, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { expectNamedControls, signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console's Calendars page (design.md 9.6) through HTTP as a signed-in browser: an owner makes a
 * feed (its address shown once, and served), revokes it (404 from then on); a busy calendar that
 * fails says so; desk staff may not see the page.
 */

const PASSWORD = 'correct horse battery staple';
let t: TestApp;
let server: CalendarServer;
/** The path of a Google Calendar "secret address in iCal format": its private-… part is the secret. */
const GOOGLE_PATH =
  '/calendar/ical/ana.stylist%40gmail.com/private-3f9c2a7e5b1d4c8a9e0f6b2d7a4c1e85/basic.ics';

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/ana.ics?secret=abcdefghijkl', { status: 503 });
  server.serve(GOOGLE_PATH, { status: 503 });
  const catalogue = smallCatalogue();
  (catalogue.staff[0] as Record<string, unknown>).busy_calendars = [
    server.url('/ana.ics?secret=abcdefghijkl'),
    server.url(GOOGLE_PATH),
  ];
  t = await startTestApp({ catalogues: [catalogue] });
  for (const [email, role] of [
    ['owner@acme.test', 'owner'],
    ['desk@acme.test', 'staff'],
  ] as const) {
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email, role, password: PASSWORD },
      t.clock.nowMs(),
    );
  }
});

afterAll(async () => {
  await t.close();
  await server.close();
});

describe('console: Calendars', () => {
  it('an owner makes a feed, sees its address once, and revokes it', async () => {
    const owner = await signInToConsole(t, 'acme-hair', 'owner@acme.test', PASSWORD);
    const page = await owner.get('/console/calendars');
    expect(page.statusCode).toBe(200);
    expectNamedControls(page.body);
    expect(page.body).toContain('No feed has been made.');
    const ana = /<option value="([^"]+)">Ana<\/option>/.exec(page.body)![1]!;
    // Cy, out of the catalogue, is not offered: a feed of theirs would not be served.
    expect(page.body).not.toContain('>Cy</option>');

    const made = await owner.post('/console/calendars/feeds', { staff_id: ana });
    expect(made.statusCode).toBe(201);
    expectNamedControls(made.body);
    const url = /aria-label="Address of the new calendar feed">([^<]+)</.exec(made.body)![1]!;
    expect(url).toMatch(/^http:\/\/localhost(:80)?\/ical\/[\w-]{43}\.ics$/);
    const path = new URL(url).pathname;
    const served = await t.app.inject({ method: 'GET', url: path });
    expect(served.statusCode).toBe(200);
    expect(served.body.startsWith('BEGIN:VCALENDAR\r\n')).toBe(true);

    // Shown once: the list names the feed, never its address again.
    const listed = await owner.get('/console/calendars');
    expect(listed.body).not.toContain(path);
    const revoke = /action="(\/console\/calendars\/feeds\/[^"]+\/revoke)"/.exec(listed.body)![1]!;
    expect((await owner.post(revoke)).statusCode).toBe(303);
    expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
    expect((await owner.get('/console/calendars')).body).toContain('Revoked');
    // Revoking again: not found, said on the console's error page.
    expect((await owner.post(revoke)).statusCode).toBe(404);
  });

  it('makes one feed when its form is sent again (the answer reloaded)', async () => {
    const owner = await signInToConsole(t, 'acme-hair', 'owner@acme.test', PASSWORD);
    const page = await owner.get('/console/calendars');
    const form = /<form method="post" action="\/console\/calendars\/feeds"[^>]*>([\s\S]*?)<\/form>/.exec(
      page.body,
    )![1]!;
    const fields = Object.fromEntries(
      [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
        .filter((m) => m[1] !== '_csrf')
        .map((m) => [m[1]!, m[2]!]),
    );
    const bo = /<option value="([^"]+)">Bo<\/option>/.exec(page.body)![1]!;
    const feedsOfBo = async () =>
      t.database.db.selectFrom('staff_calendar_feeds').select('id').where('staff_id', '=', bo).execute();
    expect(await feedsOfBo()).toHaveLength(0);

    const made = await owner.post('/console/calendars/feeds', { ...fields, staff_id: bo });
    expect(made.statusCode, made.body).toBe(201);
    const again = await owner.post('/console/calendars/feeds', { ...fields, staff_id: bo });
    expect(again.statusCode).toBe(303);
    expect(await feedsOfBo()).toHaveLength(1);
    const shown = await owner.get(String(again.headers.location));
    expect(shown.body).toContain('already sent');
    expect(shown.body).not.toMatch(/\/ical\/[\w-]{43}\.ics/);
  });

  it('shows how each busy calendar fares, without its full address', async () => {
    const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 4096 });
    await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
    const owner = await signInToConsole(t, 'acme-hair', 'owner@acme.test', PASSWORD);
    const body = (await owner.get('/console/calendars')).body;
    expect(body).toContain('the server answered 503');
    expect(body).toContain('Not yet');
    expect(body).not.toContain('secret=abcdefghijkl');
    // Each told apart by what is left of its address: the Google one by its path, its secret cut to
    // its last four characters.
    expect(body).toContain('/ana.ics?secret=…ijkl</code>');
    expect(body).toContain('/calendar/ical/….com/…1e85/basic.ics</code>');
    expect(body).not.toContain('3f9c2a7e5b1d4c8a');
  });

  it('is for owners and admins only', async () => {
    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
    expect((await desk.get('/console/calendars')).statusCode).toBe(403);
    expect((await desk.get('/console/diary')).body).not.toContain('/console/calendars');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds, offeredStarts } from '../helpers/booking-fixtures.ts';
import {
  type CalendarServer,
  ics,
  LONDON_VTIMEZONE,
  startCalendarServer,
} from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * External busy calendars (design.md 9.6) through their real interfaces: a catalogue with
 * busy_calendars imported, a loopback server of ICS files, the refresher run with the test clock, and
 * REST availability that stops offering the busy times. The clock starts Monday 2026-11-23 09:00 UTC.
 */

let t: TestApp;
let server: CalendarServer;
let ids: { cut: string; ana: string; bo: string };
const REFRESH_MS = 300_000;
// Long enough for a file on loopback on a loaded machine (1 s was not, with a full test run beside it);
// the hanging one waits it out.
const fetcher = new CalendarFetcher(true, { timeoutMs: 3_000, maxBytes: 4096 });
const refresh = () =>
  refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: REFRESH_MS });

const ANA_CALENDAR = (extra: string[] = []) =>
  ics(
    ...LONDON_VTIMEZONE,
    // One hour on Tuesday 24th.
    'BEGIN:VEVENT',
    'UID:dentist@example.com',
    'DTSTAMP:20261101T000000Z',
    'DTSTART;TZID=Europe/London:20261124T100000',
    'DTEND;TZID=Europe/London:20261124T110000',
    'SUMMARY:Dentist',
    'END:VEVENT',
    // Every Monday 13:00-14:00 London time, across the clock change of 28 March 2027; not on 30
    // November (EXDATE); on 7 December moved to 15:00 (RECURRENCE-ID).
    'BEGIN:VEVENT',
    'UID:school-run@example.com',
    'DTSTAMP:20261101T000000Z',
    'DTSTART;TZID=Europe/London:20260302T130000',
    'DTEND;TZID=Europe/London:20260302T140000',
    'RRULE:FREQ=WEEKLY;BYDAY=MO',
    'EXDATE;TZID=Europe/London:20261130T130000',
    'SUMMARY:School run',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:school-run@example.com',
    'DTSTAMP:20261101T000000Z',
    'RECURRENCE-ID;TZID=Europe/London:20261207T130000',
    'DTSTART;TZID=Europe/London:20261207T150000',
    'DTEND;TZID=Europe/London:20261207T160000',
    'SUMMARY:School run (late)',
    'END:VEVENT',
    // Free time and a called-off event: neither blocks.
    'BEGIN:VEVENT',
    'UID:reminder@example.com',
    'DTSTAMP:20261101T000000Z',
    'DTSTART:20261124T140000Z',
    'DTEND:20261124T150000Z',
    'TRANSP:TRANSPARENT',
    'SUMMARY:Reminder',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:cancelled@example.com',
    'DTSTAMP:20261101T000000Z',
    'DTSTART:20261124T150000Z',
    'DTEND:20261124T160000Z',
    'STATUS:CANCELLED',
    'SUMMARY:Called off',
    'END:VEVENT',
    ...extra,
  );

const ANA_CALENDAR_WITH_GYM = ANA_CALENDAR([
  'BEGIN:VEVENT',
  'UID:gym@example.com',
  'DTSTAMP:20261102T000000Z',
  'DTSTART:20261124T160000Z',
  'DTEND:20261124T170000Z',
  'SUMMARY:Gym',
  'END:VEVENT',
]);

// A half-hour zone written by name only (no VTIMEZONE): every Tuesday 20:30 in Adelaide, which is
// 10:00 UTC under daylight time (+10:30) and 11:00 UTC after 4 April 2027 (+09:30).
const ADELAIDE_CALENDAR = ics(
  'BEGIN:VEVENT',
  'UID:call@example.com',
  'DTSTAMP:20261101T000000Z',
  'DTSTART;TZID=Australia/Adelaide:20261124T203000',
  'DTEND;TZID=Australia/Adelaide:20261124T213000',
  'RRULE:FREQ=WEEKLY',
  'SUMMARY:Call home',
  'END:VEVENT',
);

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/ana.ics', {
    body: ANA_CALENDAR(),
    etag: '"v1"',
    lastModified: 'Sun, 01 Nov 2026 00:00:00 GMT',
  });
  server.serve('/adelaide.ics', { body: ADELAIDE_CALENDAR });
  server.serve('/big.ics', { body: ics(`X-PADDING:${'x'.repeat(5000)}`) });
  server.serve('/slow.ics', { hang: true });
  const catalogue = smallCatalogue();
  const [ana, bo] = catalogue.staff as Record<string, unknown>[];
  ana!.busy_calendars = [server.url('/ana.ics'), server.url('/adelaide.ics')];
  bo!.busy_calendars = [server.url('/big.ics'), server.url('/slow.ics'), 'webcal://calendar.invalid/x.ics'];
  t = await startTestApp({ catalogues: [catalogue] });
  const known = await catalogueIds(t.database.db);
  ids = { cut: known.services.cut!, ana: known.staff.ana!, bo: known.staff.bo! };
});

afterAll(async () => {
  await t.close();
  await server.close();
});

/** Ana's free starts for a Cut that day (HH:MM, UTC), as availability answers them. */
async function anaStarts(date: string): Promise<string[]> {
  const starts = await offeredStarts(t, { serviceId: ids.cut, date: date, staffId: ids.ana });
  return starts.map((start) => start.slice(11, 16));
}

async function blocksOf(staffId: string) {
  const rows = await t.database.db
    .selectFrom('staff_busy_blocks')
    .select(['starts_at', 'ends_at'])
    .where('staff_id', '=', staffId)
    .orderBy('starts_at')
    .execute();
  return rows.map((r) => [
    new Date(Number(r.starts_at)).toISOString(),
    new Date(Number(r.ends_at)).toISOString(),
  ]);
}

async function calendarState(url: string) {
  return t.database.db
    .selectFrom('staff_busy_calendars')
    .selectAll()
    .where('url', '=', url)
    .executeTakeFirstOrThrow();
}

describe('busy calendars', () => {
  it('are not fetched by the import itself, and availability never fetches them', async () => {
    expect(await anaStarts('2026-11-24')).toContain('10:00');
    expect(server.requests).toEqual([]);
  });

  it('block availability like time off once the refresher has fetched them', async () => {
    await refresh();
    const tuesday = await anaStarts('2026-11-24');
    // 10:00-11:00 London is busy (a 45-minute cut and its 15-minute buffer ending by 10:00 still fit); the transparent and the
    // cancelled events leave 14:00-16:00 free; the Adelaide call (10:00-11:00 UTC) overlaps the same hour.
    expect(tuesday).not.toContain('10:00');
    expect(tuesday).not.toContain('10:30');
    expect(tuesday).toContain('09:00');
    expect(tuesday).toContain('11:00');
    expect(tuesday).toContain('14:00');
    expect(tuesday).toContain('15:00');
    // Mondays: 13:00 busy, except 30 November (EXDATE); on 7 December the occurrence moved to 15:00.
    expect(await anaStarts('2026-12-14')).not.toContain('13:00');
    expect(await anaStarts('2026-11-30')).toContain('13:00');
    const seventh = await anaStarts('2026-12-07');
    expect(seventh).toContain('13:00');
    expect(seventh).not.toContain('15:00');
  });

  it('expands recurrences in their own zones across clock changes (VTIMEZONE and IANA name)', async () => {
    const blocks = await blocksOf(ids.ana);
    // Europe/London: 13:00 GMT on 22 March 2027, 13:00 BST (12:00 UTC) on 29 March.
    expect(blocks).toContainEqual(['2027-03-22T13:00:00.000Z', '2027-03-22T14:00:00.000Z']);
    expect(blocks).toContainEqual(['2027-03-29T12:00:00.000Z', '2027-03-29T13:00:00.000Z']);
    // Australia/Adelaide: 20:30 at +10:30 then at +09:30.
    expect(blocks).toContainEqual(['2027-03-30T10:00:00.000Z', '2027-03-30T11:00:00.000Z']);
    expect(blocks).toContainEqual(['2027-04-06T11:00:00.000Z', '2027-04-06T12:00:00.000Z']);
    expect(blocks).not.toContainEqual(['2026-11-30T13:00:00.000Z', '2026-11-30T14:00:00.000Z']);
    expect(blocks).not.toContainEqual(['2026-11-24T14:00:00.000Z', '2026-11-24T15:00:00.000Z']);
    // Nothing beyond the window kept: max_advance_days (60), the 2,100 days a series booked on its
    // last day may reach further, and 2 days (until 24 October 2032, 09:00 UTC).
    expect(blocks.at(-1)![0]! > '2032-10-16').toBe(true);
    expect(blocks.at(-1)![0]! < '2032-10-24T09:00').toBe(true);
  });

  it('records why a calendar failed: too large, too slow, refused addresses', async () => {
    expect(await calendarState(server.url('/big.ics'))).toMatchObject({
      last_success_at: null,
      last_error: 'the calendar is larger than 4096 bytes',
    });
    expect((await calendarState(server.url('/slow.ics'))).last_error).toBe('no answer within 3 s');
    expect((await calendarState('https://calendar.invalid/x.ics')).last_error).toMatch(
      /does not resolve|failed/,
    );
    expect(await blocksOf(ids.bo)).toEqual([]);

    const strict = new CalendarFetcher(false);
    const refused = await strict.fetch(server.url('/ana.ics'), { etag: null, lastModified: null });
    expect(refused).toEqual({
      kind: 'failed',
      reason: 'the URL is not https (plain http only to this machine, with CALENDAR_ALLOW_LOOPBACK=1)',
    });
    const loopback = await strict.fetch('https://127.0.0.1:1/x.ics', { etag: null, lastModified: null });
    expect(loopback).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('CALENDAR_ALLOW_LOOPBACK=1'),
    });
    const metadata = await new CalendarFetcher(true).fetch('https://169.254.169.254/latest', {
      etag: null,
      lastModified: null,
    });
    expect(metadata).toMatchObject({ kind: 'failed', reason: expect.stringContaining('never allowed') });
  });

  it('asks again after the refresh period with the validators, and a 304 keeps the copy', async () => {
    const before = server.requests.length;
    await refresh();
    expect(server.requests.length).toBe(before);
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    const again = server.requests.slice(before).find((r) => r.path === '/ana.ics');
    expect(again).toMatchObject({ ifNoneMatch: '"v1"', ifModifiedSince: 'Sun, 01 Nov 2026 00:00:00 GMT' });
    expect(await anaStarts('2026-11-24')).not.toContain('10:00');
    expect((await calendarState(server.url('/ana.ics'))).last_success_at).toBe(t.clock.nowMs());
  });

  it('takes a shortened refresh period at once: a calendar fetched under a longer one is due by the new', async () => {
    const refreshEvery = (refreshMs: number) =>
      refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs });
    // Fetched under a period of a day (CALENDAR_REFRESH_SECONDS=86400), then served with 5 minutes.
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refreshEvery(86_400_000);
    const before = server.requests.length;
    t.clock.advance({ milliseconds: REFRESH_MS - 1 });
    await refresh();
    expect(server.requests.length).toBe(before);
    t.clock.advance({ milliseconds: 1 });
    await refresh();
    expect(server.requests.slice(before).map((r) => r.path)).toContain('/ana.ics');
  });

  it('a changed calendar changes availability at once (the cached answer is dropped)', async () => {
    expect(await anaStarts('2026-11-24')).toContain('16:00');
    server.serve('/ana.ics', { etag: '"v2"', body: ANA_CALENDAR_WITH_GYM });
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(await anaStarts('2026-11-24')).not.toContain('16:00');
  });

  it('a busy time gone asks the waitlist to look again', async () => {
    const joined = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.cut],
        staff_id: ids.ana,
        client: { first_name: 'Wren', last_name: 'Waiting', email: 'wren@example.com' },
        from_date: '2026-11-24',
        to_date: '2026-11-24',
      },
    });
    expect(joined.statusCode, joined.body).toBe(201);
    await t.database.db.deleteFrom('waitlist_rescans').execute();
    // The same copy again (a new ETag, nothing changed): no rescan.
    server.serve('/ana.ics', { etag: '"v3"', body: ANA_CALENDAR_WITH_GYM });
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(await t.database.db.selectFrom('waitlist_rescans').selectAll().execute()).toEqual([]);
    // The gym called off: 16:00 frees, and the waitlist is asked to look again.
    server.serve('/ana.ics', { etag: '"v4"', body: ANA_CALENDAR() });
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(await anaStarts('2026-11-24')).toContain('16:00');
    expect(await t.database.db.selectFrom('waitlist_rescans').select('requested_at').execute()).toHaveLength(
      1,
    );
    // The gym back, for the tests after this one.
    server.serve('/ana.ics', { etag: '"v5"', body: ANA_CALENDAR_WITH_GYM });
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
  });

  it('a calendar that fails keeps its last good copy, and says so', async () => {
    server.serve('/ana.ics', { status: 500 });
    const good = (await calendarState(server.url('/ana.ics'))).last_success_at;
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    const state = await calendarState(server.url('/ana.ics'));
    expect(state).toMatchObject({ last_success_at: good, last_error: 'the server answered 500' });
    expect(await anaStarts('2026-11-24')).not.toContain('16:00');
  });

  it('a calendar taken out of the file is dropped with its busy times', async () => {
    const catalogue = smallCatalogue();
    (catalogue.staff[0] as Record<string, unknown>).busy_calendars = [server.url('/adelaide.ics')];
    const report = await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    // Ana lost one calendar, Bo all of theirs: each an edit of that staff member, counted as one.
    expect(report.counts.staff).toMatchObject({ created: 0, updated: 2 });
    const again = await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    expect(again.counts.staff).toMatchObject({ created: 0, updated: 0 });
    expect(again.organisation.changed).toBe(false);
    const tuesday = await anaStarts('2026-11-24');
    expect(tuesday).toContain('16:00');
    expect(tuesday).not.toContain('10:00');
    expect(await blocksOf(ids.ana)).not.toContainEqual([
      '2026-12-14T13:00:00.000Z',
      '2026-12-14T14:00:00.000Z',
    ]);
  });
  it('a staff member made inactive has their calendars left unfetched until they are back', async () => {
    const away = smallCatalogue();
    const [ana] = away.staff as Record<string, unknown>[];
    ana!.busy_calendars = [server.url('/adelaide.ics')];
    ana!.active = false;
    await importCatalogue(t.database.db, away, t.clock.nowMs());
    const before = server.requests.length;
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(server.requests.slice(before).map((r) => r.path)).not.toContain('/adelaide.ics');
    // Back in the file as active: fetched at the next refresh, its copy read whole again.
    const back = smallCatalogue();
    (back.staff[0] as Record<string, unknown>).busy_calendars = [server.url('/adelaide.ics')];
    await importCatalogue(t.database.db, back, t.clock.nowMs());
    await refresh();
    expect(server.requests.slice(before).filter((r) => r.path === '/adelaide.ics')).toEqual([
      { path: '/adelaide.ics', ifNoneMatch: undefined, ifModifiedSince: undefined },
    ]);
  });
});

describe('busy_calendars in the catalogue', () => {
  it('refuses what is not an https (or webcal) address (plain http elsewhere than this machine), and one listed twice', async () => {
    const catalogue = smallCatalogue();
    const [ana, bo] = catalogue.staff as Record<string, unknown>[];
    ana!.busy_calendars = [
      'ftp://example.com/a.ics',
      'https://user:pw@example.com/b.ics',
      'not a url',
      'http://cal.example.com/a.ics',
      // Plain http to this machine is kept: read with CALENDAR_ALLOW_LOOPBACK=1 (tests, on premises).
      'http://127.0.0.1:8443/a.ics',
    ];
    bo!.busy_calendars = ['https://example.com/c.ics', 'webcal://example.com/c.ics'];
    const refused = await importCatalogue(t.database.db, catalogue, t.clock.nowMs()).catch((error) => error);
    expect(refused.problems).toEqual([
      {
        path: '$.staff[0].busy_calendars[0]',
        message: 'must be an https (or webcal) address without user name or password',
      },
      {
        path: '$.staff[0].busy_calendars[1]',
        message: 'must be an https (or webcal) address without user name or password',
      },
      {
        path: '$.staff[0].busy_calendars[2]',
        message: 'must be an https (or webcal) address without user name or password',
      },
      {
        path: '$.staff[0].busy_calendars[3]',
        message: 'must be an https (or webcal) address; plain http only to this machine (localhost)',
      },
      { path: '$.staff[1].busy_calendars', message: 'must not list one calendar twice' },
    ]);
  });

  it('refuses an address with a line break or space inside (the URL parser would glue two into one)', async () => {
    const catalogue = smallCatalogue();
    const [ana] = catalogue.staff as Record<string, unknown>[];
    ana!.busy_calendars = [
      'https://example.com/a.ics\nhttps://example.org/b.ics',
      'https://example.com/c d.ics',
    ];
    const refused = await importCatalogue(t.database.db, catalogue, t.clock.nowMs()).catch((error) => error);
    expect(refused.problems).toEqual([
      { path: '$.staff[0].busy_calendars[0]', message: 'must be one address, without spaces or line breaks' },
      { path: '$.staff[0].busy_calendars[1]', message: 'must be one address, without spaces or line breaks' },
    ]);
  });
});

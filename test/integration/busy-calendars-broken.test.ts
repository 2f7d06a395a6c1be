import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Calendars whose events ical.js cannot read: each is refused and says why; none stops the pass. A
 * file ical.js alone would refuse for a byte-order mark before it is read.
 */

let t: TestApp;
let server: CalendarServer;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const event = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20261101T000000Z', ...lines, 'END:VEVENT'];

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/bad-end.ics', { body: ics(...event('UID:a', 'DTSTART:20261124T100000Z', 'DTEND:soon')) });
  server.serve('/bad-until.ics', {
    body: ics(...event('UID:b', 'DTSTART:20261124T100000Z', 'DURATION:PT1H', 'RRULE:FREQ=DAILY;UNTIL=never')),
  });
  // A line that is no property, quoted by ical.js in its refusal: a NUL (which PostgreSQL refuses in
  // text) and a terminal's escape sequences from someone else's server.
  server.serve('/controls.ics', { body: ics('SUMMARY dentist \u0000\u001b]0;owned\u0007\u001b[2J') });
  server.serve('/good.ics', {
    body: ics(...event('UID:c', 'DTSTART:20261124T100000Z', 'DTEND:20261124T110000Z')),
  });
  // A file that starts with a UTF-8 byte-order mark, as Windows tools and some publishers write them.
  server.serve('/bom.ics', {
    body: `\uFEFF${ics(...event('UID:d', 'DTSTART:20261125T100000Z', 'DTEND:20261125T110000Z'))}`,
  });
  // A file sent gzipped (Content-Encoding: gzip), as a server may whatever the request asked for.
  server.serve('/gzip.ics', {
    body: ics(...event('UID:e', 'DTSTART:20261126T100000Z', 'DTEND:20261126T110000Z')),
    gzip: true,
  });
  const catalogue = smallCatalogue();
  const [ana] = catalogue.staff as Record<string, unknown>[];
  ana!.busy_calendars = [
    server.url('/bad-end.ics'),
    server.url('/bad-until.ics'),
    server.url('/controls.ics'),
    server.url('/good.ics'),
    server.url('/bom.ics'),
  ];
  (catalogue.staff[1] as Record<string, unknown>).busy_calendars = [server.url('/gzip.ics')];
  t = await startTestApp({ catalogues: [catalogue] });
});

afterAll(async () => {
  await t.close();
  await server.close();
});

describe('busy calendars with events that cannot be read', () => {
  it('are recorded as failed with a reason, and the others are still read', async () => {
    await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
    const rows = await t.database.db
      .selectFrom('staff_busy_calendars')
      .select(['url', 'last_error', 'last_success_at', 'busy_count'])
      .orderBy('url')
      .execute();
    const byPath = Object.fromEntries(rows.map((r) => [new URL(r.url).pathname, r]));
    expect(byPath['/bad-end.ics']).toMatchObject({ last_success_at: null, last_error: expect.any(String) });
    expect(byPath['/bad-until.ics']).toMatchObject({ last_success_at: null, last_error: expect.any(String) });
    expect(byPath['/good.ics']).toMatchObject({ last_error: null, busy_count: 1 });
  });

  it('a file that starts with a byte-order mark is read, not refused as no calendar', async () => {
    const row = await t.database.db
      .selectFrom('staff_busy_calendars')
      .select(['last_error', 'busy_count'])
      .where('url', '=', server.url('/bom.ics'))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ last_error: null, busy_count: 1 });
  });

  it('a file sent gzipped is read, not refused as no calendar', async () => {
    const row = await t.database.db
      .selectFrom('staff_busy_calendars')
      .select(['last_error', 'busy_count'])
      .where('url', '=', server.url('/gzip.ics'))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ last_error: null, busy_count: 1 });
  });

  it('keep the control characters of a quoted line out of the reason (the CLI prints it)', async () => {
    const row = await t.database.db
      .selectFrom('staff_busy_calendars')
      .select(['last_error'])
      .where('url', '=', server.url('/controls.ics'))
      .executeTakeFirstOrThrow();
    expect(row.last_error).toMatch(/^not an iCalendar file \(/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must be gone.
    expect(row.last_error).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe('a busy calendar taken out of the catalogue while it is being fetched', () => {
  it('is not written back, and the refresher goes on without an error', async () => {
    const { importCatalogue } = await import('../../src/app/catalogue-import/import-catalogue.ts');
    const catalogue = smallCatalogue();
    const [ana] = catalogue.staff as Record<string, unknown>[];
    ana!.busy_calendars = [server.url('/good.ics')];
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    const withoutIt = smallCatalogue();
    (withoutIt.staff[0] as Record<string, unknown>).busy_calendars = [];
    const racing = {
      async fetch() {
        // The import runs while the calendar is on the network.
        await importCatalogue(t.database.db, withoutIt, t.clock.nowMs());
        return {
          kind: 'fetched' as const,
          text: ics(...event('UID:c', 'DTSTART:20261124T100000Z', 'DTEND:20261124T110000Z')),
          etag: null,
          lastModified: null,
        };
      },
    } as unknown as CalendarFetcher;
    t.clock.advance({ milliseconds: 300_000 });
    await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher: racing, refreshMs: 300_000 });
    expect(await t.database.db.selectFrom('staff_busy_calendars').select('url').execute()).toEqual([]);
    expect(await t.database.db.selectFrom('staff_busy_blocks').select('calendar_id').execute()).toEqual([]);
  });
});

describe('a refresh pass that fails', () => {
  it('ends only when every calendar it started has ended, and starts no more', async () => {
    const { importCatalogue } = await import('../../src/app/catalogue-import/import-catalogue.ts');
    const catalogue = smallCatalogue();
    // More than the pass fetches at once (4), four per person.
    for (const [n, person] of (catalogue.staff as Record<string, unknown>[]).slice(0, 2).entries()) {
      person.busy_calendars = Array.from({ length: 4 }, (_, i) => server.url(`/pass-${n}-${i}.ics`));
    }
    await importCatalogue(t.database.db, catalogue, t.clock.nowMs());
    let releaseSlow!: () => void;
    const slowHeld = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const fetched: string[] = [];
    let slowEnded = false;
    const failing = {
      async fetch(url: string) {
        fetched.push(new URL(url).pathname);
        if (fetched.length === 1) {
          // Held on the network while the other worker fails.
          await slowHeld;
          slowEnded = true;
          return { kind: 'not_modified' as const };
        }
        // Not a refusal of the file: something the pass cannot go on from (a database gone, say).
        throw new Error('the database went away');
      },
    } as unknown as CalendarFetcher;
    t.clock.advance({ milliseconds: 600_000 });
    const pass = refreshDueCalendars({
      db: t.database.db,
      clock: t.clock,
      fetcher: failing,
      refreshMs: 300_000,
    });
    const settled = pass.then(
      () => 'done',
      (error: Error) => error.message,
    );
    await vi.waitFor(() => expect(fetched).toHaveLength(4));
    // A shutdown waits for the pass: it must not end while the first calendar is still out.
    expect(
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 300, 'still out'))]),
    ).toBe('still out');
    releaseSlow();
    expect(await settled).toBe('the database went away');
    expect(slowEnded).toBe(true);
    // The calendars not yet started were left for the next pass.
    expect(fetched).toHaveLength(4);
  });
});

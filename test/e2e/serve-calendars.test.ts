import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { runCli, startServer } from '../helpers/cli.ts';
import { freshDatabaseUrl } from '../helpers/temp-database.ts';

/**
 * `booking serve` refreshes external busy calendars in the background (design.md 9.6): a catalogue
 * imported with `booking import` lists one; the running server fetches it on its own, within
 * moments, and REST availability stops offering the busy hour; SIGTERM stops the refresher with the
 * rest. Real processes, the real clock: the busy hour is on a Monday a week or two ahead.
 */
let dir: string;
let database: { url: string; drop(): Promise<void> };
let calendars: CalendarServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-calendars-'));
  database = await freshDatabaseUrl(dir);
  calendars = await startCalendarServer();
});
afterAll(async () => {
  await calendars.close();
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('booking serve with busy calendars', () => {
  it('fetches them in the background and availability leaves the busy times out', async () => {
    const monday = DateTime.now().setZone('Europe/London').plus({ weeks: 1 }).startOf('week');
    const day = monday.toISODate()!;
    const stamp = monday.toFormat('yyyyMMdd');
    calendars.serve('/ana.ics', {
      etag: '"1"',
      body: ics(
        'BEGIN:VEVENT',
        'UID:meeting@example.com',
        'DTSTAMP:20261101T000000Z',
        `DTSTART;TZID=Europe/London:${stamp}T100000`,
        `DTEND;TZID=Europe/London:${stamp}T110000`,
        'SUMMARY:Meeting',
        'END:VEVENT',
      ),
    });
    const catalogue = smallCatalogue();
    (catalogue.staff[0] as Record<string, unknown>).busy_calendars = [calendars.url('/ana.ics')];
    const file = path.join(dir, 'catalogue.json');
    writeFileSync(file, JSON.stringify(catalogue));
    const env = {
      DATABASE_URL: database.url,
      CALENDAR_ALLOW_LOOPBACK: '1',
      CALENDAR_REFRESH_SECONDS: '1',
    };
    expect(runCli(['import', file], env).status).toBe(0);
    expect(calendars.requests).toEqual([]);
    const created = runCli(
      ['keys', 'create', '--org', 'acme-hair', '--label', 'Test', '--scope', 'read', '--json'],
      env,
    );
    const key = JSON.parse(created.stdout).key as string;

    const server = await startServer(['--port', '0'], env);
    try {
      const ask = async () => {
        const services = await fetch(`${server.url}/v1/locations/soho/services`, {
          headers: { authorization: `Bearer ${key}` },
        });
        const cut = ((await services.json()) as { data: { id: string; name: string }[] }).data.find(
          (s: { name: string }) => s.name === 'Cut',
        )!.id;
        const answer = await fetch(
          `${server.url}/v1/locations/soho/availability?service_ids=${cut}&date=${day}`,
          {
            headers: { authorization: `Bearer ${key}` },
          },
        );
        expect(answer.status).toBe(200);
        return ((await answer.json()) as { data: { slots: { starts_at: string }[] } }).data.slots.map((s) =>
          s.starts_at.slice(11, 16),
        );
      };
      let starts = await ask();
      for (let i = 0; i < 60 && starts.includes('10:00'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        starts = await ask();
      }
      expect(starts).not.toContain('10:00');
      expect(starts).toContain('11:00');
      expect(calendars.requests.filter((r) => r.path === '/ana.ics').length).toBeGreaterThan(0);
      // Every second after that, conditional on the ETag.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(calendars.requests.some((r) => r.ifNoneMatch === '"1"')).toBe(true);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(server.stderr()).not.toContain('calendar refresh failed');
  }, 60_000);
});

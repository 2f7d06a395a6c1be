import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * `booking calendars create|list|revoke` as an operator runs them: child processes on the test app's
 * database; the address `create` prints is served by the app until `revoke`.
 */
const CLI_TIMEOUT = 90_000;
const GOOGLE_SECRET_ADDRESS =
  'https://calendar.google.com/calendar/ical/bo.barber%40gmail.com/private-3f9c2a7e5b1d4c8a9e0f6b2d7a4c1e85/basic.ics';
const ICLOUD_PUBLIC_ADDRESS =
  'webcal://p58-caldav.icloud.com/published/2/MTk4NzY1NDMyMTk4NzY1NEq3vX9bT2mLr8sWc1dKy0uHf5gJpZaN4eQw7RtYoUiB6nMxC2zV';
const OUTLOOK_ICS_LINK =
  'https://outlook.office365.com/owa/calendar/8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f@salon.co.uk/a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d24815162342/calendar.ics';
/** What reads any of those calendars whole: the parts of their addresses that are the secret. */
const SECRETS = [
  'private-3f9c2a7e5b1d4c8a9e0f6b2d7a4c1e85',
  'MTk4NzY1NDMyMTk4NzY1NEq3vX9bT2mLr8sWc1dKy0uHf5gJpZaN4eQw7RtYoUiB6nMxC2zV',
  'a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d24815162342',
];
let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  const catalogue = smallCatalogue();
  // Bo's calendars as Google, Apple iCloud and Microsoft 365 give them: each address is its secret.
  (catalogue.staff[1] as Record<string, unknown>).busy_calendars = [
    'webcal://calendar.example.com/bo.ics',
    GOOGLE_SECRET_ADDRESS,
    ICLOUD_PUBLIC_ADDRESS,
    OUTLOOK_ICS_LINK,
  ];
  // Full names sharing a first name, and a first name an inactive member shares with an active one.
  const hours = { soho: { mon: [['09:00', '17:00']] } };
  for (const [ref, name, active] of [
    ['dee-martin', 'Dee Martin', true],
    ['dee-khan', 'Dee Khan', true],
    ['eli-stone', 'Eli Stone', true],
    ['fay-young', 'Fay Young', true],
    ['fay-old', 'Fay Oldham', false],
  ] as const) {
    (catalogue.staff as unknown[]).push({ ref, name, active, services: ['cut'], working_hours: hours });
  }
  t = await startTestApp({ catalogues: [catalogue] });
  env = { DATABASE_URL: t.database.url, PUBLIC_BASE_URL: 'https://book.example.com' };
});
afterAll(async () => {
  await t.close();
});

describe('booking calendars', () => {
  it(
    'says, without PUBLIC_BASE_URL, which server the address it prints assumes',
    async () => {
      const { PUBLIC_BASE_URL: _unset, ...withoutBase } = env;
      const created = await runCliAsync(['calendars', 'create', '--org', 'acme-hair', '--staff', 'Ana'], {
        ...withoutBase,
        PORT: '8123',
      });
      expect(created.status, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/http:\/\/127\.0\.0\.1:8123\/ical\/[\w-]{43}\.ics/);
      expect(created.stderr).toContain(
        'PUBLIC_BASE_URL is not set: the address assumes the server at http://127.0.0.1:8123 (HOST and PORT)',
      );
    },
    CLI_TIMEOUT,
  );

  it(
    'creates a feed (address printed once), lists it, and revokes it',
    async () => {
      const created = await runCliAsync(
        ['calendars', 'create', '--org', 'acme-hair', '--staff', 'Ana', '--json'],
        env,
      );
      expect(created.status, created.stderr).toBe(0);
      expect(created.stderr).toBe('');
      const feed = JSON.parse(created.stdout);
      expect(feed).toMatchObject({
        staff_name: 'Ana',
        url: expect.stringMatching(/^https:\/\/book\.example\.com\/ical\/[\w-]{43}\.ics$/),
      });
      const path = new URL(feed.url).pathname;
      expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);

      const listed = await runCliAsync(['calendars', 'list', '--org', 'acme-hair'], env);
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(`${feed.id}  Ana  made`);
      expect(listed.stdout).not.toContain(path);
      // The busy calendars of the catalogue, not fetched yet, each shown by its host and path with
      // what could be its secret cut to its last four characters: anyone with the whole address reads
      // the whole calendar (Google's "secret address", iCloud's public link, Outlook's ICS link).
      expect(listed.stdout).toContain('Bo  calendar.example.com/bo.ics  0 busy  last fetched -');
      expect(listed.stdout).toContain(
        'Bo  calendar.google.com/calendar/ical/….com/…1e85/basic.ics  0 busy  last fetched -',
      );
      expect(listed.stdout).toContain('Bo  p58-caldav.icloud.com/published/2/…C2zV  0 busy  last fetched -');
      expect(listed.stdout).toContain(
        'Bo  outlook.office365.com/owa/calendar/…o.uk/…2342/calendar.ics  0 busy  last fetched -',
      );
      const json = await runCliAsync(
        ['calendars', 'list', '--org', 'acme-hair', '--staff', 'Bo', '--json'],
        env,
      );
      expect(json.status, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout).busy_calendars.map((c: { address: string }) => c.address)).toContain(
        'calendar.google.com/calendar/ical/….com/…1e85/basic.ics',
      );
      for (const secret of SECRETS) {
        expect(listed.stdout).not.toContain(secret);
        expect(json.stdout).not.toContain(secret);
      }

      const revoked = await runCliAsync(['calendars', 'revoke', '--org', 'acme-hair', feed.id], env);
      expect(revoked.status, revoked.stderr).toBe(0);
      expect(revoked.stdout).toBe(`Revoked calendar feed ${feed.id}.\n`);
      expect((await t.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);

      const again = await runCliAsync(['calendars', 'revoke', '--org', 'acme-hair', feed.id], env);
      expect(again.status).toBe(1);
      expect(again.stderr).toContain(`No live calendar feed of acme-hair has the id "${feed.id}".`);
    },
    CLI_TIMEOUT,
  );

  // An operator says "--staff Eli" as the salon says it; only the full name "Eli Stone" was found.
  it(
    'finds a staff member by a first name only one active member has, and names the members an ambiguous one fits',
    async () => {
      const [eli, fay, dee, listed] = await Promise.all([
        runCliAsync(['calendars', 'create', '--org', 'acme-hair', '--staff', 'eli', '--json'], env),
        runCliAsync(['calendars', 'create', '--org', 'acme-hair', '--staff', 'Fay', '--json'], env),
        runCliAsync(['calendars', 'create', '--org', 'acme-hair', '--staff', 'Dee'], env),
        runCliAsync(['calendars', 'list', '--org', 'acme-hair', '--staff', 'Eli', '--json'], env),
      ]);
      expect(eli.status, eli.stderr).toBe(0);
      expect(JSON.parse(eli.stdout)).toMatchObject({ staff_name: 'Eli Stone' });
      expect(fay.status, fay.stderr).toBe(0);
      expect(JSON.parse(fay.stdout)).toMatchObject({ staff_name: 'Fay Young' });
      expect(dee.status).toBe(1);
      expect(dee.stdout).toBe('');
      expect(dee.stderr).toBe(
        'error: Several staff members are called "Dee" (Dee Khan, Dee Martin): give the full name, ref or id.\n',
      );
      expect(listed.status, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).busy_calendars).toEqual([]);
    },
    CLI_TIMEOUT,
  );

  it(
    'names what it cannot find',
    async () => {
      const nobody = await runCliAsync(['calendars', 'create', '--org', 'acme-hair', '--staff', 'Zed'], env);
      expect(nobody.status).toBe(1);
      expect(nobody.stderr).toContain('No staff member has the id, ref or name "Zed".');
      // Fay Oldham is out of the catalogue: her feed would answer 404, so none is made.
      const away = await runCliAsync(
        ['calendars', 'create', '--org', 'acme-hair', '--staff', 'Fay Oldham'],
        env,
      );
      expect(away.status).toBe(1);
      expect(away.stderr).toBe(
        'error: Fay Oldham is not an active staff member: a feed of theirs would not be served. Make it once they are active again.\n',
      );
      const noOrg = await runCliAsync(['calendars', 'list', '--org', 'nope'], env);
      expect(noOrg.status).toBe(1);
      expect(noOrg.stderr).toContain('No organisation has the slug "nope".');
    },
    CLI_TIMEOUT,
  );
});

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogueId } from '../../src/app/catalogue-import/format/ids.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { freshDatabasePerTest } from '../helpers/temp-database.ts';

const SHARED_EXAMPLE = path.resolve('..', 'shared', 'catalogue-example.json');

// biome-ignore lint/suspicious/noExplicitAny: catalogue fixtures are edited freely as plain JSON.
type Json = any;

const fresh = freshDatabasePerTest('booking-cli-');

/** A slug a fuzzer might send: long, and (unlike 'aaa...') not compressible by PostgreSQL. */
function randomSlug(length: number): string {
  let text = '';
  let block = 'slug';
  while (text.length < length) {
    block = createHash('sha256').update(block).digest('hex');
    text += block;
  }
  return text.slice(0, length);
}

describe('booking import of values the databases cannot store as given', () => {
  it('lists each as a problem at its path instead of failing in the database, and changes nothing', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.organisation.name = 'Acme\u0000Hair';
    catalogue.locations[0].slug = randomSlug(3000);
    catalogue.services[0].price.amount = 2_147_483_648;
    catalogue.services[0].aliases = ['Haircut \ud800'];
    const file = path.join(fresh.dir, 'fuzzed.json');
    // JSON.stringify writes NUL and the lone surrogate as \u escapes, as a fuzzer's file would hold them.
    writeFileSync(file, JSON.stringify(catalogue));
    expect(readFileSync(file, 'utf8')).toContain('\\ud800');

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('4 problem(s); nothing was changed');
    expect(result.stderr).toMatch(/\$\.organisation\.name: must not contain the NUL character/);
    expect(result.stderr).toMatch(/\$\.locations\[0\]\.slug: must be at most 200 characters/);
    expect(result.stderr).toMatch(/\$\.services\[0\]\.price\.amount: must be at most 200000000/);
    expect(result.stderr).toMatch(/\$\.services\[0\]\.aliases\[0\]: .*lone surrogate/);
    expect(result.stderr).not.toMatch(/invalid byte sequence|out of range|index row size|URI malformed/);
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);

    // The same database then takes the shipped catalogue.
    expect(runCli(['import', 'db/demo-catalogue.json'], fresh.env).status).toBe(0);
  }, 120_000);
});

// An id copied into the wrong entry, the one another entry derives from its ref, met the database's
// unique key: "UNIQUE constraint failed: services.organisation_id, services.id" on SQLite,
// "duplicate key value violates unique constraint" on PostgreSQL.
describe('booking import of an explicit id that another entry derives', () => {
  const clash = (id: string, other: string, from: string) =>
    `  ${id}: is the id ${other} derives from its ${from} (it gives no id of its own); give one of them another id\n`;

  it('names both entries by path before writing anything, entities and time off alike', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.services[0].id = catalogueId('acme-hair', 'service', 'colour');
    catalogue.clients.push({ ref: 'kim', first_name: 'Kim', last_name: 'Lee', phone: '+447911123499' });
    catalogue.clients[0].id = catalogueId('acme-hair', 'client', 'kim');
    const ana = catalogueId('acme-hair', 'staff', 'ana');
    catalogue.staff[0].time_off = [{ start: '2026-12-24T09:00', end: '2026-12-24T17:00' }];
    // Time off without an id derives it from its staff member's id and its instants.
    const christmasEve = `${ana}#${Date.parse('2026-12-24T09:00Z')}#${Date.parse('2026-12-24T17:00Z')}`;
    catalogue.staff[1].time_off = [
      {
        id: catalogueId('acme-hair', 'time_off', christmasEve),
        start: '2026-12-25T09:00',
        end: '2026-12-25T17:00',
      },
    ];
    const file = path.join(fresh.dir, 'copied-ids.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('3 problem(s); nothing was changed');
    expect(result.stderr).toContain(clash('$.services[0].id', '$.services[1]', 'ref "colour"'));
    expect(result.stderr).toContain(clash('$.clients[0].id', '$.clients[1]', 'ref "kim"'));
    expect(result.stderr).toContain(
      clash('$.staff[1].time_off[0].id', '$.staff[0].time_off[0]', 'staff member, start and end'),
    );
    expect(result.stderr).not.toMatch(/constraint|duplicate key|conflicts with data/);
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);
  }, 120_000);

  it('names both bookings, and imports nothing of the catalogue they come with', () => {
    const catalogue: Json = smallCatalogue();
    const booking = (starts_at: string, reference?: string) => ({
      ...(reference && { reference }),
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at,
      status: 'confirmed',
    });
    catalogue.bookings = [
      { id: catalogueId('acme-hair', 'booking', 'ana|2026-12-07T12:00'), ...booking('2026-12-07T10:00') },
      booking('2026-12-07T12:00'),
      { id: catalogueId('acme-hair', 'booking', 'reference:AC-BCDFGH'), ...booking('2026-12-08T10:00') },
      booking('2026-12-08T12:00', 'AC-BCDFGH'),
    ];
    const file = path.join(fresh.dir, 'copied-booking-ids.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('2 problem(s); nothing was changed');
    expect(result.stderr).toContain(clash('$.bookings[0].id', '$.bookings[1]', 'staff and starts_at'));
    expect(result.stderr).toContain(clash('$.bookings[2].id', '$.bookings[3]', 'reference "AC-BCDFGH"'));
    expect(result.stderr).not.toMatch(/constraint|duplicate key|conflicts with data/);
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);
  }, 120_000);
});

describe('booking import of a hand-written catalogue', () => {
  it('names the key that was meant for a misspelt or written-out one, and changes nothing', () => {
    const catalogue: Json = smallCatalogue();
    const staff = catalogue.staff[0];
    const location = Object.keys(staff.working_hours)[0]!;
    staff.working_hours[location] = { monday: [['09:00', '17:00']] };
    catalogue.services[0].duraton_minutes = 30;
    catalogue.organisaton = {};
    catalogue.services[1].colour = 'red';
    const file = path.join(fresh.dir, 'hand-written.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `$.staff[0].working_hours.${location}.monday: unknown key; did you mean "mon"?`,
    );
    expect(result.stderr).toContain(
      '$.services[0].duraton_minutes: unknown key; did you mean "duration_minutes"?',
    );
    expect(result.stderr).toContain('$.organisaton: unknown key; did you mean "organisation"?');
    // Nothing near enough: no guess.
    expect(result.stderr).toMatch(/\$\.services\[1\]\.colour: unknown key\n/);
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);
  }, 120_000);

  // "unknown staff ref \"zed\"" left the operator to search the file for the refs there are.
  it('names the ref that was meant for an unknown one, or the refs there are, never the clients’', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.staff[0].services.push('colur');
    catalogue.staff[1].working_hours.kingscross = { mon: [['09:00', '17:00']] };
    catalogue.services[0].locations.push('mayfair');
    catalogue.bookings = [
      {
        location: 'soho',
        services: ['cut'],
        staff: 'zed',
        client: 'sam',
        starts_at: '2026-12-07T10:00',
        status: 'confirmed',
      },
    ];
    const file = path.join(fresh.dir, 'refs.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    for (const line of [
      '$.staff[0].services[3]: unknown service ref "colur"; did you mean "colour"?',
      '$.staff[1].working_hours.kingscross: unknown location ref "kingscross"; did you mean "kings-cross"?',
      '$.services[0].locations[2]: unknown location ref "mayfair": locations[] has "soho", "kings-cross", "closed"',
      '$.bookings[0].staff: unknown staff ref "zed": staff[] has "ana", "bo", "cy"',
      '$.bookings[0].client: unknown client ref "sam": no entry of clients[] has it',
    ]) {
      expect(result.stderr).toContain(`  ${line}\n`);
    }
    expect(result.stderr).not.toContain('"jo"');
  }, 120_000);

  // A booking with a wrong status was refused for it alone; its unknown staff came out in the next run.
  it('lists the unknown refs of a booking whose shape is wrong too, in the same run', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.bookings = [
      {
        location: 'soho',
        services: ['cut', 'colur', 42],
        staff: 'zed',
        client: '',
        starts_at: '2026-12-07 10:00',
        status: 'booked',
      },
    ];
    const file = path.join(fresh.dir, 'misshapen-booking.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('  $'))).toEqual([
      '  $.bookings[0].services[2]: must be a string, not a number',
      '  $.bookings[0].client: must not be empty',
      '  $.bookings[0].starts_at: must be a local date-time without offset, e.g. 2026-12-24T09:00',
      '  $.bookings[0].status: must be one of pending_payment, pending_confirmation, confirmed, needs_checkout, completed, no_show, cancelled, expired',
      '  $.bookings[0].services[1]: unknown service ref "colur"; did you mean "colour"?',
      '  $.bookings[0].staff: unknown staff ref "zed": staff[] has "ana", "bo", "cy"',
    ]);
  }, 120_000);

  it('names the time zone that was meant for a misspelt one, or a city written alone', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.locations[0].timezone = 'Europe/Londn';
    catalogue.locations[1].timezone = 'New York';
    catalogue.locations[2].timezone = 'GMT+1';
    const file = path.join(fresh.dir, 'zones.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('  $'))).toEqual([
      '  $.locations[0].timezone: must be a valid IANA time zone; did you mean "Europe/London"?',
      '  $.locations[1].timezone: must be a valid IANA time zone; did you mean "America/New_York"?',
      '  $.locations[2].timezone: must be a valid IANA time zone, e.g. Europe/London',
    ]);
  }, 120_000);

  it('says what is wrong with a value in the words the API uses, under its path, never in zod’s', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.organisation.name = 42;
    catalogue.locations[0].timezone = ['Europe/London'];
    catalogue.services[0].duration_minutes = 22.5;
    catalogue.services[0].aliases = 'Haircut';
    catalogue.clients = [
      { ref: 'ola', first_name: 'Ola', last_name: 'Field', phone: '+447911123457', marketing_consent: 'yes' },
    ];
    const file = path.join(fresh.dir, 'wrong-types.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    for (const line of [
      '$.organisation.name: must be a string, not a number',
      '$.locations[0].timezone: must be a string, not an array',
      '$.services[0].duration_minutes: must be a whole number (an integer)',
      '$.services[0].aliases: must be an array, not a string',
      '$.clients[0].marketing_consent: must be true or false, not a string',
    ]) {
      expect(result.stderr).toContain(`${line}\n`);
    }
    expect(result.stderr).not.toMatch(/Invalid input|expected \w+, received/);
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);
  }, 120_000);

  // A date written another way was two problems at one path, the second ("must be a real date") wrong.
  it('says a date or date-time written another way once, and a day no calendar has as such', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.locations[0].closures = [
      { date: '25/12/2026', reason: 'Christmas' },
      { date: '2026-02-30', reason: 'No such day' },
    ];
    catalogue.staff[0].time_off = [
      { start: '2026-12-24 09:00', end: '2026-12-24T17:00', reason: 'Away' },
      { start: '2026-12-24T09:00', end: '2026-12-24T25:00', reason: 'Away' },
    ];
    const file = path.join(fresh.dir, 'dates.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    const problems = result.stderr.split('\n').filter((line) => line.startsWith('  $'));
    expect(problems).toEqual([
      '  $.locations[0].closures[0].date: must be a date YYYY-MM-DD',
      '  $.locations[0].closures[1].date: must be a real calendar date',
      '  $.staff[0].time_off[0].start: must be a local date-time without offset, e.g. 2026-12-24T09:00',
      '  $.staff[0].time_off[1].end: must be a real date and time',
    ]);
  }, 120_000);

  // Written with and without seconds, one staff member's time off twice was not seen as the same, and
  // met the database's key (its id derived from the instants) in SQLite's or PostgreSQL's words.
  it('says time off given twice is a duplicate however its times are written', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.staff[0].time_off = [
      { start: '2026-12-24T09:00', end: '2026-12-24T17:00', reason: 'Away' },
      { start: '2026-12-24T09:00:00', end: '2026-12-24T17:00:00', reason: 'Away' },
    ];
    const file = path.join(fresh.dir, 'time-off-twice.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    const problems = result.stderr.split('\n').filter((line) => line.startsWith('  $'));
    expect(problems).toEqual(['  $.staff[0].time_off[1]: duplicate time off (same as time_off[0])']);
  }, 120_000);

  // A country in lower case was two problems at one path, the second ("not the ISO 3166-1 code of a
  // country with phone numbers") wrong: gb is the United Kingdom's code, in the wrong case.
  it('says a country code in lower case once, for what it is, in a location and in sms_countries', () => {
    const catalogue: Json = smallCatalogue();
    catalogue.locations[0].country = 'gb';
    catalogue.policies = { sms_countries: ['ie', 'XX'] };
    const file = path.join(fresh.dir, 'countries.json');
    writeFileSync(file, JSON.stringify(catalogue));

    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    const problems = result.stderr.split('\n').filter((line) => line.startsWith('  $'));
    expect(problems.sort()).toEqual([
      '  $.locations[0].country: must be an ISO 3166-1 alpha-2 code in uppercase, e.g. GB',
      '  $.policies.sms_countries[0]: must be an ISO 3166-1 alpha-2 code in uppercase, e.g. GB',
      '  $.policies.sms_countries[1]: is not the ISO 3166-1 code of a country with phone numbers',
    ]);
  }, 120_000);

  it('takes a file that names its JSON Schema in $schema, as the demo catalogue does', () => {
    const demo = path.join(REPO_ROOT, 'db', 'demo-catalogue.json');
    expect(JSON.parse(readFileSync(demo, 'utf8')).$schema).toBe('../docs/catalogue.schema.json');
    const result = runCli(['import', demo], fresh.env);
    expect(result.stderr).not.toMatch(/problem|unknown key/);
    expect(result.status).toBe(0);
  }, 120_000);

  it('says plainly when the path names no file, or names a folder', () => {
    const missing = path.join(fresh.dir, 'catalgoue.json');
    const typo = runCli(['import', missing], fresh.env);
    expect(typo.status).toBe(1);
    expect(typo.stderr).toBe(`error: There is no catalogue file at ${missing}.\n`);
    const folder = runCli(['import', fresh.dir], fresh.env);
    expect(folder.status).toBe(1);
    expect(folder.stderr).toBe(`error: ${fresh.dir} is a folder; name the catalogue's JSON file.\n`);
  }, 120_000);

  it('says where a hand-edited file stops being JSON, by line and column, and what to do there', () => {
    // As an editor leaves it: pretty-printed, then a comma typed after the last hours of a day.
    const text = JSON.stringify(smallCatalogue(), null, 2);
    const lines = text.split('\n');
    const interval = lines.findIndex(
      (l, i) =>
        l.trim() === ']' && /^"\d\d:\d\d"$/.test(lines[i - 1]!.trim()) && lines[i + 1]!.trim() === ']',
    );
    expect(interval).toBeGreaterThan(0);
    lines[interval] = `${lines[interval]},`;
    const file = path.join(fresh.dir, 'hand-edited.json');
    writeFileSync(file, lines.join('\n'));
    const line = interval + 2;
    const column = lines[interval + 1]!.indexOf(']') + 1;

    const comma = runCli(['import', file], fresh.env);
    expect(comma.status).toBe(1);
    expect(comma.stderr).toContain(
      `  $: invalid JSON at line ${line}, column ${column}: a comma comes just before this "]": JSON allows none after the last item; remove it\n`,
    );

    // A file cut short, named at its last character; an empty one, as empty.
    writeFileSync(file, text.slice(0, text.indexOf('"locations"')));
    const cut = runCli(['import', file], fresh.env);
    expect(cut.status).toBe(1);
    const kept = text.slice(0, text.indexOf('"locations"')).trimEnd().split('\n');
    expect(cut.stderr).toContain(
      `  $: invalid JSON at line ${kept.length}, column ${kept.at(-1)!.length + 1}: the file ends before the JSON does`,
    );
    writeFileSync(file, '\n');
    expect(runCli(['import', file], fresh.env).stderr).toContain(
      '  $: the file is empty; a catalogue is one JSON object (see docs/catalogue.md)\n',
    );
    expect(runCli(['keys', 'list', '--org', 'acme-hair'], fresh.env).stderr).toMatch(/No organisation/);
  }, 120_000);

  // The team's shared example sits beside the checkout, when it is there (CI links it in).
  it.skipIf(!existsSync(SHARED_EXAMPLE))(
    'takes the shared example with a $schema added, and without',
    () => {
      const example: Json = JSON.parse(readFileSync(SHARED_EXAMPLE, 'utf8'));
      const file = path.join(fresh.dir, 'with-schema.json');
      writeFileSync(file, JSON.stringify({ $schema: '../docs/catalogue.schema.json', ...example }));
      const result = runCli(['import', file], fresh.env);
      expect(result.stderr).not.toMatch(/problem|unknown key/);
      expect(result.status).toBe(0);
      expect(runCli(['import', SHARED_EXAMPLE], fresh.env).status).toBe(0);
    },
    120_000,
  );
});

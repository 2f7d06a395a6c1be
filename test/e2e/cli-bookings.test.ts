import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { openDatabase } from '../../src/data/database.ts';
import type { BookingsTable } from '../../src/data/tables.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { runCli } from '../helpers/cli.ts';
import { freshDatabaseUrl } from '../helpers/temp-database.ts';

/**
 * `booking bookings <reference> <action>` through the real command, on the demo catalogue. The command
 * reads the system clock, so the appointments are inserted directly around the real "now" (v1 only
 * books the future, and Islington takes no v1 bookings at all: it has Booking Protection).
 */
let dir: string;
let env: Record<string, string>;
let dropDatabase: () => Promise<void>;
const refs = { past: '', protectedPast: '', future: '', summer: '', spelled: '' };
let futureStartsAt = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-cli-bookings-'));
  // An empty database: `booking import` migrates it first.
  const database = await freshDatabaseUrl(dir);
  env = { DATABASE_URL: database.url };
  dropDatabase = database.drop;
  expect(runCli(['import', 'db/demo-catalogue.json'], env).status).toBe(0);
  const key = runCli(
    ['keys', 'create', '--org', 'northside-hair', '--label', 'Desk', '--scope', 'read_write'],
    env,
  );
  expect(key.status).toBe(0);

  const { db, close } = openDatabase(env.DATABASE_URL);
  try {
    const idOf = async (table: 'locations' | 'staff' | 'services' | 'clients', ref: string) =>
      (await db.selectFrom(table).select('id').where('ref', '=', ref).executeTakeFirstOrThrow()).id;
    const org = (await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow()).id;
    const cut = await idOf('services', 'cut');
    const client = await idOf('clients', 'jo');
    const hour = 3_600_000;
    const now = Date.now();
    const insert = async (reference: string, startsAt: number, extra: Partial<BookingsTable>) => {
      const id = randomUUID();
      await insertBooking(
        db,
        bookingRow(
          {
            organisationId: org,
            locationId: await idOf('locations', 'camden'),
            staffId: await idOf('staff', 'amara'),
            clientId: client,
            startsAt,
            endsAt: startsAt + hour,
          },
          {
            id,
            reference,
            total_price_minor: 5500,
            source: 'staff',
            created_at: now - 48 * hour,
            updated_at: now - 48 * hour,
            ...extra,
          },
        ),
        [
          {
            organisation_id: org,
            booking_id: id,
            position: 0,
            service_id: cut,
            starts_at: startsAt,
            ends_at: startsAt + hour,
            duration_minutes: 60,
            buffer_after_minutes: 0,
            price_minor: 5500,
            deposit_minor: extra.deposit_minor ?? null,
          },
        ],
      );
      return reference;
    };
    refs.past = await insert('NHC-7K3M9P', now - 2 * hour, {});
    futureStartsAt = Math.floor((now + 24 * hour) / 1000) * 1000;
    refs.future = await insert('NHC-7K3M9Q', futureStartsAt, {});
    refs.spelled = await insert('NHC-7X3M9Q', futureStartsAt + 2 * hour, {});
    // 10:00 in London on a summer's day (09:00 UTC).
    refs.summer = await insert('NHC-7K3M9S', Date.UTC(2027, 6, 15, 9), {});
    refs.protectedPast = await insert('NHC-7K3M9R', now - 3 * hour, {
      location_id: await idOf('locations', 'islington'),
      staff_id: await idOf('staff', 'chloe'),
      deposit_minor: 2000,
      deposit_status: 'paid',
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      protection_setup_status: 'succeeded',
      payment_method_saved: 1,
      protection_setup_completed_at: now - 48 * hour,
    });
  } finally {
    await close();
  }
});
afterAll(async () => {
  await dropDatabase?.();
  rmSync(dir, { recursive: true, force: true });
});

describe('booking bookings <reference> <action>', () => {
  it('lists the actions in --help', () => {
    const help = runCli(['bookings', '--help'], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/Usage: booking bookings \[options\] <reference> \[action\]/);
    for (const action of ['complete', 'no-show', 'checkout', 'pay-deposit', 'charge-fee', 'waive-fee']) {
      expect(help.stdout).toContain(`  ${action} `);
    }
    expect(help.stdout).toContain('--fee <kind>');
  });

  it('completes a past appointment, then refuses to mark it a no-show', () => {
    const done = runCli(['bookings', refs.past.toLowerCase(), 'complete'], env);
    expect(done).toMatchObject({ status: 0, stdout: `${refs.past}: confirmed -> completed\n` });
    const again = runCli(['bookings', refs.past.toLowerCase(), 'no-show'], env);
    expect(again.status).toBe(1);
    // Named by its reference as stored, and what became of it in words, never its status as a word.
    expect(again.stderr).toBe(
      `error: ${refs.past}: This booking cannot be marked as a no-show: the booking has already taken place.\n`,
    );
  });

  it('refuses an appointment that has not started and an unknown reference', () => {
    const early = runCli(['bookings', refs.future, 'checkout'], env);
    expect(early.status).toBe(1);
    expect(early.stderr).toMatch(/^error: .*has not started yet/);
    const unknown = runCli(['bookings', 'NHC-ZZZZZZ', 'complete'], env);
    expect(unknown).toMatchObject({ status: 1, stderr: 'error: No booking has the reference NHC-ZZZZZZ.\n' });
  });

  it('finds a reference typed as people type it: lower case, spaces, a missing or extra hyphen, no prefix', () => {
    for (const typed of [
      'nhc7k3m9q',
      'nhc 7k3m9q',
      ' NHC - 7K3M9Q ',
      '7k3m9q',
      'NHC-7K3-M9Q',
      'nhc dash 7k3m9q',
    ]) {
      const found = runCli(['bookings', typed, 'checkout'], env);
      expect(found.stderr, typed).toMatch(/^error: NHC-7K3M9Q: .*has not started yet/);
    }
    const unknown = runCli(['bookings', 'nhczzzzzz', 'complete'], env);
    expect(unknown).toMatchObject({
      status: 1,
      stderr: 'error: No booking has the reference nhczzzzzz (read as NHC-ZZZZZZ).\n',
    });
  });

  // The spelling alphabet's X is written "X-ray" (ICAO, and most transcriptions of a call), as often
  // as "Xray": read as "X", "RAY", the reference came out as NHC7XR-AY3M9Q.
  it('finds a reference spelled with X-ray, hyphen or space, as with Xray', () => {
    for (const typed of [
      'nhc 7 xray 3m9q',
      'nhc 7 x-ray 3m9q',
      'November Hotel Charlie seven X-Ray three mike nine quebec',
      'nhc seven x ray three m nine q',
    ]) {
      const shown = runCli(['bookings', typed], env);
      expect(shown, typed).toMatchObject({ status: 0, stderr: '' });
      expect(shown.stdout, typed).toMatch(/^NHC-7X3M9Q: confirmed\n/);
    }
  });

  // GOLF-ZZZZZZ reads first as G-ZZZZZZ (the spelling alphabet's word for its letter): a refusal naming
  // only that would have the operator hunt for a reference they never typed.
  it('names the reference as typed when none has it, and every reading tried', () => {
    const golf = runCli(['bookings', 'GOLF-ZZZZZZ', 'complete'], env);
    expect(golf).toMatchObject({
      status: 1,
      stderr: 'error: No booking has the reference GOLF-ZZZZZZ (read as G-ZZZZZZ or GOLF-ZZZZZZ).\n',
    });
    const other = runCli(['bookings', 'GOLF-ZZZZZZ', 'complete', '--org', 'northside-hair'], env);
    expect(other.stderr).toBe(
      'error: No booking has the reference GOLF-ZZZZZZ (read as G-ZZZZZZ or GOLF-ZZZZZZ) in northside-hair.\n',
    );
    // An empty reference (a shell variable unset) asks for one, not "the reference  .".
    expect(runCli(['bookings', ' '], env)).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'error: Give the booking reference, e.g. NHC-7K3M9P.\n',
    });
  });

  // A mistyped --org was said as the booking missing from it: the operator went looking for the booking.
  it('says an --org that names no organisation, with or without an action', () => {
    for (const action of [[], ['complete']]) {
      expect(runCli(['bookings', refs.past, ...action, '--org', 'nothside-hair'], env)).toMatchObject({
        status: 1,
        stderr: 'error: No organisation has the slug "nothside-hair".\n',
      });
    }
  });

  it('shows the booking when no action is named: status, time, place, services and deposit, nothing of its client', () => {
    const shown = runCli(['bookings', refs.future.toLowerCase()], env);
    expect(shown).toMatchObject({ status: 0, stderr: '' });
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${refs.future}: confirmed`);
    expect(lines).toEqual(
      expect.arrayContaining([
        // On the location's clock with the offset in force, as the API says it: "…T10:00:00+01:00" in
        // summer, never a UTC time an operator would read an hour off.
        `When: ${londonTime(futureStartsAt)} to ${londonTime(futureStartsAt + 3_600_000)} (Europe/London)`,
        'Where: Northside Camden, with Amara Okafor',
        'Services: Cut & blow-dry (GBP 55.00)',
        'Deposit: none',
      ]),
    );
    expect(shown.stdout).not.toMatch(/Refund refused|Bloggs|7911|jo\.bloggs/);
    expect(runCli(['bookings', refs.summer], env).stdout).toContain(
      'When: 2027-07-15T10:00:00+01:00 to 2027-07-15T11:00:00+01:00 (Europe/London)\n',
    );
    const unknown = runCli(['bookings', 'NHC-ZZZZZZ'], env);
    expect(unknown).toMatchObject({ status: 1, stderr: 'error: No booking has the reference NHC-ZZZZZZ.\n' });
  });

  it('refuses a bad action and --fee on an action without a fee', () => {
    const bad = runCli(['bookings', refs.future, 'finish'], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("error: command-argument value 'finish' is invalid");
    const misplaced = runCli(['bookings', refs.future, 'complete', '--fee', 'no_show'], env);
    expect(misplaced.status).toBe(1);
    expect(misplaced.stderr).toContain('--fee applies only to charge-fee and waive-fee');
    const lookup = runCli(['bookings', refs.future, '--fee', 'no_show'], env);
    expect(lookup.status).toBe(1);
    expect(lookup.stderr).toContain('--fee applies only to charge-fee and waive-fee');
  });

  it('marks a protected no-show and charges its fee once, the deposit credited first', () => {
    expect(runCli(['bookings', refs.protectedPast, 'no-show'], env)).toMatchObject({
      status: 0,
      stdout: `${refs.protectedPast}: confirmed -> no_show\n`,
    });
    expect(runCli(['bookings', refs.protectedPast, 'charge-fee', '--fee', 'no_show'], env)).toMatchObject({
      status: 0,
      stdout: `${refs.protectedPast}: no_show fee charged: fee GBP 55.00, deposit credit GBP 20.00, card GBP 35.00\n`,
    });
    const again = runCli(['bookings', refs.protectedPast, 'waive-fee'], env);
    expect(again).toMatchObject({
      status: 1,
      stderr: 'error: NHC-7K3M9R: The no-show fee was already processed (charged).\n',
    });
    // Named as the help names the fees ("no-show", "late-cancellation"), not "no no show fee".
    expect(
      runCli(['bookings', refs.protectedPast, 'charge-fee', '--fee', 'late_cancellation'], env),
    ).toMatchObject({
      status: 1,
      stderr:
        'error: NHC-7K3M9R: This booking has no late-cancellation fee to process: it was missed (marked as a no-show).\n',
    });
  });
});

// A reference is unique per organisation only: two organisations with one prefix may both hold it.
describe('a reference two organisations hold', () => {
  const REFERENCE = 'NHC-7K3M9T';
  beforeAll(async () => {
    const file = path.join(dir, 'second.json');
    writeFileSync(file, JSON.stringify(smallCatalogue({ slug: 'northside-two', prefix: 'NHC' })));
    expect(runCli(['import', file], env).status).toBe(0);
    const { db, close } = openDatabase(env.DATABASE_URL);
    try {
      for (const slug of ['northside-hair', 'northside-two']) {
        const org = (
          await db.selectFrom('organisations').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()
        ).id;
        const idOf = async (table: 'locations' | 'staff' | 'clients' | 'services', ref?: string) =>
          (
            await db
              .selectFrom(table)
              .select('id')
              .where('organisation_id', '=', org)
              .$if(ref !== undefined, (q) => q.where('ref', '=', ref!))
              .executeTakeFirstOrThrow()
          ).id;
        const startsAt = Date.now() + 48 * 3_600_000;
        const id = randomUUID();
        const endsAt = startsAt + 3_600_000;
        await insertBooking(
          db,
          bookingRow(
            {
              organisationId: org,
              locationId: await idOf('locations'),
              staffId: await idOf('staff'),
              clientId: await idOf('clients', 'jo'),
              startsAt,
              endsAt,
            },
            { id, reference: REFERENCE },
          ),
          [
            {
              organisation_id: org,
              booking_id: id,
              position: 0,
              service_id: await idOf('services', 'cut'),
              starts_at: startsAt,
              ends_at: endsAt,
              duration_minutes: 60,
              buffer_after_minutes: 0,
              price_minor: 4000,
              deposit_minor: null,
            },
          ],
        );
      }
    } finally {
      await close();
    }
  });

  it('names each booking it found by its reference as stored, not as typed in lower case', () => {
    const several = runCli(['bookings', 'nhc-7k3m9t', 'checkout'], env);
    expect(several).toMatchObject({
      status: 1,
      stderr:
        'error: Several organisations have a booking with this reference: NHC-7K3M9T in northside-hair, NHC-7K3M9T in northside-two; name one with --org.\n',
    });
    // Named with --org, it is found: its reference as stored again, and as typed where it is not found.
    const one = runCli(['bookings', 'nhc-7k3m9t', 'checkout', '--org', 'northside-two'], env);
    expect(one.stderr).toMatch(/^error: .*has not started yet/);
    expect(runCli(['bookings', 'nhc-7k3m9x', 'checkout', '--org', 'northside-two'], env).stderr).toBe(
      'error: No booking has the reference nhc-7k3m9x (read as NHC-7K3M9X) in northside-two.\n',
    );
  });
});

function londonTime(epochMs: number): string {
  return DateTime.fromMillis(epochMs, { zone: 'Europe/London' }).toISO({ suppressMilliseconds: true })!;
}

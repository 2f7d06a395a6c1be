import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { formatPath, type Path } from '../../src/app/catalogue-import/format/problems.ts';
import {
  MAX_AMOUNT_MINOR,
  REF_MAX_LENGTH,
  SLUG_MAX_LENGTH,
} from '../../src/app/catalogue-import/format/schema.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { everyRow, importProblems } from '../helpers/catalogue-checks.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { tempDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Values a file may hold that a database cannot store as given (NUL, lone surrogates, integers past
 * 32 bits, slugs past an index row): each is a problem at its path, found before anything is written,
 * the same on SQLite and PostgreSQL, where they used to be raw database errors (or, on SQLite, imported).
 */

// biome-ignore lint/suspicious/noExplicitAny: catalogue fixtures are edited freely as plain JSON.
type Json = any;

const T0 = Date.UTC(2026, 10, 22, 9, 0);
const T1 = T0 + 60_000;
const INT32_PAST_MAX = 2 ** 31;

/** smallCatalogue() with every kind of text the format has: closure and time-off reasons, notes. */
function fullCatalogue(): Json {
  const catalogue: Json = smallCatalogue();
  catalogue.locations[0].closures = [{ date: '2026-12-25', reason: 'Christmas' }];
  catalogue.services[0].overrides['kings-cross'].deposit = { amount: 1000, currency: 'GBP' };
  catalogue.staff[0].time_off = [{ start: '2026-12-24T00:00', end: '2026-12-27T00:00', reason: 'Holiday' }];
  catalogue.clients.push({ ref: 'kim', first_name: 'Kim', last_name: 'Lee', email: 'kim@example.com' });
  catalogue.bookings = [
    {
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-11-30T10:00',
      status: 'confirmed',
      notes: 'Fringe only',
    },
    {
      location: 'soho',
      services: ['cut'],
      staff: 'ana',
      client: 'kim',
      starts_at: '2026-11-30T12:00',
      status: 'confirmed',
    },
  ];
  return catalogue;
}

/** Every text field of fullCatalogue(), refs included (each ref one that the rest still resolves). */
const TEXT_FIELDS: Path[] = [
  ['organisation', 'name'],
  ['locations', 0, 'name'],
  ['locations', 0, 'street_address'],
  ['locations', 0, 'city'],
  ['locations', 0, 'postal_code'],
  ['locations', 0, 'phone'],
  ['locations', 0, 'closures', 0, 'reason'],
  ['locations', 2, 'ref'],
  ['services', 0, 'name'],
  ['services', 0, 'category'],
  ['services', 0, 'aliases', 1],
  ['services', 2, 'ref'],
  ['staff', 0, 'name'],
  ['staff', 0, 'aliases', 0],
  ['staff', 0, 'time_off', 0, 'reason'],
  ['staff', 2, 'ref'],
  ['clients', 0, 'first_name'],
  ['clients', 0, 'last_name'],
  ['clients', 0, 'phone'],
  ['clients', 0, 'email'],
  ['clients', 1, 'ref'],
  ['bookings', 0, 'notes'],
  ['bookings', 1, 'client'],
];

/** The integer fields of fullCatalogue() (with a deposit and a protected location's percentages). */
const INTEGER_FIELDS: Path[] = [
  ['locations', 0, 'policy', 'slot_interval_minutes'],
  ['locations', 0, 'policy', 'min_notice_minutes'],
  ['locations', 0, 'policy', 'max_advance_days'],
  ['locations', 0, 'policy', 'cancellation_window_hours'],
  ['locations', 0, 'policy', 'pending_confirmation_hold_minutes'],
  ['locations', 0, 'policy', 'pending_payment_hold_minutes'],
  ['locations', 0, 'policy', 'reminder_hours_before'],
  ['locations', 1, 'booking_protection', 'late_cancellation_fee_percentage'],
  ['locations', 1, 'booking_protection', 'no_show_fee_percentage'],
  ['services', 0, 'duration_minutes'],
  ['services', 0, 'buffer_after_minutes'],
  ['services', 0, 'price', 'amount'],
  ['services', 0, 'overrides', 'kings-cross', 'duration_minutes'],
  ['services', 0, 'overrides', 'kings-cross', 'price', 'amount'],
  ['services', 0, 'overrides', 'kings-cross', 'deposit', 'amount'],
  ['services', 1, 'deposit', 'amount'],
  ['services', 2, 'price', 'amount'],
];

function edit(catalogue: Json, path: Path, change: (value: Json) => Json): void {
  let parent = catalogue;
  for (const segment of path.slice(0, -1)) {
    parent[segment] ??= {};
    parent = parent[segment];
  }
  const last = path[path.length - 1]!;
  parent[last] = change(parent[last]);
}

/** Text of `length` characters that neither repeats nor compresses, as a fuzzer's would not (hex). */
function incompressible(length: number, seed: string): string {
  let text = '';
  let block = seed;
  while (text.length < length) {
    block = createHash('sha256').update(block).digest('hex');
    text += block;
  }
  return text.slice(0, length);
}

describe('catalogue values the databases cannot store as given', () => {
  const temp = tempDatabasePerTest();

  for (const [what, bad, message] of [
    ['a NUL character', '\u0000', /NUL/],
    ['a lone high surrogate', '\ud83d', /lone surrogate/],
    ['a lone low surrogate', '\ude00', /lone surrogate/],
  ] as const) {
    it(`refuses ${what} in every text field, at its path, and changes nothing`, async () => {
      await importCatalogue(temp.db, fullCatalogue(), T0);
      const before = await everyRow(temp.db);
      const catalogue = fullCatalogue();
      for (const path of TEXT_FIELDS) edit(catalogue, path, (value: string) => `${value}${bad}`);
      const problems = await importProblems(importCatalogue(temp.db, catalogue, T1));
      expect(problems.map((p) => p.path).sort()).toEqual(TEXT_FIELDS.map(formatPath).sort());
      for (const problem of problems) expect(problem.message).toMatch(message);
      expect(await everyRow(temp.db)).toEqual(before);
    });
  }

  it('refuses names of more than one line, or with a direction control, and changes nothing', async () => {
    await importCatalogue(temp.db, fullCatalogue(), T0);
    const before = await everyRow(temp.db);
    const catalogue = fullCatalogue();
    const names: [Path, string][] = [
      [['organisation', 'name'], 'North\nside'],
      [['locations', 0, 'name'], 'Cam\u202eden'],
      [['services', 0, 'name'], 'Cut\tand dry'],
      [['staff', 0, 'name'], 'Amara\u2067 Okafor'],
    ];
    for (const [path, name] of names) edit(catalogue, path, () => name);
    const problems = await importProblems(importCatalogue(temp.db, catalogue, T1));
    expect(problems.map((p) => p.path).sort()).toEqual(names.map(([path]) => formatPath(path)).sort());
    for (const problem of problems) expect(problem.message).toMatch(/one line without control characters/);
    expect(await everyRow(temp.db)).toEqual(before);
  });

  it('keeps text beyond ASCII (pairs of surrogates included) as given, and re-importing changes nothing', async () => {
    const catalogue = fullCatalogue();
    catalogue.organisation.name = 'Salon Ümlaut ✂️';
    catalogue.services[0].name = 'Cut 💇‍♀️';
    catalogue.services[0].aliases = ['Haircut 💇', '理发'];
    catalogue.locations[2].ref = 'fermé-🔒';
    catalogue.bookings[0].notes = 'Fringe only 👍🏽';
    await importCatalogue(temp.db, catalogue, T0);
    const before = await everyRow(temp.db);
    const again = await importCatalogue(temp.db, catalogue, T1);
    for (const kind of ['locations', 'services', 'staff', 'clients', 'bookings'] as const) {
      expect(again.counts[kind]).toMatchObject({ created: 0, updated: 0 });
    }
    expect(await everyRow(temp.db)).toEqual(before);
    const services = await temp.db.selectFrom('services').select('name').where('ref', '=', 'cut').execute();
    expect(services).toEqual([{ name: 'Cut 💇‍♀️' }]);
    const aliases = await temp.db.selectFrom('service_aliases').select('alias').orderBy('position').execute();
    expect(aliases.map((a) => a.alias)).toEqual(['Haircut 💇', '理发']);
  });

  it('refuses every integer past what a 32-bit column holds, saying the limit, and changes nothing', async () => {
    await importCatalogue(temp.db, fullCatalogue(), T0);
    const before = await everyRow(temp.db);
    const catalogue = fullCatalogue();
    for (const path of INTEGER_FIELDS) edit(catalogue, path, () => INT32_PAST_MAX);
    catalogue.services[2].price.amount = Number.MAX_SAFE_INTEGER;
    const problems = await importProblems(importCatalogue(temp.db, catalogue, T1));
    expect(problems.map((p) => p.path).sort()).toEqual(INTEGER_FIELDS.map(formatPath).sort());
    for (const problem of problems) expect(problem.message).toMatch(/\d/);
    const amounts = problems.filter((p) => p.path.endsWith('.amount'));
    expect(amounts).toHaveLength(5);
    for (const { message } of amounts) expect(message).toContain(String(MAX_AMOUNT_MINOR));
    expect(await everyRow(temp.db)).toEqual(before);
  });

  it('imports the largest amounts: a booking of 10 services at the largest price fits', async () => {
    const catalogue = fullCatalogue();
    const refs = Array.from({ length: 10 }, (_, i) => `big-${i}`);
    catalogue.services.push(
      ...refs.map((ref, i) => ({
        ref,
        name: `Big ${i}`,
        duration_minutes: 10,
        price: { amount: MAX_AMOUNT_MINOR, currency: 'GBP' },
        deposit: { amount: MAX_AMOUNT_MINOR, currency: 'GBP' },
        locations: ['soho'],
      })),
    );
    catalogue.staff[0].services.push(...refs);
    catalogue.bookings.push({
      reference: 'AC-BBBBBB',
      location: 'soho',
      services: refs,
      staff: 'ana',
      client: 'jo',
      starts_at: '2026-11-30T14:00',
      status: 'confirmed',
      deposit_paid: true,
    });
    await importCatalogue(temp.db, catalogue, T0);
    const booking = await temp.db
      .selectFrom('bookings')
      .select(['total_price_minor', 'deposit_minor'])
      .where('reference', '=', 'AC-BBBBBB')
      .executeTakeFirstOrThrow();
    expect(booking).toEqual({
      total_price_minor: 10 * MAX_AMOUNT_MINOR,
      deposit_minor: 10 * MAX_AMOUNT_MINOR,
    });
    catalogue.services[3].price.amount = MAX_AMOUNT_MINOR + 1;
    const problems = await importProblems(importCatalogue(temp.db, catalogue, T1));
    expect(problems.map((p) => p.path)).toEqual(['$.services[3].price.amount']);
  });

  it('bounds slugs by what the API takes (200 characters) and refs by 100, before any index sees them', async () => {
    const tooLong = fullCatalogue();
    tooLong.organisation.slug = incompressible(3000, 'organisation');
    tooLong.locations[0].slug = incompressible(3000, 'location');
    tooLong.locations[1].slug = incompressible(SLUG_MAX_LENGTH + 1, 'one more');
    tooLong.locations[2].ref = incompressible(REF_MAX_LENGTH + 1, 'ref');
    const problems = await importProblems(importCatalogue(temp.db, tooLong, T0));
    expect(problems.map((p) => p.path).sort()).toEqual(
      ['$.organisation.slug', '$.locations[0].slug', '$.locations[1].slug', '$.locations[2].ref'].sort(),
    );
    for (const { path, message } of problems) {
      expect(message).toContain(String(path.endsWith('ref') ? REF_MAX_LENGTH : SLUG_MAX_LENGTH));
    }
    expect(await temp.db.selectFrom('organisations').selectAll().execute()).toEqual([]);

    const longest = fullCatalogue();
    longest.organisation.slug = incompressible(SLUG_MAX_LENGTH, 'organisation');
    longest.locations[0].slug = incompressible(SLUG_MAX_LENGTH, 'location');
    // 100 characters, most of them 3 bytes in UTF-8.
    longest.locations[2].ref = `€${incompressible(REF_MAX_LENGTH - 1, 'ref')}`.replace(/[0-4]/g, '€');
    const report = await importCatalogue(temp.db, longest, T0);
    expect(report.organisation.slug).toHaveLength(SLUG_MAX_LENGTH);
    const slugs = await temp.db.selectFrom('locations').select('slug').execute();
    expect(slugs.map((s) => s.slug)).toContain(longest.locations[0].slug);
  });
});

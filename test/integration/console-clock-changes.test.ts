import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The days the clocks change, through HTTP, as the front desk and a customer see them. The console's
 * diary places every block by the wall clock (its axis, the working hours): a 10:00 booking on the
 * 10:00 line on the day London's clocks go back (25 October 2026) and on the day they go forward
 * (28 March 2027), time off and the current-time line likewise, the two passes of the repeated hour
 * side by side and named BST and GMT, the skipped hour hatched; and the days are written in the
 * organisation's locale (en-GB: "Thu 22 Oct", never "Oct 22"). In Sydney (en-AU) on 4 April 2027, when
 * 02:00-03:00 happens twice, the free times that repeat are told apart by their zone ("2:00 am AEDT",
 * "2:00 am AEST") on the public booking page, the console's Book list and its reschedule list, and
 * every other time is written as before.
 */
const ORIGIN = 'http://localhost:80';
const PASSWORD = 'correct horse battery';
let t: TestApp;

/** The small catalogue, with Ana at Soho on Sundays too and an hour off on each change day. */
function london() {
  const catalogue = smallCatalogue();
  const ana = catalogue.staff.find((s) => s.ref === 'ana') as unknown as {
    working_hours: { soho: Record<string, string[][]> };
    time_off?: unknown[];
  };
  ana.working_hours.soho.sun = [['09:00', '17:00']];
  ana.time_off = [
    { start: '2026-10-25T12:00', end: '2026-10-25T13:00', reason: 'Lunch' },
    { start: '2027-03-28T12:00', end: '2027-03-28T13:00', reason: 'Lunch' },
  ];
  return catalogue;
}

/** A Sydney salon open through the small hours of Sundays, so the repeated 02:00 has free times. */
function sydney() {
  return {
    organisation: {
      slug: 'harbour-hair',
      name: 'Harbour Hair',
      currency: 'AUD',
      booking_reference_prefix: 'HH',
      locale: 'en-AU',
    },
    locations: [
      {
        ref: 'quay',
        slug: 'circular-quay',
        name: 'Circular Quay',
        timezone: 'Australia/Sydney',
        phone: '+61291234567',
        active: true,
        policy: { slot_interval_minutes: 30, min_notice_minutes: 0, max_advance_days: 60 },
        booking_protection: {
          applies: false,
          late_cancellation_fee_percentage: null,
          no_show_fee_percentage: null,
        },
      },
    ],
    services: [
      {
        ref: 'trim',
        name: 'Trim',
        duration_minutes: 30,
        price: { amount: 3000, currency: 'AUD' },
        locations: ['quay'],
      },
    ],
    staff: [
      {
        ref: 'kim',
        name: 'Kim',
        services: ['trim'],
        working_hours: { quay: { sun: [['01:00', '04:00']], mon: [['09:00', '10:00']] } },
      },
    ],
    clients: [{ ref: 'sam', first_name: 'Sam', last_name: 'Lee', phone: '+61491570156' }],
  };
}

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [london(), sydney()],
    now: '2026-10-20T09:00:00Z',
    limits: { requestsPerMinute: 100_000 },
  });
  const now = t.clock.nowMs();
  for (const [organisationSlug, email] of [
    ['acme-hair', 'desk@acme.test'],
    ['harbour-hair', 'desk@harbour.test'],
  ] as const) {
    await createUser(t.database.db, { organisationSlug, email, role: 'staff', password: PASSWORD }, now);
  }
});
afterAll(async () => {
  await t.close();
});

interface Signed {
  get(url: string): Promise<LightMyRequestResponse>;
}

async function signIn(organisation: string, email: string): Promise<Signed> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    payload: new URLSearchParams({
      organisation,
      email,
      password: PASSWORD,
      next: '/console/diary',
    }).toString(),
  });
  expect(response.statusCode, response.body).toBe(303);
  const cookie = String(response.headers['set-cookie']).split(';')[0]!;
  return { get: (url) => t.app.inject({ method: 'GET', url, headers: { cookie } }) };
}

async function idsOf(organisationSlug: string) {
  const db = t.database.db;
  const org = await db
    .selectFrom('organisations')
    .select('id')
    .where('slug', '=', organisationSlug)
    .executeTakeFirstOrThrow();
  const rows = async (table: 'locations' | 'staff' | 'services' | 'clients') =>
    db.selectFrom(table).select(['id', 'ref']).where('organisation_id', '=', org.id).execute();
  const byRef = async (table: 'locations' | 'staff' | 'services' | 'clients') =>
    Object.fromEntries((await rows(table)).map((r) => [r.ref, r.id])) as Record<string, string>;
  return {
    organisation: org.id,
    locations: await byRef('locations'),
    staff: await byRef('staff'),
    services: await byRef('services'),
    clients: await byRef('clients'),
  };
}

type Ids = Awaited<ReturnType<typeof idsOf>>;

/** A confirmed booking written straight into the database (past days too); its reference. */
async function book(
  ids: Ids,
  place: { location: string; staff: string; service: string; client: string; currency: string },
  startsAt: string,
  minutes: number,
): Promise<string> {
  const start = Date.parse(startsAt);
  const end = start + minutes * 60_000;
  const row = bookingRow(
    {
      organisationId: ids.organisation,
      locationId: ids.locations[place.location]!,
      staffId: ids.staff[place.staff]!,
      clientId: ids.clients[place.client]!,
      startsAt: start,
      endsAt: end,
    },
    { currency: place.currency },
  );
  await insertBooking(t.database.db, row, [
    {
      organisation_id: ids.organisation,
      booking_id: row.id,
      position: 0,
      service_id: ids.services[place.service]!,
      starts_at: start,
      ends_at: end,
      duration_minutes: minutes,
      buffer_after_minutes: 0,
      price_minor: 4000,
      deposit_minor: null,
    },
  ]);
  return row.reference;
}

// -- Reading positions out of the diary's HTML ------------------------------------------------------

const TOP = /top:calc\(2rem \+ (-?\d+)px\)/;
const HEIGHT = /height:(\d+)px/;

/** The axis: each hour's label and its offset from the top of the grid, in px. */
function axisOf(html: string): Map<string, number> {
  const axis = /<div class="axis"[^>]*>(.*?)<\/div>/.exec(html)![1]!;
  return new Map(
    [...axis.matchAll(/<span style="top:calc\(2rem \+ (\d+)px\)">(\d\d:\d\d)<\/span>/g)].map((m) => [
      m[2]!,
      Number(m[1]),
    ]),
  );
}

/** Where the axis puts a wall time (HH:MM): its hour's line plus 1.1 px a minute. */
function lineOf(axis: Map<string, number>, wall: string): number {
  const [h, m] = wall.split(':').map(Number);
  const hour = axis.get(`${String(h).padStart(2, '0')}:00`);
  expect(hour, `the axis shows ${wall}'s hour`).toBeDefined();
  return hour! + m! * 1.1;
}

interface Placed {
  top: number;
  height: number;
  style: string;
  label: string;
}

function blockOf(html: string, reference: string): Placed {
  const match = new RegExp(
    `<a class="block[^"]*" style="([^"]*)" href="[^"]*" data-reference="${reference}">(.*?)</a>`,
  ).exec(html);
  expect(match, `the block of ${reference}`).not.toBeNull();
  const style = match![1]!;
  return {
    top: Number(TOP.exec(style)![1]),
    height: Number(HEIGHT.exec(style)![1]),
    style,
    // The block's visible text (its accessible name adds the staff member, for screen readers only).
    label: match![2]!
      .replace(/<span class="visually-hidden">.*?<\/span>/, '')
      .replace(/<br>/g, ' ')
      .replace(/<[^>]+>/g, ''),
  };
}

function allOf(html: string, cls: string): { top: number; height: number; text: string }[] {
  return [...html.matchAll(new RegExp(`<div class="${cls}" style="([^"]*)"[^>]*>([^<]*)`, 'g'))].map((m) => ({
    top: Number(TOP.exec(m[1]!)![1]),
    height: Number(HEIGHT.exec(m[1]!)?.[1] ?? 0),
    text: m[2]!,
  }));
}

function nowLineOf(html: string): number {
  return Number(/<div class="now" style="top:calc\(2rem \+ (\d+)px\)"/.exec(html)![1]);
}

/** The section (column) of one staff member. */
function columnOf(html: string, name: string): string {
  return new RegExp(`<section class="col"[^>]*aria-label="${name}[^"]*">(.*?)</section>`).exec(html)![1]!;
}

describe('the diary on the days London’s clocks change', () => {
  const place = { location: 'soho', staff: 'ana', service: 'cut', client: 'jo', currency: 'GBP' };

  it('draws a 10:00 booking, time off, working hours and the now line by the wall clock when the clocks go back', async () => {
    const ids = await idsOf('acme-hair');
    // 25 October 2026: 02:00 BST becomes 01:00 GMT; 10:00 GMT is 10:00Z, 11 hours after midnight.
    const ten = await book(ids, place, '2026-10-25T10:00:00Z', 45);
    const afternoon = await book(ids, place, '2026-10-25T15:30:00Z', 45);
    t.clock.set('2026-10-25T10:30:00Z');
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const page = await desk.get('/console/diary?location=soho&date=2026-10-25');
    expect(page.statusCode).toBe(200);
    const axis = axisOf(page.body);
    expect(blockOf(page.body, ten)).toMatchObject({
      top: Math.round(lineOf(axis, '10:00')),
      height: Math.round(45 * 1.1),
      label: '10:00–10:45 Jo Bloggs Cut Confirmed',
    });
    expect(blockOf(page.body, afternoon).top).toBe(Math.round(lineOf(axis, '15:30')));
    const ana = columnOf(page.body, 'Ana');
    expect(allOf(ana, 'off')).toEqual([
      { top: Math.round(lineOf(axis, '12:00')), height: 66, text: 'Time off 12:00–13:00' },
    ]);
    expect(allOf(ana, 'hours')).toEqual([
      { top: Math.round(lineOf(axis, '09:00')), height: Math.round(8 * 60 * 1.1), text: '' },
    ]);
    expect(nowLineOf(ana)).toBe(Math.round(lineOf(axis, '10:30')));
    expect(page.body).toContain(
      'The clocks go back at 02:00 BST to 01:00 GMT: 01:00–02:00 happens twice, first BST then GMT',
    );
  });

  it('puts the two passes of the repeated hour at their wall time, side by side, named BST and GMT', async () => {
    const ids = await idsOf('acme-hair');
    const first = await book(ids, place, '2026-10-25T00:15:00Z', 30); // 01:15-01:45 BST
    const second = await book(ids, place, '2026-10-25T01:15:00Z', 30); // 01:15-01:45 GMT
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const page = await desk.get('/console/diary?location=soho&date=2026-10-25');
    const axis = axisOf(page.body);
    // The grid now starts at 01:00, to show them.
    expect([...axis.keys()][0]).toBe('01:00');
    const a = blockOf(page.body, first);
    const b = blockOf(page.body, second);
    expect(a.top).toBe(Math.round(lineOf(axis, '01:15')));
    expect(b.top).toBe(a.top);
    expect(a.height).toBe(33);
    expect(b.height).toBe(33);
    expect(a.label).toBe('01:15 BST–01:45 BST Jo Bloggs Cut Confirmed');
    expect(b.label).toBe('01:15 GMT–01:45 GMT Jo Bloggs Cut Confirmed');
    // Two lanes, not one block on top of the other.
    expect(a.style).toContain('left:calc(0.00% + 3px);right:auto;width:calc(50.00% - 6px)');
    expect(b.style).toContain('left:calc(50.00% + 3px);right:auto;width:calc(50.00% - 6px)');
    // The rest of the day's blocks keep the whole width and their wall-clock place.
    const others = [...page.body.matchAll(/<a class="block[^"]*" style="([^"]*)"/g)].map((m) => m[1]!);
    expect(others.filter((s) => s.includes('left:calc'))).toHaveLength(2);
  });

  it('draws a 10:00 booking on the 10:00 line when the clocks go forward, and hatches the skipped hour', async () => {
    const ids = await idsOf('acme-hair');
    // 28 March 2027: 01:00 GMT becomes 02:00 BST; 10:00 BST is 09:00Z, 9 hours after midnight.
    const ten = await book(ids, place, '2027-03-28T09:00:00Z', 45);
    // 00:30 GMT for an hour: it ends at 02:30 BST.
    const night = await book(ids, place, '2027-03-28T00:30:00Z', 60);
    t.clock.set('2027-03-28T13:45:00Z');
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const page = await desk.get('/console/diary?location=soho&date=2027-03-28');
    const axis = axisOf(page.body);
    expect(blockOf(page.body, ten)).toMatchObject({
      top: Math.round(lineOf(axis, '10:00')),
      label: '10:00–10:45 Jo Bloggs Cut Confirmed',
    });
    expect(blockOf(page.body, night)).toMatchObject({
      top: Math.round(lineOf(axis, '00:30')),
      height: Math.round(120 * 1.1),
      label: '00:30–02:30 Jo Bloggs Cut Confirmed',
    });
    const ana = columnOf(page.body, 'Ana');
    expect(allOf(ana, 'off')).toEqual([
      { top: Math.round(lineOf(axis, '12:00')), height: 66, text: 'Time off 12:00–13:00' },
    ]);
    expect(allOf(ana, 'hours')[0]!.top).toBe(Math.round(lineOf(axis, '09:00')));
    expect(nowLineOf(ana)).toBe(Math.round(lineOf(axis, '14:45')));
    expect(allOf(ana, 'skipped')).toEqual([
      { top: Math.round(lineOf(axis, '01:00')), height: 66, text: '01:00–02:00: clocks go forward' },
    ]);
    expect(page.body).toContain(
      'The clocks go forward at 01:00 GMT to 02:00 BST: there is no 01:00–02:00 today.',
    );
  });

  it('says nothing of the clocks on an ordinary day', async () => {
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const page = await desk.get('/console/diary?location=soho&date=2026-10-26');
    expect(page.body).not.toContain('The clocks go');
    expect(page.body).not.toContain('class="skipped"');
  });
});

describe('the diary’s dates in the organisation’s locale', () => {
  it('writes the title and the week’s headers in en-GB, not the US default', async () => {
    const desk = await signIn('acme-hair', 'desk@acme.test');
    const day = await desk.get('/console/diary?location=soho&date=2026-10-22');
    const title = /<h1>([^<]*)<\/h1>/.exec(day.body)![1]!;
    expect(title).toMatch(/^Soho: Thursday,? 22 October 2026$/);
    const week = await desk.get('/console/diary?location=soho&date=2026-10-22&view=week');
    expect(/<h1>([^<]*)<\/h1>/.exec(week.body)![1]).toMatch(/^Soho: Week of Thu,? 22 Oct 2026$/);
    const heads = [...week.body.matchAll(/<th scope="col"><a href="[^"]*">([^<]*)<\/a>/g)].map((m) => m[1]);
    expect(heads).toHaveLength(7);
    expect(heads[0]).toMatch(/^Thu,? 22 Oct$/);
    expect(heads[6]).toMatch(/^Wed,? 28 Oct$/);
    expect(week.body).not.toMatch(/Oct 2[2-8]/);
  });

  it('writes them in en-AU for the Sydney salon', async () => {
    const desk = await signIn('harbour-hair', 'desk@harbour.test');
    const day = await desk.get('/console/diary?location=circular-quay&date=2027-04-04');
    expect(/<h1>([^<]*)<\/h1>/.exec(day.body)![1]).toMatch(/^Circular Quay: Sunday,? 4 April 2027$/);
  });
});

describe('repeated times in Sydney on 4 April 2027 (02:00 AEDT, then 02:00 AEST)', () => {
  // Kim works 01:00-04:00 on the clock: 01:00 AEDT (14:00Z) to 04:00 AEST (18:00Z), four hours.
  const EXPECTED = [
    ['2027-04-03T14:00:00Z', '1:00 am'],
    ['2027-04-03T14:30:00Z', '1:30 am'],
    ['2027-04-03T15:00:00Z', '2:00 am AEDT'],
    ['2027-04-03T15:30:00Z', '2:30 am AEDT'],
    ['2027-04-03T16:00:00Z', '2:00 am AEST'],
    ['2027-04-03T16:30:00Z', '2:30 am AEST'],
    ['2027-04-03T17:00:00Z', '3:00 am'],
    ['2027-04-03T17:30:00Z', '3:30 am'],
  ];

  it('labels them apart on the public booking page, and no other time', async () => {
    t.clock.set('2027-03-20T00:00:00Z');
    const ids = await idsOf('harbour-hair');
    const page = await t.app.inject({
      method: 'GET',
      url: `/p/harbour-hair?location=circular-quay&services=${ids.services.trim}&date=2027-04-04`,
    });
    expect(page.statusCode, page.body).toBe(200);
    const offered = [
      ...page.body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"[^>]*>([^<]+)<\/label>/g),
    ].map((m) => [m[1]!.replace(/T(\d\d:\d\d)Z$/, 'T$1:00Z'), m[2]!]);
    expect(offered).toEqual(EXPECTED);
    const labels = offered.map(([, label]) => label);
    expect(new Set(labels).size).toBe(labels.length);
    // The day is said once, above its times; a time only the clocks show twice adds its zone.
    expect(page.body).toMatch(/<h2 id="times">Sunday,? 4 April<\/h2>/);
    expect(page.body).toMatch(/>2:00 am AEDT<\/label>/);
    // The day after: nothing repeats, nothing is labelled.
    t.clock.set('2027-04-04T20:00:00Z');
    const monday = await t.app.inject({
      method: 'GET',
      url: `/p/harbour-hair?location=circular-quay&services=${ids.services.trim}&date=2027-04-05`,
    });
    expect(monday.body).toContain('>9:00 am</label>');
    // (The page names the zone once, above the times; no time carries it.)
    expect(monday.body).not.toMatch(/AE[SD]T<\/label>/);
  });

  it('labels them apart in the console’s Book list and reschedule list, and in the diary', async () => {
    t.clock.set('2027-03-20T00:00:00Z');
    const ids = await idsOf('harbour-hair');
    const desk = await signIn('harbour-hair', 'desk@harbour.test');
    const bookPage = await desk.get(
      `/console/book?location=circular-quay&service_id=${ids.services.trim}&date=2027-04-04`,
    );
    expect(bookPage.statusCode).toBe(200);
    const options = [
      ...bookPage.body.matchAll(/<option value="([^"|]+)\|[^"]+">([^<]+) with Kim<\/option>/g),
    ].map((m) => [m[1]!.replace('.000Z', 'Z'), m[2]!]);
    expect(options).toEqual(EXPECTED);

    // A booking on the Monday, moved: the same labels on the reschedule buttons.
    const place = { location: 'quay', staff: 'kim', service: 'trim', client: 'sam', currency: 'AUD' };
    const monday = await book(ids, place, '2027-04-04T23:00:00Z', 30);
    const reschedule = await desk.get(`/console/bookings/${monday}/reschedule?date=2027-04-04`);
    expect(reschedule.statusCode).toBe(200);
    const buttons = [
      ...reschedule.body.matchAll(
        /<input type="hidden" name="starts_at" value="([^"]+)">.*?<button type="submit" class="secondary">([^<]+) with Kim<\/button>/g,
      ),
    ].map((m) => [m[1]!.replace('.000Z', 'Z'), m[2]!]);
    expect(buttons).toEqual(EXPECTED);

    // Booked at both 02:00s: the diary shows them side by side at 02:00, each with its zone.
    const first = await book(ids, place, '2027-04-03T15:00:00Z', 30);
    const second = await book(ids, place, '2027-04-03T16:00:00Z', 30);
    const ten = await book(ids, place, '2027-04-04T00:00:00Z', 30); // 10:00 AEST
    const diary = await desk.get('/console/diary?location=circular-quay&date=2027-04-04');
    const axis = axisOf(diary.body);
    const a = blockOf(diary.body, first);
    const b = blockOf(diary.body, second);
    expect(a.top).toBe(Math.round(lineOf(axis, '02:00')));
    expect(b.top).toBe(a.top);
    expect(a.label).toMatch(/^2:00 am AEDT–2:30 am AEDT Sam Lee/);
    expect(b.label).toMatch(/^2:00 am AEST–2:30 am AEST Sam Lee/);
    expect(a.style).toContain('width:calc(50.00% - 6px)');
    expect(b.style).toContain('left:calc(50.00% + 3px)');
    expect(blockOf(diary.body, ten).top).toBe(Math.round(lineOf(axis, '10:00')));
    expect(diary.body).toContain('The clocks go back at 03:00 AEDT to 02:00 AEST');
  });
});

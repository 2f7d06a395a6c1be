import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { pageGet, pagePathOf, pagePost } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The public booking page, round 2 (issue 45), through real HTTP (inject): the week's days as links
 * with their counts, the chosen day's times grouped by part of the day, the zone named, why a day has
 * no time, the stylist choice, one booking per form, and a refusal that keeps what was typed. The demo
 * catalogue; Monday 23 November 2026, 09:00 in London (on UTC). At Camden Amara works Monday to
 * Friday, Ben Tuesday, Thursday and Saturday; nobody on Sunday; closed on Christmas Day.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function search(query: Record<string, string>) {
  const ids = await catalogueIds(t.database.db);
  const params = new URLSearchParams({ location: 'camden', services: ids.services.cut!, ...query });
  const response = await pageGet(t, `/p/${ORG}?${params.toString()}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

const radios = (body: string) =>
  [...body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"/g)].map((m) => m[1]!);

async function staffId(name: string): Promise<string> {
  const staff = await t.request({ method: 'GET', url: '/v1/locations/camden/staff' });
  return staff.json().data.find((s: { name: string }) => s.name === name).id;
}

/** The booking form's fields as the page wrote them (hidden ones included), with a time and details. */
function formOf(body: string, fields: Record<string, string>): Record<string, string> {
  const form = body.slice(body.indexOf(`action="/p/${ORG}/book"`));
  const hidden = Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  );
  return { ...hidden, ...fields };
}

describe('choosing a day and a time', () => {
  it('shows a week of days with their counts, the day’s times by part of the day, and the zone', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const body = await search({ date: '2026-11-24' });
    expect(body).toContain('<nav aria-label="Days" class="strip">');
    const days = [
      ...body.matchAll(
        /<li><button type="submit" name="date" value="([^"]+)"([^>]*)>([^<]+) <small>([^<]+)<\/small><\/button><\/li>/g,
      ),
    ];
    expect(days.map((d) => d[3])).toEqual([
      'Mon 23',
      'Tue 24',
      'Wed 25',
      'Thu 26',
      'Fri 27',
      'Sat 28',
      'Sun 29',
    ]);
    // Each day a button of one GET form keeping the search; the chosen one marked as current.
    expect(body).toContain(
      '<nav aria-label="Days" class="strip"><form method="get" action="/p/northside-hair#times"><input type="hidden" name="location" value="camden">',
    );
    expect(days[1]![1]).toBe('2026-11-24');
    expect(days[1]![2]).toContain('aria-current="date"');
    expect(days[6]![4]).toBe('none');
    expect(days[6]![2]).toContain('class="none"');
    expect(days[1]![4]).toMatch(/^\d+ times$/);
    expect(body).toContain('<button type="submit" name="date" value="2026-11-30">Later days</button>');
    expect(body).toContain('<button type="submit" name="date" value="2026-11-23">Previous day</button>');
    expect(body).toContain('<button type="submit" name="date" value="2026-11-25">Next day</button>');
    // Today is the first day: no earlier week to go to.
    expect(body).not.toContain('Earlier days');
    expect(body).toContain('<h2 id="times">Tuesday 24 November</h2>');
    expect(body).toContain('Times are London time (GMT), where Northside Camden is.');
    // Times grouped, each labelled with its time alone (no repeated date).
    expect(body).toMatch(
      /<fieldset class="times"><legend>Morning<\/legend>\n<label><input type="radio" name="starts_at" value="2026-11-24T09:00Z" required>09:00<\/label>/,
    );
    expect(body).toContain('<legend>Afternoon</legend>');
    expect(body).not.toContain('Tuesday 24 November 2026 at');
    expect(Number(days[1]![4]!.split(' ')[0])).toBe(radios(body).length);
    const later = await search({ date: '2026-11-30' });
    expect(later).toContain('<button type="submit" name="date" value="2026-11-23">Earlier days</button>');
  });

  // The page's words are English; its times follow the organisation's locale, and so does their clock.
  it.each([
    ['fr-FR', '(heure : Royaume-Uni)', 'mardi 24 novembre 2026 à 10:00 (heure : Royaume-Uni)'],
    [
      'de-DE',
      '(Ortszeit Vereinigtes Königreich)',
      '24. November 2026 um 10:00 (Ortszeit Vereinigtes Königreich)',
    ],
  ])(
    'names the clock of a %s page’s times in their language, not by the zone’s English city',
    async (locale, clock, time) => {
      const catalogue = demoCatalogue() as { organisation: { locale: string } };
      catalogue.organisation.locale = locale;
      t = await startTestApp({ catalogues: [catalogue], now: NOW });
      const body = await search({ date: '2026-11-24' });
      const words = /<p>(Times are [^<]*)<\/p>/.exec(body)?.[1] ?? '';
      expect(words).toMatch(/^Times are local time where Northside Camden is \(.+, .+\)\.$/);
      expect(words).toContain(`(${clock.slice(1, -1)}, `);
      expect(words).not.toContain('London');
      const page = pagePathOf(
        await pagePost(t, `/p/${ORG}/book`, {
          ...formOf(body, { starts_at: '2026-11-24T10:00Z', first_name: 'Rosa', last_name: 'Parks' }),
          email: 'rosa@example.com',
        }),
      );
      const booking = (await pageGet(t, page)).body;
      const times = [...booking.matchAll(/<time datetime="[^"]+">([^<]+)<\/time>/g)].map((m) => m[1]!);
      expect(times.find((said) => said.includes('10:00'))).toContain(time);
      for (const said of times) expect(said.endsWith(` ${clock}`), said).toBe(true);
      expect(booking).not.toContain('London time');
    },
  );

  // Where the locale has letters for the clock (its own zone), the page says them, as the messages do.
  it.each([
    ['de-AT', 'Europe/Vienna', 'Vienna', 'MEZ'],
    ['es-ES', 'Atlantic/Canary', 'Canary', 'WET'],
    ['es-US', 'America/New_York', 'New York', 'EST'],
    // Spanish writes London's as "GMT" (French "UTC+0", German "GMT+0": their place, above).
    ['es-ES', 'Europe/London', 'London time', 'GMT'],
  ])(
    'names the clock of a %s page in %s by its abbreviation, not the English city',
    async (locale, zone, city, abbr) => {
      const catalogue = demoCatalogue() as {
        organisation: { locale: string };
        locations: { timezone: string }[];
      };
      catalogue.organisation.locale = locale;
      catalogue.locations[0]!.timezone = zone;
      t = await startTestApp({ catalogues: [catalogue], now: NOW });
      const body = await search({ date: '2026-11-24' });
      expect(/<p>(Times are [^<]*)<\/p>/.exec(body)?.[1]).toBe(
        `Times are local time where Northside Camden is (${abbr}).`,
      );
      const page = pagePathOf(
        await pagePost(t, `/p/${ORG}/book`, {
          ...formOf(body, { starts_at: radios(body)[0]!, first_name: 'Rosa', last_name: 'Parks' }),
          email: 'rosa@example.com',
        }),
      );
      const booking = (await pageGet(t, page)).body;
      const times = [...booking.matchAll(/<time datetime="[^"]+">([^<]+)<\/time>/g)].map((m) => m[1]!);
      expect(times.length).toBeGreaterThan(0);
      for (const said of times) expect(said.endsWith(` ${abbr}`), said).toBe(true);
      expect(booking).not.toContain(city);
    },
  );

  it('calls a day everyone at the location is off closed, not one nobody who does the service works', async () => {
    // Wednesday 2 December: Camden opens Wednesdays, but everyone there has the day off.
    const catalogue = demoCatalogue() as {
      staff: { locations?: string[]; working_hours?: Record<string, unknown>; time_off?: unknown[] }[];
    };
    for (const person of catalogue.staff) {
      person.time_off = [
        ...(person.time_off ?? []),
        { start: '2026-12-02T00:00:00', end: '2026-12-03T00:00:00', reason: 'Training' },
      ];
    }
    t = await startTestApp({ catalogues: [catalogue], now: NOW });
    const body = await search({ date: '2026-12-02' });
    expect(body).toContain('No free times that day. Closed that day.');
    expect(body).not.toContain('Nobody who does');
  });

  it('says why a day has no times: closed, closed for a reason, too soon, the day over, too far ahead, fully booked', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    expect(await search({ date: '2026-11-29' })).toContain('No free times that day. Closed that day.');
    expect(await search({ date: '2026-12-25' })).toContain(
      'No free times that day. Closed that day: Christmas Day.',
    );
    expect(await search({ date: '2027-03-01' })).toContain(
      'Too far ahead: times can be booked up to 90 days ahead.',
    );
    // A day already past is read as today. At 16:30 Amara is free until 18:00, but a cut (an hour)
    // needs an hour's notice: too soon online, the salon may still fit one in.
    t.clock.set('2026-11-23T16:30:00Z');
    expect(await search({ date: '2026-11-20' })).toContain(
      'Too soon: no times are left to book online today. Call <a href="tel:+442074850000">020 7485 0000</a> to ask.',
    );
    // At 17:30 no cut fits before 18:00 whatever the notice: the day is over, not too soon.
    t.clock.set('2026-11-23T17:30:00Z');
    expect(await search({ date: '2026-11-23' })).toContain(
      'No free times that day. No more times today: the working day is over.',
    );
    t.clock.set(NOW);
    // Ben works Saturday alone; book every Saturday time and the day is fully booked.
    const ben = await staffId('Ben Carter');
    for (let i = 0; i < 20; i += 1) {
      const body = await search({ date: '2026-11-28', staff: ben });
      const [first] = radios(body);
      if (!first) break;
      const booked = await pagePost(
        t,
        `/p/${ORG}/book`,
        formOf(body, {
          starts_at: first,
          first_name: 'Sam',
          last_name: `Full${i}`,
          email: `full${i}@example.com`,
        }),
        { address: `127.0.1.${i + 1}` },
      );
      expect(booked.statusCode, booked.body).toBe(303);
    }
    expect(await search({ date: '2026-11-28' })).toContain('No free times that day. Fully booked that day.');
    const amara = await staffId('Amara Okafor');
    expect(await search({ date: '2026-11-28', staff: amara })).toContain(
      'Amara Okafor does not work that day; choose another day, or anyone.',
    );
  });
});

describe('choosing a stylist', () => {
  it('offers anyone (the default) or a stylist who does the services; the booking is with them', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const anyone = await search({ date: '2026-11-24' });
    expect(anyone).toContain(
      '<select id="staff" name="staff"><option value="">Anyone</option><option value="',
    );
    expect(anyone).toMatch(/>Amara Okafor<\/option><option value="[^"]+">Ben Carter<\/option><\/select>/);
    const ben = await staffId('Ben Carter');
    const withBen = await search({ date: '2026-11-24', staff: ben });
    expect(withBen).toContain(`<option value="${ben}" selected>Ben Carter</option>`);
    expect(withBen).toContain('Choose a time with Ben Carter:');
    // Ben starts at 10 on Tuesdays: his times are fewer than anyone's, and none at 9.
    expect(radios(withBen).length).toBeLessThan(radios(anyone).length);
    expect(radios(withBen)).not.toContain('2026-11-24T09:00Z');
    const startsAt = radios(withBen)[0]!;
    const booked = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(withBen, {
        starts_at: startsAt,
        first_name: 'Rosa',
        last_name: 'Parks',
        email: 'rosa@example.com',
      }),
    );
    const path = pagePathOf(booked);
    expect((await pageGet(t, path)).body).toContain('<dt>With</dt><dd>Ben Carter</dd>');
    // A stylist who does not do the services is not offered.
    const ids = await catalogueIds(t.database.db);
    const beard = await pageGet(
      t,
      `/p/${ORG}?location=camden&services=${ids.services.beard}&date=2026-11-24`,
    );
    expect(beard.body).not.toContain('>Amara Okafor</option>');
  });
});

describe('one form, one booking; a refusal keeps what was typed', () => {
  it('a number typed in full-width digits is its own customer: the next one on the device, also typing full-width, never opens it', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const body = await search({ date: '2026-11-24' });
    const [first, second] = radios(body);
    // A Japanese IME types full-width digits; the number is read (and texted) as 07400 111222.
    const rosa = { first_name: 'Rosa', last_name: 'Parks', phone: '０７４００ １１１２２２' };
    const once = pagePathOf(
      await pagePost(t, `/p/${ORG}/book`, formOf(body, { ...rosa, starts_at: first! })),
    );
    // The same customer sending the form again (Back, Confirm) still lands on her booking...
    expect(
      pagePathOf(await pagePost(t, `/p/${ORG}/book`, formOf(body, { ...rosa, starts_at: first! }))),
    ).toBe(once);
    // ...but the next customer on the device, with a number of her own in full-width digits, does not.
    const stranger = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(body, {
        first_name: 'Ann',
        last_name: 'Other',
        phone: '０７４００ ３３３４４４',
        starts_at: second!,
      }),
    );
    expect(stranger.statusCode, stranger.body).toBe(409);
    expect(stranger.body).toContain('This form has already made a booking.');
    expect(stranger.body).not.toContain(once);
  });

  it('the same form sent again (Back, then Confirm) leads to the booking it made, not a second one', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const body = await search({ date: '2026-11-24' });
    const [first, second] = radios(body);
    const key = /name="form_key" value="([A-Za-z0-9_-]{22})"/.exec(body)?.[1];
    expect(key).toBeDefined();
    const fields = { first_name: 'Rosa', last_name: 'Parks', email: 'rosa@example.com' };
    const once = pagePathOf(
      await pagePost(t, `/p/${ORG}/book`, formOf(body, { ...fields, starts_at: first! })),
    );
    // Back, another time chosen, confirmed again: the form already booked; it leads there.
    const again = pagePathOf(
      await pagePost(t, `/p/${ORG}/book`, formOf(body, { ...fields, starts_at: second! })),
    );
    expect(again).toBe(once);
    const bookings = await t.database.db.selectFrom('bookings').select('id').execute();
    expect(bookings).toHaveLength(1);
    // On a shared device, the next customer's details on that form never open Rosa's booking.
    const stranger = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(body, { first_name: 'Ann', last_name: 'Other', email: 'ann@example.com', starts_at: second! }),
    );
    expect(stranger.statusCode, stranger.body).toBe(409);
    expect(stranger.body).toContain('This form has already made a booking.');
    expect(stranger.body).not.toContain(once);
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toHaveLength(1);
    // The page comes back with a fresh form, good for their own booking.
    expect(/name="form_key" value="([^"]+)"/.exec(stranger.body)?.[1]).not.toBe(key);
    const theirs = pagePathOf(
      await pagePost(
        t,
        `/p/${ORG}/book`,
        formOf(stranger.body, {
          first_name: 'Ann',
          last_name: 'Other',
          email: 'ann@example.com',
          starts_at: radios(stranger.body).at(-1)!,
        }),
      ),
    );
    expect(theirs).not.toBe(once);
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toHaveLength(2);
    // A new visit to the page is a new form, good for one more booking.
    const fresh = await search({ date: '2026-11-24' });
    expect(/name="form_key" value="([^"]+)"/.exec(fresh)?.[1]).not.toBe(key);
    const other = pagePathOf(
      await pagePost(t, `/p/${ORG}/book`, formOf(fresh, { ...fields, starts_at: radios(fresh)[0]! })),
    );
    expect(other).not.toBe(once);
  });

  it('the form is kept for Back (its key with it); a refusal, holding what was typed, is not kept', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const form = await pageGet(t, `/p/${ORG}?location=camden&services=${ids.services.cut}&date=2026-11-24`);
    expect(form.headers['cache-control']).toBe('private, max-age=0');
    const refused = await pagePost(t, `/p/${ORG}/book`, formOf(form.body, { first_name: 'Rosa' }));
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['cache-control']).toBe('no-store');
  });

  it('a drama number (07700 900123): the page says it is no one’s phone, not that its digits are wrong', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const body = await search({ date: '2026-11-24' });
    const refused = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(body, {
        starts_at: radios(body)[2]!,
        first_name: 'Rosa',
        last_name: 'Parks',
        phone: '07700 900123',
      }),
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(
      '<p id="phone-error" role="alert" class="fee">That number is one kept for TV and film dramas, so it is no one’s phone. Give the number you really use.</p>',
    );
  });

  it('a phone that does not read: the page again, in plain words, with the details and time kept', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const body = await search({ date: '2026-11-24' });
    const startsAt = radios(body)[2]!;
    const refused = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(body, {
        starts_at: startsAt,
        first_name: 'Rosa',
        last_name: 'Parks',
        phone: '12',
        email: 'rosa@example',
      }),
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain('E.164');
    expect(refused.body).toContain(
      '<p id="phone-error" role="alert" class="fee">That phone number does not look right. Check the digits; a number from abroad starts with + and its country code.</p>',
    );
    expect(refused.body).toContain('value="Rosa"');
    expect(refused.body).toContain('value="Parks"');
    expect(refused.body).toContain('name="phone" type="tel" autocomplete="tel" maxlength="30" value="12"');
    expect(refused.body).toContain(`value="${startsAt}" checked>`);
    // The same form key: it has booked nothing yet.
    expect(refused.body).toContain(
      `name="form_key" value="${/name="form_key" value="([^"]+)"/.exec(body)?.[1]}"`,
    );
    expect(refused.body).toContain('<button type="submit" class="primary">Confirm booking</button>');
    // A national number works: the same form, corrected.
    const fixed = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(refused.body, {
        starts_at: startsAt,
        first_name: 'Rosa',
        last_name: 'Parks',
        phone: '07400 123987',
      }),
    );
    pagePathOf(fixed);
  });

  it('a day the calendar does not have, typed into the address, is said, never a fault', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    for (const date of ['2026-12-32', '2027-02-29', '2026-13-01']) {
      for (const services of [ids.services.cut!, '']) {
        const params = new URLSearchParams({ location: 'camden', services, date });
        const odd = await pageGet(t, `/p/${ORG}?${params.toString()}`);
        expect(odd.statusCode, odd.body).toBe(400);
        expect(odd.body).toContain('Choose a day.');
      }
    }
  });

  it('the calendar’s last week offers no day, and no way on, past 9999-12-31', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const buttons = (body: string) =>
      [...body.matchAll(/<button type="submit" name="date" value="([^"]+)"[^>]*>([^<]+)/g)].map(
        (m) => `${m[1]} ${m[2]!.trim()}`,
      );
    // Weeks count from today (a Monday): 9999-12-31's strip starts on a Monday and holds 5 days.
    const last = buttons(await search({ date: '9999-12-31' }));
    expect(last.filter((b) => /^\d{4}-\d{2}-\d{2} \w{3} \d+$/.test(b))).toHaveLength(5);
    expect(last.every((b) => /^\d{4}-/.test(b))).toBe(true);
    expect(last).toContain('9999-12-30 Previous day');
    expect(last.some((b) => /Next day|Later days/.test(b))).toBe(false);
    // The day before the strip's last: on to 9999-12-31, but no later week.
    const before = buttons(await search({ date: '9999-12-30' }));
    expect(before).toContain('9999-12-31 Next day');
    expect(before.some((b) => b.includes('Later days'))).toBe(false);
    // Every button of every strip near the end opens a page, never "Choose a day".
    for (const b of [...last, ...before]) {
      const date = b.slice(0, b.indexOf(' '));
      expect(await search({ date })).toContain('<nav aria-label="Days" class="strip">');
    }
  });
  it('the other customer forms say it in plain words too (the waitlist)', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const refused = await pagePost(t, `/p/${ORG}/waitlist`, {
      location: 'camden',
      services: ids.services.cut!,
      from_date: '2026-11-29',
      to_date: '2026-11-29',
      times: 'afternoon',
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '12',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain('E.164');
    expect(refused.body).toContain('That phone number does not look right.');
    // The form comes back with what was typed, to put right and send again.
    expect(refused.body).toContain(`<form method="post" action="/p/${ORG}/waitlist">`);
    expect(refused.body).toMatch(/name="first_name"[^>]* value="Rosa"/);
    expect(refused.body).toMatch(/name="last_name"[^>]* value="Parks"/);
    expect(refused.body).toMatch(/name="phone"[^>]* value="12"/);
    expect(refused.body).toMatch(/name="times" value="afternoon" checked/);
    expect(refused.body).toMatch(/name="times" value="morning">/);
    expect(refused.body).toContain('Back to the booking page</a>');

    // Put right, the same form joins the waitlist.
    const joined = await pagePost(t, `/p/${ORG}/waitlist`, {
      location: 'camden',
      services: ids.services.cut!,
      from_date: '2026-11-29',
      to_date: '2026-11-29',
      times: 'afternoon',
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '07400 123987',
    });
    expect(joined.statusCode, joined.body).toBe(200);
    expect(joined.body).toContain('You are on the waitlist');
  });

  it('a time taken meanwhile: the page again with the other times, the details kept', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ben = await staffId('Ben Carter');
    const mine = await search({ date: '2026-11-24', staff: ben });
    const theirs = await search({ date: '2026-11-24', staff: ben });
    const startsAt = radios(mine)[0]!;
    pagePathOf(
      await pagePost(
        t,
        `/p/${ORG}/book`,
        formOf(theirs, {
          starts_at: startsAt,
          first_name: 'Ann',
          last_name: 'Other',
          email: 'ann@example.com',
        }),
      ),
    );
    const late = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(mine, {
        starts_at: startsAt,
        first_name: 'Rosa',
        last_name: 'Parks',
        email: 'rosa@example.com',
      }),
    );
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain(
      // In a customer's words: the times are on the page already, so no "ask for availability again".
      '<p id="starts_at-error" role="alert" class="fee">That time has just been taken. Your details are kept below: choose another time and confirm again.</p>',
    );
    expect(late.body).toContain('value="rosa@example.com"');
    expect(radios(late.body)).not.toContain(startsAt);
    expect(radios(late.body).length).toBeGreaterThan(0);
    expect(late.body).toContain(`<option value="${ben}" selected>Ben Carter</option>`);
  });
});

describe('the salon’s day changes while the form is open', () => {
  type Catalogue = {
    locations: { closures?: { date: string; reason?: string }[] }[];
    services: { name: string; locations: string[] }[];
    staff: { name: string; working_hours: Record<string, Record<string, string[][] | undefined>> }[];
  };

  /** The demo catalogue, edited, imported again (as the salon would, with the form open or before). */
  async function importEdited(edit: (catalogue: Catalogue) => void) {
    const edited = demoCatalogue() as Catalogue;
    edit(edited);
    await importCatalogue(t.database.db, edited, t.clock.nowMs());
  }

  /** At Camden on Tuesday 24 November, only Ben works, 17:00 to 18:00: one time for a cut, 17:00. */
  const onlyBenAtFive = (catalogue: Catalogue) => {
    for (const member of catalogue.staff) {
      const camden = member.working_hours.camden;
      if (!camden?.tue) continue;
      if (member.name === 'Ben Carter') camden.tue = [['17:00', '18:00']];
      else delete camden.tue;
    }
  };

  const rosa = { first_name: 'Rosa', last_name: 'Parks', email: 'rosa@example.com' };
  const alertOf = (body: string) => /<p[^>]*role="alert"[^>]*>([^<]*)<\/p>/.exec(body)?.[1];

  it('the day’s last free time taken meanwhile: says no other time is free then, and keeps the details for the waitlist', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    await importEdited(onlyBenAtFive);
    const mine = await search({ date: '2026-11-24' });
    const theirs = await search({ date: '2026-11-24' });
    expect(radios(mine)).toEqual(['2026-11-24T17:00Z']);
    pagePathOf(
      await pagePost(
        t,
        `/p/${ORG}/book`,
        formOf(theirs, {
          starts_at: '2026-11-24T17:00Z',
          first_name: 'Ann',
          last_name: 'Other',
          email: 'ann@example.com',
        }),
      ),
    );
    const late = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(mine, { ...rosa, starts_at: '2026-11-24T17:00Z' }),
    );
    expect(late.statusCode).toBe(409);
    // No time is left to choose, and no booking form: the page says so, not "choose another time".
    expect(radios(late.body)).toEqual([]);
    expect(alertOf(late.body)).toBe(
      'That time has just been taken. No other time is free that day: choose another day above, or ask below to be told when a time frees up.',
    );
    // What was typed is kept where it can still be used: the waitlist's form.
    expect(late.body).toContain(
      'id="wl_first_name" name="first_name" autocomplete="given-name" required maxlength="60" value="Rosa"',
    );
    expect(late.body).toContain(
      'id="wl_email" name="email" type="email" autocomplete="email" maxlength="254" value="rosa@example.com"',
    );
  });

  it('a form whose services are no longer booked here: said in words, with no “details kept below” over a page with no details form', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const open = await search({ date: '2026-11-24' });
    await importEdited((catalogue) => {
      catalogue.services.find((s) => s.name === 'Cut & blow-dry')!.locations = ['islington'];
    });
    const sent = await pagePost(t, `/p/${ORG}/book`, formOf(open, { ...rosa, starts_at: radios(open)[0]! }));
    expect(sent.statusCode).toBe(400);
    expect(sent.body).not.toContain('name="first_name"');
    // Never the service's id nor the location's slug ("Service 80f1… is not offered at camden").
    expect(alertOf(sent.body)).toBe('A service you chose is no longer booked online here.');
  });

  it('hours cut short since: says nobody works then any more, not the API’s “ask for availability again” with an ISO date', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const open = await search({ date: '2026-11-24' });
    await importEdited((catalogue) => {
      for (const member of catalogue.staff) {
        if (member.working_hours.camden?.tue) member.working_hours.camden.tue = [['10:00', '16:00']];
      }
    });
    const sent = await pagePost(
      t,
      `/p/${ORG}/book`,
      formOf(open, { ...rosa, starts_at: '2026-11-24T17:00Z' }),
    );
    expect(sent.statusCode).toBe(409);
    expect(alertOf(sent.body)).toBe(
      'Nobody who does this works at that time any more. Your details are kept below: choose another time and confirm again.',
    );
    expect(radios(sent.body).length).toBeGreaterThan(0);
  });

  it('a closure added for the day since: the day said in words', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const open = await search({ date: '2026-11-24' });
    await importEdited((catalogue) => {
      catalogue.locations[0]!.closures = [{ date: '2026-11-24', reason: 'Staff training' }];
    });
    const sent = await pagePost(t, `/p/${ORG}/book`, formOf(open, { ...rosa, starts_at: radios(open)[0]! }));
    expect(sent.statusCode).toBe(409);
    expect(alertOf(sent.body)).toBe(
      'Northside Camden is closed on Tuesday 24 November (Staff training). No other time is free that day: choose another day above, or ask below to be told when a time frees up.',
    );
  });
});

describe('the forms’ addresses opened as pages', () => {
  it('sends a bookmark or a reload of /book or /waitlist to the salon’s page; an unknown salon is 404', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    for (const form of ['book', 'waitlist']) {
      const opened = await pageGet(t, `/p/${ORG}/${form}`);
      expect(opened.statusCode, form).toBe(303);
      expect(opened.headers.location).toBe(`/p/${ORG}`);
      expect((await pageGet(t, `/p/nobody-here/${form}`)).statusCode).toBe(404);
    }
  });
});

describe('a link to a location that takes no bookings here', () => {
  it('is a 404 page that offers the salon’s locations, never the API’s “slug”; its forms say so too', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const gone = await pageGet(t, `/p/${ORG}?location=kings-cross&services=${ids.services.cut!}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain(
      '<p role="alert" class="fee">We could not find that location: it may have closed or moved. Choose one of ours below.</p>',
    );
    expect(gone.body).toContain('<option value="">Choose a location</option>');
    expect(gone.body).toContain('<option value="camden">Northside Camden</option>');
    expect(gone.body).not.toMatch(/slug|selected/);

    // A booking or waitlist form sent for it (a page kept open while the branch closed): said in the same words.
    const booked = await pagePost(t, `/p/${ORG}/book`, {
      location: 'kings-cross',
      services: ids.services.cut!,
      starts_at: '2026-11-24T10:00:00Z',
      first_name: 'Rosa',
      last_name: 'Parks',
      email: 'rosa@example.com',
    });
    expect(booked.statusCode).toBe(404);
    expect(booked.body).toContain('We could not find that location: it may have closed or moved.');
    expect(booked.body).toContain('<option value="islington">Northside Islington</option>');
    expect(booked.body).not.toContain('slug');
    const waiting = await pagePost(t, `/p/${ORG}/waitlist`, {
      location: 'kings-cross',
      services: ids.services.cut!,
      from_date: '2026-11-29',
      to_date: '2026-11-29',
      first_name: 'Rosa',
      last_name: 'Parks',
      email: 'rosa@example.com',
    });
    expect(waiting.statusCode).toBe(404);
    expect(waiting.body).toContain('We could not find that location: it may have closed or moved.');
    expect(waiting.body).not.toContain('slug');
  });
});

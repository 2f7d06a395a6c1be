import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectInProcess,
  demoCatalogue,
  errorText,
  type Json,
  type McpHarness,
} from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { KATHMANDU, NEW_YORK, SYDNEY } from '../helpers/world-catalogues.ts';

/**
 * Dates and times as callers say them, and as the tools say them back, through the SDK's client. The
 * clock stands at Monday 23 November 2026, 09:00 in London: 04:00 that Monday in New York, 20:00 in
 * Sydney, 14:45 in Kathmandu. The demo catalogue (London, en-GB; Camden is open 9 to 6 on Tuesdays,
 * where Amara takes lunch from 1 to 2) and the world catalogues (New York in en-US, Sydney, Kathmandu:
 * open 9 to 12:30 and 1:30 to 6), New York's Thursdays stretched from 7 am to 9 pm here, so that "8"
 * is open both in the morning and in the evening.
 */
function lateThursdays(catalogue: unknown): unknown {
  const copy = structuredClone(catalogue) as Json;
  copy.staff[1].working_hours['park-slope'].thu = [['07:00', '21:00']];
  return copy;
}

/** Kathmandu's salon moved to Kolkata: India's one zone, UTC+05:30, which its callers call IST. */
function inKolkata(catalogue: unknown): unknown {
  const copy = structuredClone(catalogue) as Json;
  Object.assign(copy.organisation, {
    slug: 'park-street',
    name: 'Park Street Salon',
    booking_reference_prefix: 'PS',
  });
  Object.assign(copy.locations[0], {
    timezone: 'Asia/Kolkata',
    country: 'IN',
    city: 'Kolkata',
    phone: '+913322334455',
  });
  copy.clients[0].phone = '+919876543210';
  return copy;
}

let t: TestApp;
let kolkata: McpHarness;
let london: McpHarness;
let newYork: McpHarness;
let sydney: McpHarness;
let kathmandu: McpHarness;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoCatalogue(), lateThursdays(NEW_YORK), SYDNEY, KATHMANDU, inKolkata(KATHMANDU)],
    limits: { requestsPerMinute: 100_000 },
  });
  const keyOf = (catalogue: unknown) => t.keyFor((catalogue as Json).organisation.slug);
  london = await connectInProcess(t, t.keys.readWrite);
  newYork = await connectInProcess(t, await keyOf(NEW_YORK), 'modern');
  sydney = await connectInProcess(t, await keyOf(SYDNEY));
  kathmandu = await connectInProcess(t, await keyOf(KATHMANDU));
  kolkata = await connectInProcess(t, await t.keyFor('park-street'));
});
afterAll(async () => {
  for (const mcp of [london, newYork, sydney, kathmandu, kolkata]) await mcp?.close();
  await t.close();
});

const dates = (result: Json): string[] => [
  ...new Set<string>(result.slots.map((s: Json) => s.starts_at.slice(0, 10))),
];
const times = (result: Json): string[] => result.slots.map((s: Json) => s.starts_at.slice(11, 16));
const camden = (args: Json) => london.call('find_slots', { location: 'camden', services: 'cut', ...args });

describe('find_slots reads dates as callers say them', () => {
  it('takes the tools’ own wording, "the 8th", "Tuesday week" and "8/12" in the location’s locale', async () => {
    const spoken = await camden({ date: 'Tuesday 8 December' });
    expect(dates(spoken)).toEqual(['2026-12-08']);
    expect(spoken.slots[0].spoken).toMatch(/^Tuesday 8 December at /);
    expect(dates(await camden({ date: 'the 8th' }))).toEqual(['2026-12-08']);
    // The short weekdays callers and transcripts use, "Tues" and "Thur" among them.
    for (const date of ['Tues 8th Dec', 'Tues 8 December', 'Thur 10 December', 'Weds 9 Dec']) {
      expect(dates(await camden({ date })), date).toEqual([
        `2026-12-${date.match(/\d+/)![0].padStart(2, '0')}`,
      ]);
    }
    expect(dates(await camden({ date: '8/12' }))).toEqual(['2026-12-08']);
    expect(dates(await camden({ date: 'Tuesday week' }))).toEqual(['2026-12-01']);
    expect(dates(await camden({ date: 'tomorrow, Tuesday 24 November' }))).toEqual(['2026-11-24']);
    // In New York "12/8" is December 8, and "8/12" August 12 (beyond the 60 days bookable).
    const american = await newYork.call('find_slots', { services: "men's cut", date: '12/8' });
    expect(dates(american)).toEqual(['2026-12-08']);
    expect(american.slots[0].spoken).toMatch(/^Tuesday, December 8 at \d+(:\d\d)? (AM|PM)$/);
    const august = await newYork.call('find_slots', { services: "men's cut", date: '8/12' });
    expect(august).toMatchObject({ ok: false, code: 'no_slots', reason: 'too_far_ahead' });
    expect(august.hint).toMatch(
      /^Thursday, August 12, 2027 is further ahead than .* takes bookings \(up to 60 days ahead, so until Friday, January 22\);/,
    );
  });

  it('reads "tomorrow morning" as tomorrow before noon, unless time_of_day says otherwise', async () => {
    const morning = await camden({ date: 'tomorrow morning', limit: 20 });
    expect(dates(morning)).toEqual(['2026-11-24']);
    expect(times(morning).every((time) => time < '12:00')).toBe(true);
    expect(times(morning)).toContain('09:00');
    const afternoon = await camden({ date: 'tomorrow morning', time_of_day: 'afternoon', limit: 20 });
    expect(times(afternoon).every((time) => time >= '12:00' && time < '17:00')).toBe(true);
  });

  it('reads "next week" as the seven days from next Monday, unless days is given', async () => {
    // Ben works at Camden on Tuesdays, Thursdays and Saturdays.
    const week = await camden({ date: 'next week', staff: 'Ben', limit: 20 });
    expect(dates(week)[0]).toBe('2026-12-01');
    const all = await camden({ date: 'next week', staff: 'Ben', earliest: '17:30' });
    expect(all).toMatchObject({ ok: false, code: 'no_slots' });
    expect(all.hint).toMatch(/^Nothing is free from Monday 30 November to Sunday 6 December from 5:30 pm;/);
    const oneDay = await camden({ date: 'next week', staff: 'Ben', days: 1 });
    expect(oneDay).toMatchObject({ ok: false });
    expect(oneDay.hint).toContain('Monday 30 November');
    expect(oneDay.hint).not.toContain('December');
  });

  it('asks the agent to check a date whose weekday does not fit, and which weekend is meant', async () => {
    const wrong = await london.raw('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'Monday 8 December',
    });
    expect(errorText(wrong)).toMatch(
      /date: Tuesday 8 December is not a Monday; ask the caller which they mean/,
    );
    const weekend = await london.raw('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'next weekend',
    });
    expect(errorText(weekend)).toMatch(/Saturday 28 November or Saturday 5 December/);
  });

  it('reads dates in the location’s zone: Sydney’s and Kathmandu’s today are not London’s', async () => {
    // 20:00 on Monday in Sydney: tomorrow is Tuesday there too; at 14:45 in Kathmandu, the same.
    const aussie = await sydney.call('find_slots', { services: 'cut and style', date: 'tomorrow morning' });
    expect(aussie.slots[0]).toMatchObject({
      starts_at: '2026-11-24T09:00:00+11:00',
      spoken: 'tomorrow, Tuesday 24 November at 9 am',
    });
    const nepali = await kathmandu.call('find_slots', { services: 'haircut', date: 'Tuesday week' });
    expect(nepali.slots[0].starts_at).toBe('2026-12-01T09:00:00+05:45');
  });
});

describe('find_slots reads British date phrases', () => {
  it('takes "this coming Tuesday", "Monday fortnight" and "a fortnight today"', async () => {
    expect(dates(await camden({ date: 'this coming Tuesday' }))).toEqual(['2026-11-24']);
    expect(dates(await camden({ date: 'Monday fortnight' }))).toEqual(['2026-12-07']);
    expect(dates(await camden({ date: 'a fortnight today' }))).toEqual(['2026-12-07']);
  });
});

describe('find_slots reads earliest and latest inside opening hours', () => {
  it('reads "2:30" at a salon open 9 to 6 as 2:30 pm', async () => {
    const result = await camden({ date: 'tomorrow', earliest: '2:30', latest: '3' });
    expect(times(result)).toEqual(['14:30', '14:45', '15:00']);
    expect((await camden({ date: 'tomorrow', earliest: '2:30 am', limit: 1 })).slots[0].starts_at).toBe(
      '2026-11-24T09:00:00+00:00',
    );
  });

  it('asks am or pm when both are open (7 am to 9 pm on Thursdays), unless a part of the day says', async () => {
    const ask = await newYork.raw('find_slots', { services: "men's cut", date: 'thursday', earliest: '8' });
    expect(errorText(ask)).toMatch(
      /earliest: 8 could be 8 AM or 8 PM, both within opening hours; ask the caller which/,
    );
    const evening = await newYork.call('find_slots', {
      services: "men's cut",
      date: 'thursday evening',
      earliest: '8',
    });
    expect(evening.slots[0]).toMatchObject({ starts_at: '2026-11-26T20:00:00-05:00' });
    expect(evening.slots[0].spoken).toBe('Thursday, November 26 at 8 PM');
  });

  it('says the range it searched in words', async () => {
    // Amara takes lunch from 1 to 2 on Tuesdays: "1" is 1 pm inside her day.
    const result = await camden({ date: 'tomorrow', staff: 'Amara', earliest: '1', latest: '1:45' });
    expect(result).toMatchObject({ ok: false, code: 'no_slots' });
    expect(result.hint).toMatch(/^Nothing is free tomorrow, Tuesday 24 November from 1 pm until 1:45 pm;/);
  });

  it('refuses a latest start before the earliest, naming both', async () => {
    const crossed = errorText(
      await london.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'tomorrow',
        earliest: '3pm',
        latest: '1pm',
      }),
    );
    expect(crossed).toMatch(
      /^Something in the request was not valid.* earliest and latest: latest \(1 pm\) is before earliest \(3 pm\); /,
    );
    // Placed inside the opening hours first: "3" and "1" are 3 pm and 1 pm.
    const placed = errorText(
      await london.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'tomorrow',
        earliest: '3',
        latest: '1',
      }),
    );
    expect(placed).toContain('latest (1 pm) is before earliest (3 pm)');
    // The same time for both is one start, not a mistake.
    const one = await camden({ date: 'tomorrow', earliest: '3pm', latest: '3pm' });
    expect(one.slots.map((s: { starts_at: string }) => s.starts_at)).toEqual(['2026-11-24T15:00:00+00:00']);
  });

  it('refuses an earliest or latest start outside the part of the day asked for, naming both, not "nothing free"', async () => {
    const refused = async (args: Json) =>
      errorText(await london.raw('find_slots', { location: 'camden', services: 'cut', ...args }));
    expect(await refused({ date: 'tomorrow', time_of_day: 'morning', earliest: '15:00' })).toMatch(
      /^Something in the request was not valid.* time_of_day and earliest: earliest \(3 pm\) is after the morning, which ends at noon; ask the caller /,
    );
    expect(await refused({ date: 'tomorrow', time_of_day: 'afternoon', latest: '10am' })).toMatch(
      / time_of_day and latest: latest \(10 am\) is before the afternoon, which starts at noon; ask the caller /,
    );
    expect(await refused({ date: 'tomorrow', time_of_day: 'afternoon', earliest: '5:30pm' })).toContain(
      'time_of_day and earliest: earliest (5:30 pm) is after the afternoon, which ends at 5 pm;',
    );
    // The part of the day said in the date is named as the date.
    expect(await refused({ date: 'tomorrow morning', earliest: '3pm' })).toContain(
      'date and earliest: earliest (3 pm) is after the morning, which ends at noon;',
    );
    // A range that overlaps the part of the day is searched where they meet.
    const overlap = await camden({ date: 'tomorrow', time_of_day: 'morning', earliest: '11:30' });
    expect(times(overlap)).toEqual(['11:30', '11:45']);
  });
});

describe('book and reschedule take a slot as the tools said it', () => {
  const caller = { first_name: 'Ada', last_name: 'Byron', phone: '07911 223366' };

  it('books the slot whose spoken wording is given as starts_at, and moves it by spoken words', async () => {
    const offered = await camden({ date: 'Thursday 3 December', staff: 'Amara', time_of_day: 'afternoon' });
    const slot = offered.slots[1];
    const booked = await london.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      starts_at: slot.spoken,
      client: caller,
    });
    expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
    expect(booked.booking.starts_at).toBe(slot.starts_at);
    // Given again by its ISO form, the same booking (the start reads the same).
    const again = await london.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      starts_at: slot.starts_at,
      client: caller,
    });
    expect(again.booking.reference).toBe(booked.booking.reference);

    const moved = await london.call('reschedule', {
      reference: booked.booking.reference,
      starts_at: 'Friday 4 December at noon',
    });
    expect(moved).toMatchObject({ ok: true });
    expect(moved.booking.starts_at).toBe('2026-12-04T12:00:00+00:00');
    expect(moved.booking.spoken).toContain('Friday 4 December at noon');
  });

  it('books "tomorrow at 10:30 am" in New York’s zone; a bare hour inside its hours, else asks', async () => {
    const client = { first_name: 'Lee', last_name: 'Park', phone: '+12125550123' };
    const booked = await newYork.call('book', {
      services: "men's cut",
      starts_at: 'tomorrow at 10:30 am',
      client,
    });
    expect(booked.booking.starts_at).toBe('2026-11-24T10:30:00-05:00');
    expect(booked.booking.spoken).toContain('tomorrow, Tuesday, November 24 at 10:30 AM');
    // Open 9 to 12:30 and 1:30 to 6: "2" is 2 PM.
    const bare = await newYork.call('book', { services: "men's cut", starts_at: 'tomorrow at 2', client });
    expect(bare.booking.starts_at).toBe('2026-11-24T14:00:00-05:00');
    // Open 7 AM to 9 PM on Thursdays: "8" could be either.
    const either = await newYork.raw('book', { services: "men's cut", starts_at: 'Thursday at 8', client });
    expect(errorText(either)).toMatch(/starts_at: ask the caller whether 8 is 8 AM or 8 PM/);
  });

  it('reads "o\'clock" without "at" and with am or pm after it, on book and find_slots', async () => {
    const client = { first_name: 'Kim', last_name: 'Ito', phone: '+12125550124' };
    const cases = [
      ["Wednesday 2 o'clock", '2026-11-25T14:00:00-05:00'],
      ["3 o'clock Wednesday", '2026-11-25T15:00:00-05:00'],
      ["Wednesday at 4 o'clock pm", '2026-11-25T16:00:00-05:00'],
      // Open 7 AM to 9 PM on Thursdays: am or pm said after "o'clock" settles which.
      ["Thursday at 7 o'clock pm", '2026-11-26T19:00:00-05:00'],
      ["Thursday at 7 o'clock a.m.", '2026-11-26T07:00:00-05:00'],
    ] as const;
    for (const [said, startsAt] of cases) {
      const booked = await newYork.call('book', { services: "men's cut", starts_at: said, client });
      expect(booked, said).toMatchObject({ ok: true });
      expect(booked.booking.starts_at, said).toBe(startsAt);
    }
    const found = await newYork.call('find_slots', {
      services: "men's cut",
      date: 'thursday',
      earliest: "6 o'clock pm",
      limit: 1,
    });
    expect(found.slots[0].starts_at).toMatch(/^2026-11-26T18:\d\d:00-05:00$/);
  });

  it('reads IST in Kolkata as the salon’s own clock, not as India, Ireland or Israel to ask about', async () => {
    const client = { first_name: 'Riya', last_name: 'Sen', phone: '98300 12345' };
    const booked = await kolkata.call('book', {
      services: 'haircut',
      starts_at: 'tomorrow at 2:30pm IST',
      client,
    });
    expect(booked.booking.starts_at).toBe('2026-11-24T14:30:00+05:30');
    // An hour without am/pm, with the zone: still placed inside the opening hours (9 to 6).
    const moved = await kolkata.call('reschedule', {
      reference: booked.booking.reference,
      starts_at: 'tomorrow at 3 IST',
    });
    expect(moved.booking.starts_at).toBe('2026-11-24T15:00:00+05:30');
    // In London, IST is still asked about.
    const asked = await london.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'tomorrow at 2:30pm IST',
      client,
    });
    expect(errorText(asked)).toMatch(/IST could be the time in India, Ireland or Israel/);
  });
});

describe('prices as they are said', () => {
  it('says rupees and paisa in Kathmandu, dollars and cents in New York', async () => {
    const nepali = await kathmandu.call('list_services', {});
    expect(nepali.services.find((s: Json) => s.name === 'Haircut').price_spoken).toBe('500 rupees 50 paisa');
    expect(nepali.services.find((s: Json) => s.name === 'Head massage').price_spoken).toBe('800 rupees');
    const american = await newYork.call('list_services', {});
    expect(american.services.find((s: Json) => s.name === "Men's cut").price_spoken).toBe(
      '42 dollars and 50 cents',
    );
  });
});

describe('a start said with its part of the day after the hour', () => {
  const client = { first_name: 'Lee', last_name: 'Park', phone: '+12125550123' };

  it('books "Thursday at 8 in the evening" and "at 8 in the morning" where 8 is open both ways', async () => {
    const evening = await newYork.call('book', {
      services: "men's cut",
      starts_at: 'Thursday at 8 in the evening',
      client,
    });
    expect(evening, JSON.stringify(evening)).toMatchObject({ ok: true });
    expect(evening.booking.starts_at).toBe('2026-11-26T20:00:00-05:00');
    const morning = await newYork.call('book', {
      services: "men's cut",
      starts_at: '8 in the morning on Thursday',
      client,
    });
    expect(morning.booking.starts_at).toBe('2026-11-26T08:00:00-05:00');
  });

  it('reads "tomorrow at 3 in the afternoon" as 3 pm, and never reads "afternoon" as noon', async () => {
    const moved = await london.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      earliest: 'half past 3 in the afternoon',
    });
    expect(moved.slots[0].starts_at).toBe('2026-11-24T15:30:00+00:00');
    const booked = await london.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'tomorrow at 3 in the afternoon',
      client: { first_name: 'Ola', last_name: 'Ade', phone: '07911 123460' },
    });
    expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
    expect(booked.booking.starts_at).toBe('2026-11-24T15:00:00+00:00');
    // A day and a part of it but no time: a start needs a time, not find_slots' earliest or latest.
    const vague = await london.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'tomorrow afternoon',
      client: { first_name: 'Ola', last_name: 'Ade', phone: '07911 123460' },
    });
    expect(errorText(vague)).toMatch(/starts_at: give starts_at as find_slots returned it/);
    expect(errorText(vague)).not.toMatch(/earliest or latest|say a date as/);
  });
});

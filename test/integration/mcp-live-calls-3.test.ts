import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { payDepositByStaff, waiveFee } from '../../src/app/staff-actions.ts';
import { demoWithProtectedBooking, PROTECTED_REFERENCE } from '../helpers/live-call-fixtures.ts';
import { connectInProcess, errorText, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { TWO_COUNTRIES } from '../helpers/two-country-catalogue.ts';
import { NEW_YORK, SYDNEY } from '../helpers/world-catalogues.ts';

/**
 * Live calls, round 3 (issue 44): the last ways a call ended wrong, played through the SDK's client on
 * a fixed clock (Monday 23 November 2026, 09:00 in London): the demo salon (London), a business with
 * salons in London and Kathmandu (UTC+05:45), and a barber in New York.
 */

/** The New York barber, its hot towel shave asking a $10 deposit. */
function newYorkWithDeposit(): unknown {
  const catalogue = structuredClone(NEW_YORK) as { services: { ref: string; deposit: unknown }[] };
  catalogue.services.find((s) => s.ref === 'shave')!.deposit = { amount: 1000, currency: 'USD' };
  return catalogue;
}

/** The Sydney salon with Booking Protection: 25% for a cancellation less than 36 hours before. */
function sydneyProtected(): unknown {
  const catalogue = structuredClone(SYDNEY) as {
    locations: { policy: { cancellation_window_hours: number }; booking_protection: unknown }[];
  };
  const [bondi] = catalogue.locations;
  bondi!.policy.cancellation_window_hours = 36;
  bondi!.booking_protection = {
    applies: true,
    late_cancellation_fee_percentage: 25,
    no_show_fee_percentage: 100,
  };
  return catalogue;
}

let t: TestApp;
let keys: Record<'demo' | 'twoCountries' | 'newYork' | 'sydney', string>;
const open: McpHarness[] = [];

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoWithProtectedBooking(), TWO_COUNTRIES, newYorkWithDeposit(), sydneyProtected()],
    limits: { requestsPerMinute: 100_000 },
  });
  keys = {
    demo: t.keys.readWrite,
    twoCountries: await t.keyFor('everest-thames'),
    newYork: await t.keyFor('brooklyn-barbers'),
    sydney: await t.keyFor('bondi-beauty'),
  };
});
afterEach(() => t.clock.set(TEST_START));
afterAll(async () => {
  for (const mcp of open) await mcp.close();
  await t.close();
});

async function agent(business: keyof typeof keys, era: 'legacy' | 'modern' = 'legacy'): Promise<McpHarness> {
  const mcp = await connectInProcess(t, keys[business], era);
  open.push(mcp);
  return mcp;
}

/** find_slots for a cut at Camden on the date said (and part of the day, when given). */
function cutsAtCamden(mcp: McpHarness) {
  return (date: string, time_of_day?: string) =>
    mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date,
      ...(time_of_day && { time_of_day }),
    });
}

async function organisationId(slug: string): Promise<string> {
  return (
    await t.database.db
      .selectFrom('organisations')
      .select('id')
      .where('slug', '=', slug)
      .executeTakeFirstOrThrow()
  ).id;
}

async function outboxOf(organisationSlug: string, reference: string) {
  return (await listOutbox(t.database.db, await organisationId(organisationSlug))).filter(
    (m) => m.reference === reference,
  );
}

/** The messages of a booking's kind as delivered (logged, with no provider): SMS text and e-mail. */
async function delivered(organisationSlug: string, reference: string, kind: string) {
  await deliverAllDue({
    db: t.database.db,
    clock: t.clock,
    senders: { sms: null, email: null },
    links: customerLinks(localCheckout, 'https://book.example'),
  });
  const messages = (await outboxOf(organisationSlug, reference)).filter((m) => m.kind === kind);
  const body = (channel: string) => JSON.parse(messages.find((m) => m.channel === channel)?.body ?? 'null');
  return { sms: body('sms').text as string, email: body('email') as { text: string; html: string } };
}

describe('phone numbers are read in the country of the location the call is about', () => {
  it('at the Kathmandu salon a national number is Nepalese, at the London one British; the message goes there', async () => {
    const mcp = await agent('twoCountries', 'modern');
    const kathmandu = await mcp.call('book', {
      location: 'kathmandu',
      services: 'haircut',
      starts_at: '2026-11-24T10:00:00+05:45',
      client: { first_name: 'Anil', last_name: 'Rai', phone: '9841 234567' },
    });
    expect(kathmandu.spoken).toContain('number ending 4567');
    const sms = (await outboxOf('everest-thames', kathmandu.booking.reference)).filter(
      (m) => m.channel === 'sms',
    );
    expect(sms.map((m) => m.to)).toEqual(['+9779841234567']);

    const london = await mcp.call('book', {
      location: 'london',
      services: 'haircut',
      starts_at: '2026-11-24T10:00:00+00:00',
      client: { first_name: 'Amy', last_name: 'Hart', phone: '07911 223344' },
    });
    const londonSms = (await outboxOf('everest-thames', london.booking.reference)).filter(
      (m) => m.channel === 'sms',
    );
    expect(new Set(londonSms.map((m) => m.to))).toEqual(new Set(['+447911223344']));

    // Without a location, lookup_client finds the caller under whichever reading is on file.
    const found = await mcp.call('lookup_client', { phone: '9841 234567' });
    expect(found.client).toMatchObject({ first_name: 'Anil', phone: '+9779841234567' });
    expect(found.client.phone_spoken).toBe('9 8 4, 1 2 3 4 5 6 7');
  });

  it('a number that reads in both countries, with no location named, is asked about', async () => {
    const mcp = await agent('twoCountries');
    const answer = await mcp.call('register_client', {
      first_name: 'Maya',
      last_name: 'Gurung',
      phone: '9841 765432',
    });
    expect(answer).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(answer.hint).toBe(
      "That number could be a Nepal (+977) or United Kingdom (+44) number; ask the caller which country it is from, then pass it with that country's code.",
    );
    const registered = await mcp.call('register_client', {
      first_name: 'Maya',
      last_name: 'Gurung',
      phone: '+977 9841 765432',
    });
    expect(registered.client.phone).toBe('+9779841765432');
  });

  it("REST reads a waitlist client's national number in the country of the location named", async () => {
    const services = await t.request({
      method: 'GET',
      url: '/v1/locations/kathmandu/services',
      key: keys.twoCountries,
    });
    const cut = services.json().data.find((s: { name: string }) => s.name === 'Haircut');
    const response = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      key: keys.twoCountries,
      payload: {
        location_slug: 'kathmandu',
        service_ids: [cut.id],
        client: { first_name: 'Bina', last_name: 'Tamang', phone: '9851 112233' },
        from_date: '2026-11-25',
        to_date: '2026-11-27',
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const client = await t.request({
      method: 'GET',
      url: `/v1/clients/${response.json().data.client_id}`,
      key: keys.twoCountries,
    });
    expect(client.json().data.phone, client.body).toBe('+9779851112233');
  });
});

describe("a foreign caller's national number", () => {
  it('at a London salon: the agent is told to ask for the country, then the number with its code books', async () => {
    const mcp = await agent('demo');
    const args = {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T15:00:00+00:00',
      client: { first_name: 'Élodie', last_name: 'Moreau', phone: '06 12 34 56 78' },
    };
    const refused = await mcp.call('book', args);
    expect(refused).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(refused.hint).toMatch(
      /^That is not a United Kingdom number as said; ask the caller which country/,
    );
    expect(refused.hint).not.toContain('digit by digit');
    const booked = await mcp.call('book', {
      ...args,
      client: { ...args.client, phone: '+33 6 12 34 56 78' },
    });
    expect(booked.booking.status).toBe('confirmed');
    // London texts only British numbers and Élodie gave no e-mail: no confirmation goes out, and the
    // agent is told so, or the caller waits for a text that never comes.
    expect(booked.spoken).not.toMatch(/sent/);
    expect(booked.hint).toBe(
      'No confirmation could be sent: the salon does not text that number and there is no e-mail on file; tell the caller, and make sure they note the reference.',
    );
    // A number too short for any country is still asked again.
    const short = await mcp.call('lookup_client', { phone: '06 12' });
    expect(short.hint).toMatch(/does not look complete/);
    // A British-looking number that is not one (a digit misheard) is asked for again, not its country,
    // saying what is wrong: all its digits but no number in use (the caller may give an e-mail
    // instead), or a digit too many, not "which country" (a British caller was asked where they are from).
    const misheard = await mcp.call('lookup_client', { phone: '07911 554433' });
    expect(misheard.hint).toBe(
      'That phone number has the right number of digits but is not one in use; ask the caller to say it again, digit by digit, or for an e-mail address instead.',
    );
    for (const phone of ['079115 551234', '07911 1234567', '020 7485 00000']) {
      for (const long of [
        await mcp.call('lookup_client', { phone }),
        await mcp.call('book', { ...args, client: { ...args.client, phone } }),
      ]) {
        expect(long, phone).toMatchObject({ ok: false, code: 'invalid_request' });
        expect(long.hint, phone).toBe(
          'That phone number has too many digits; ask the caller to say it again, digit by digit.',
        );
      }
    }
  });

  it('finds a caller by their e-mail when the phone beside it does not read (caller ID of a switchboard)', async () => {
    const mcp = await agent('demo');
    for (const phone of ['12', '07911 554433', '079115 551234']) {
      const found = await mcp.call('lookup_client', { phone, email: 'jo.bloggs@example.com' });
      expect(found, phone).toMatchObject({ ok: true, client: { first_name: 'Jo', last_name: 'Bloggs' } });
    }
    // Nobody has the e-mail either: the phone is asked for again, as without an e-mail.
    const neither = await mcp.call('lookup_client', { phone: '12', email: 'nobody@example.com' });
    expect(neither).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(neither.hint).toMatch(/^That phone number does not look complete/);
  });

  it('at a New York barber, the same', async () => {
    const mcp = await agent('newYork', 'modern');
    const refused = await mcp.call('register_client', {
      first_name: 'Lena',
      last_name: 'Vogel',
      phone: '0151 23456789',
    });
    expect(refused.hint).toMatch(/^That is not a United States number as said; ask the caller which country/);
  });
});

describe('find_slots with a named stylist on their day off', () => {
  it('at the demo salon: Amara does not work Saturdays, says when and where she does, and offers her times', async () => {
    const mcp = await agent('demo');
    const off = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      date: 'Saturday 5 December',
    });
    expect(off).toMatchObject({ ok: false, code: 'conflict', reason: 'staff_not_working' });
    expect(off.hint).toMatch(
      /^Amara Okafor does not work on Saturday 5 December; Amara Okafor works Monday to .* at Northside Camden; offer Amara Okafor's nearest free times in alternatives, or anyone else\.$/,
    );
    expect(off.alternatives.length).toBeGreaterThan(0);
    expect(off.alternatives.every((s: { staff_name: string }) => s.staff_name === 'Amara Okafor')).toBe(true);
    // A day nobody works is still the salon closed.
    const sunday = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      date: 'Sunday 29 November',
    });
    expect(sunday).toMatchObject({ ok: false, reason: 'closed' });
    expect(sunday.hint).toMatch(/^Northside Camden is closed on Sunday 29 November/);
  });

  it('in a two-country business: Ram works in Kathmandu on Mondays, not London', async () => {
    const mcp = await agent('twoCountries', 'modern');
    const off = await mcp.call('find_slots', {
      location: 'london',
      services: 'haircut',
      staff: 'Ram',
      date: 'monday',
    });
    expect(off).toMatchObject({ ok: false, code: 'conflict', reason: 'staff_not_working' });
    expect(off.hint).toBe(
      "Ram Thapa does not work on Monday 23 November; Ram Thapa works Monday to Wednesday 9 am to 12:30 pm and 1:30 pm to 6 pm at Everest & Thames Kathmandu and Thursday and Friday 9 am to 12:30 pm and 1:30 pm to 6 pm at Everest & Thames London; offer Ram Thapa's nearest free times in alternatives, or anyone else.",
    );
    // REST gives the same: with staff_id, where and when they work (an addition to v1).
    const get = async (url: string) =>
      (await t.request({ method: 'GET', url, key: keys.twoCountries })).json().data;
    const ram = (await get('/v1/locations/london/staff')).find(
      (s: { name: string }) => s.name === 'Ram Thapa',
    );
    const availability = await get(
      `/v1/locations/london/availability?service_ids=${ram.service_ids[0]}&date=2026-11-23&staff_id=${ram.id}`,
    );
    expect(availability.slots).toEqual([]);
    expect(availability.staff_works.map((w: { location_slug: string }) => w.location_slug).sort()).toEqual([
      'kathmandu',
      'london',
    ]);
  });
});

describe('a name said with a slip is the client on file', () => {
  it('"Marcos Bell" on Marcus Bell\'s phone books Marcus, in London; "Alex Bell" is still asked about', async () => {
    const mcp = await agent('twoCountries');
    const booked = await mcp.call('book', {
      location: 'london',
      services: 'haircut',
      starts_at: '2026-11-25T11:00:00+00:00',
      client: { first_name: 'Marcos', last_name: 'Bell', phone: '07911 123999' },
    });
    expect(booked).toMatchObject({ ok: true, booking: { client_name: 'Marcus Bell' } });
    const other = await mcp.call('register_client', {
      first_name: 'Alex',
      last_name: 'Bell',
      phone: '07911 123999',
    });
    expect(other).toMatchObject({ created: false, name_mismatch: true });
  });

  it('"Cris Moor" on Chris Moore\'s phone is Chris, in New York', async () => {
    const mcp = await agent('newYork', 'modern');
    const registered = await mcp.call('register_client', {
      first_name: 'Cris',
      last_name: 'Moor',
      phone: '(718) 555-0199',
    });
    expect(registered).toMatchObject({
      created: false,
      name_mismatch: false,
      client: { first_name: 'Chris' },
    });
  });
});

const DIGIT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
/** A reference as an agent passes on what it heard: "three d two ...", digits as words. */
const saidInWords = (code: string) =>
  [...code].map((c) => (/\d/.test(c) ? DIGIT_WORDS[Number(c)] : c.toLowerCase())).join(' ');

describe('everyday spoken forms', () => {
  it('in London: "the third", "half past four", "half four", and a reference read in words', async () => {
    const mcp = await agent('demo');
    const found = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'the third',
      earliest: 'half past four',
    });
    expect(found.ok).toBe(true);
    expect(found.slots[0].starts_at).toBe('2026-12-03T16:30:00+00:00');
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'the third at half four',
      client: { first_name: 'Priya', last_name: 'Nair', phone: '07911 123777' },
    });
    expect(booked.booking.starts_at).toBe('2026-12-03T16:30:00+00:00');
    const code = booked.booking.reference.slice(4);
    const read = await mcp.call('get_booking', { reference: saidInWords(code) });
    expect(read.booking.reference).toBe(booked.booking.reference);
    const dashed = await mcp.call('get_booking', { reference: `n h c dash ${saidInWords(code)}` });
    expect(dashed.booking.reference).toBe(booked.booking.reference);
  });

  it('in London: a phone number passed on in words, as a reference may be ("oh seven nine double one ...")', async () => {
    const mcp = await agent('demo');
    for (const phone of [
      'oh seven nine one one, one two three, four five six',
      'zero seven nine double one one two three four five six',
      'plus four four seven nine one one one two three four five six',
      '+44 seven nine one one, one two three, four five six',
      '+44 7911 one two three four five six',
    ]) {
      const found = await mcp.call('lookup_client', { phone });
      expect(found, phone).toMatchObject({ ok: true, client: { first_name: 'Jo', phone: '+447911123456' } });
    }
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-12-02T10:00:00+00:00',
      client: {
        first_name: 'Noor',
        last_name: 'Aziz',
        phone: 'oh seven nine one one, one two three, seven eight nine',
      },
    });
    expect(booked, JSON.stringify(booked)).toMatchObject({ ok: true });
    expect(booked.spoken).toContain('number ending 3789');
    // Words that are no digits are not guessed at.
    const misheard = await mcp.call('lookup_client', {
      phone: 'oh seven nine one one, one two three, four five sex',
    });
    expect(misheard).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('in London: minutes past and to the hour, "ten past three", "twenty to four", "five to four"', async () => {
    const mcp = await agent('demo', 'modern');
    const between = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'the third',
      staff: 'Ben',
      earliest: 'ten past three',
      latest: 'twenty to four',
    });
    expect(
      between.slots?.map((s: { starts_at: string }) => s.starts_at),
      JSON.stringify(between),
    ).toEqual(['2026-12-03T15:15:00+00:00', '2026-12-03T15:30:00+00:00']);
    const after = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'the third',
      staff: 'Ben',
      earliest: 'five to four',
      limit: 1,
    });
    expect(after.slots?.[0]?.starts_at, JSON.stringify(after)).toBe('2026-12-03T16:00:00+00:00');
    // Read, then refused for the 15-minute grid with the times near it: not an argument to say again.
    const offGrid = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: 'the third at twenty-five past three',
      client: { first_name: 'Priya', last_name: 'Nair', phone: '07911 123777' },
    });
    expect(offGrid).toMatchObject({ ok: false, reason: 'not_on_grid' });
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: 'Thursday the third at a quarter to four',
      client: { first_name: 'Priya', last_name: 'Nair', phone: '07911 123777' },
    });
    expect(booked.booking.starts_at).toBe('2026-12-03T15:45:00+00:00');
  });

  it('in London: "Christmas Eve", "Boxing Day" and "New Year\'s Eve" are the days they name', async () => {
    const ask = cutsAtCamden(await agent('demo'));
    expect(await ask('Christmas Eve')).toEqual(await ask('24 December'));
    expect(await ask('christmas eve morning')).toEqual(await ask('24 December', 'morning'));
    expect(await ask('Boxing Day')).toEqual(await ask('26 December'));
    expect(await ask('New Year’s Eve')).toEqual(await ask('31 December'));
    expect((await ask('Christmas Eve')).ok).toBe(true);
  });

  it('in London: "next Friday after work" and "first thing Tuesday" name the part of the day', async () => {
    const ask = cutsAtCamden(await agent('demo'));
    expect(await ask('next Friday after work')).toEqual(await ask('next Friday', 'evening'));
    expect(await ask('after work')).toEqual(await ask('today', 'evening'));
    const morning = await ask('Tuesday', 'morning');
    expect(morning.ok).toBe(true);
    expect(await ask('first thing Tuesday')).toEqual(morning);
    expect(await ask('first thing on Tuesday')).toEqual(morning);
    expect(await ask('Tuesday first thing')).toEqual(morning);
  });

  it('in New York: "the twenty-first", "quarter past two", "quarter to three", and a reference in words', async () => {
    const mcp = await agent('newYork', 'modern');
    const found = await mcp.call('find_slots', {
      services: "men's cut",
      date: 'Monday the twenty-first',
      earliest: 'quarter past two',
      latest: 'quarter to three',
    });
    expect(
      found.slots?.map((s: { starts_at: string }) => s.starts_at),
      JSON.stringify(found),
    ).toEqual(['2026-12-21T14:15:00-05:00', '2026-12-21T14:30:00-05:00', '2026-12-21T14:45:00-05:00']);
    const booked = await mcp.call('book', {
      services: "men's cut",
      starts_at: 'the twenty-first at quarter to three',
      client: { first_name: 'Chris', last_name: 'Moore', phone: '(718) 555-0199' },
    });
    expect(booked.booking.starts_at).toBe('2026-12-21T14:45:00-05:00');
    const code = booked.booking.reference.slice(4);
    const read = await mcp.call('get_booking', { reference: saidInWords(code) });
    expect(read.booking.reference).toBe(booked.booking.reference);
  });
});

describe('a cancellation says what became of the money', () => {
  it('in London: a late cancellation keeps the paid deposit; the answer, its booking, the SMS and e-mail say so', async () => {
    const mcp = await agent('demo');
    const held = await mcp.call('book', {
      location: 'camden',
      services: 'full colour',
      starts_at: '2026-11-26T14:00:00+00:00',
      client: { first_name: 'Ria', last_name: 'Shah', phone: '07911 223456', email: 'ria@example.org' },
    });
    const { reference } = held.booking;
    await payDepositByStaff(
      t.database.db,
      await organisationId('northside-hair'),
      reference,
      t.clock.nowMs(),
    );
    t.clock.set('2026-11-25T16:00:00Z');
    const done = await mcp.call('cancel', { reference });
    expect(done).toMatchObject({ ok: true, late: true, deposit_refunded: false });
    expect(done.booking).toMatchObject({ status: 'cancelled', deposit_status: 'retained' });
    const { sms, email } = await delivered('northside-hair', reference, 'cancelled');
    expect(sms).toContain('Your deposit of £20.00 is kept (late cancellation).');
    expect(email.text).toContain('Your deposit of £20.00 is kept (late cancellation).');
    // The link back to the booking's page follows in the same paragraph (issue 45).
    expect(email.html).toMatch(
      /<p>Your deposit of £20\.00 is kept \(late cancellation\)\. Your booking: <a href="[^"]+\/p\/manage\/[^"]+">/,
    );
  });

  it('in London: a late cancellation at the protected salon names the fee charged to the card', async () => {
    const mcp = await agent('demo');
    t.clock.set('2026-11-23T15:00:00Z');
    const done = await mcp.call('cancel', { reference: PROTECTED_REFERENCE });
    expect(done.fee).toMatchObject({ amount: 3100 });
    const { sms, email } = await delivered('northside-hair', PROTECTED_REFERENCE, 'cancelled');
    expect(sms).toContain('A late-cancellation fee of £31.00 will be charged to your saved card.');
    expect(email.text).toContain('A late-cancellation fee of £31.00 will be charged to your saved card.');
  });

  it('in New York: cancelled in good time, the paid deposit is refunded, and says so', async () => {
    const mcp = await agent('newYork', 'modern');
    const held = await mcp.call('book', {
      services: 'shave',
      starts_at: '2026-12-01T10:00:00-05:00',
      client: { first_name: 'Sam', last_name: 'Ortiz', phone: '(718) 555-0142', email: 'sam@example.org' },
    });
    const { reference } = held.booking;
    await payDepositByStaff(
      t.database.db,
      await organisationId('brooklyn-barbers'),
      reference,
      t.clock.nowMs(),
    );
    const done = await mcp.call('cancel', { reference });
    expect(done).toMatchObject({ ok: true, late: false, deposit_refunded: true });
    expect(done.booking).toMatchObject({ status: 'cancelled', deposit_status: 'refunded' });
    const { sms } = await delivered('brooklyn-barbers', reference, 'cancelled');
    expect(sms).toContain('Your deposit of $10.00 will be refunded.');
  });
});

describe('alternatives keep to the part of the day asked for', () => {
  const localHours = (slots: { starts_at: string }[]) => slots.map((s) => Number(s.starts_at.slice(11, 13)));

  it('in London: Sunday afternoon (closed) offers afternoons, not Monday morning', async () => {
    const mcp = await agent('demo');
    const closed = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'sunday afternoon',
    });
    expect(closed).toMatchObject({ ok: false, reason: 'closed' });
    expect(closed.alternatives.length).toBeGreaterThan(0);
    for (const hour of localHours(closed.alternatives)) expect(hour).toBeGreaterThanOrEqual(12);
    expect(closed.alternatives[0].starts_at.slice(0, 10)).toBe('2026-11-30');
  });

  it('in Kathmandu: Saturday after 4 pm (nobody works) offers the next days after 4 pm', async () => {
    const mcp = await agent('twoCountries', 'modern');
    const closed = await mcp.call('find_slots', {
      location: 'kathmandu',
      services: 'haircut',
      date: 'saturday',
      earliest: '4pm',
    });
    expect(closed).toMatchObject({ ok: false, reason: 'closed' });
    expect(closed.alternatives.length).toBeGreaterThan(0);
    for (const slot of closed.alternatives) {
      expect(slot.starts_at).toMatch(/\+05:45$/);
      expect(Number(slot.starts_at.slice(11, 13))).toBeGreaterThanOrEqual(16);
    }
  });
});

describe('a service offered only at the other branch is named with that branch', () => {
  it('in London: "head massage" is offered in Kathmandu, not "corrected" to a haircut here', async () => {
    const mcp = await agent('twoCountries');
    for (const said of ['head massage', 'massage', 'hed masage']) {
      const answer = await mcp.call('find_slots', { location: 'london', services: said, date: 'tomorrow' });
      expect(answer, said).toMatchObject({
        ok: false,
        code: 'not_found',
        choices: ['Everest & Thames Kathmandu'],
      });
      expect(answer.hint).toBe(
        'Head massage is offered at Everest & Thames Kathmandu, not Everest & Thames London; offer to book it there, or ask what else the caller would like here.',
      );
    }
    // What is offered here is still taken here.
    expect(
      (await mcp.call('find_slots', { location: 'london', services: 'haircut', date: 'tomorrow' })).ok,
    ).toBe(true);
  });

  it('in Kathmandu: "beard trim" is offered in London', async () => {
    const mcp = await agent('twoCountries', 'modern');
    const answer = await mcp.call('book', {
      location: 'kathmandu',
      services: 'beard trim',
      starts_at: 'tomorrow at 10am',
      client: { first_name: 'Anil', last_name: 'Rai', phone: '9841 234567' },
    });
    expect(answer).toMatchObject({ ok: false, code: 'not_found', choices: ['Everest & Thames London'] });
    expect(answer.hint).toMatch(
      /^Beard trim is offered at Everest & Thames London, not Everest & Thames Kathmandu;/,
    );
  });

  it('at the demo salon: a beard trim at Islington is offered at Camden', async () => {
    const mcp = await agent('demo');
    const answer = await mcp.call('find_slots', {
      location: 'islington',
      services: 'beard trim',
      date: 'tomorrow',
    });
    expect(answer).toMatchObject({ ok: false, code: 'not_found', choices: ['Northside Camden'] });
  });
});

describe('Booking Protection says what late means and what it costs', () => {
  it('in London (Islington): find_slots, list_services and get_location_info say what late means; book names the fees', async () => {
    const mcp = await agent('demo');
    const found = await mcp.call('find_slots', { location: 'islington', services: 'cut', date: 'wednesday' });
    expect(found.spoken).toContain(
      'cancelling less than 2 days before costs 50% and a no-show 100% of the price',
    );
    const listed = await mcp.call('list_services', { location: 'islington' });
    expect(listed.terms_spoken).toContain(
      'Booking Protection): cancelling less than 2 days before costs 50% and a no-show 100% of the price.',
    );
    const info = await mcp.call('get_location_info', { location: 'islington' });
    expect(info.policy_spoken).toMatch(
      /^Cancelling or changing less than 2 days before the appointment is late: .*a late cancellation costs 50%/,
    );
    const booked = await mcp.call('book', {
      location: 'islington',
      services: 'cut',
      starts_at: found.slots[0].starts_at,
      client: { first_name: 'Tom', last_name: 'Reed', phone: '07911 123888' },
    });
    expect(booked.status).toBe('pending_confirmation');
    expect(booked.spoken).toContain(
      'A late cancellation (less than 2 days before) costs 31 pounds, and a no-show 62 pounds.',
    );
  });

  it('in Sydney: the same in dollars', async () => {
    const mcp = await agent('sydney', 'modern');
    const found = await mcp.call('find_slots', { services: 'cut and style', date: 'wednesday' });
    expect(found.spoken).toContain('cancelling less than 36 hours before costs 25%');
    const booked = await mcp.call('book', {
      services: 'cut and style',
      starts_at: found.slots[0].starts_at,
      client: { first_name: 'Zoe', last_name: 'King', phone: '0412 345 999' },
    });
    expect(booked.spoken).toMatch(
      /A late cancellation \(less than 36 hours before\) costs 22 dollars and 38 cents, and a no-show 89 dollars and 50 cents\./,
    );
  });
});

describe('a time the clocks show twice is asked about, not guessed', () => {
  it('in London: "1:30 am" on the night the clocks go back names both instants; either one is then taken', async () => {
    const mcp = await agent('demo');
    t.clock.set('2027-10-20T09:00:00Z');
    const args = {
      location: 'camden',
      services: 'cut',
      client: { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' },
    };
    const asked = errorText(await mcp.raw('book', { ...args, starts_at: 'Sunday 31 October at 1:30 am' }));
    expect(asked).toContain(
      'ask the caller which: 1:30 am BST (2027-10-31T01:30:00+01:00) or 1:30 am GMT (2027-10-31T01:30:00+00:00), and pass that one',
    );
    // Either instant as given is read (the salon is closed then: a refusal, no longer a question).
    const taken = await mcp.call('book', { ...args, starts_at: '2027-10-31T01:30:00+00:00' });
    expect(taken).toMatchObject({ ok: false, reason: 'closed' });
    const named = await mcp.call('book', { ...args, starts_at: 'Sunday 31 October at 1:30 am GMT' });
    expect(named).toMatchObject({ ok: false, reason: 'closed' });
  });

  it('in London: find_slots reads an earliest or latest of either 1:30 am by its name (BST, GMT), never sends it back', async () => {
    const mcp = await agent('demo');
    t.clock.set('2027-10-20T09:00:00Z');
    for (const earliest of ['1:30 am BST', '1:30 am GMT']) {
      const found = await mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: '2027-10-31',
        days: 2,
        earliest,
      });
      expect(found.isError, JSON.stringify(found.content)).toBeFalsy();
    }
    // The time of the other half of the year is another instant: said as London's.
    const summer = errorText(
      await mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: '2027-11-01',
        earliest: '3 pm BST',
      }),
    );
    expect(summer).toContain('London is on GMT, not BST, then');
  });

  it('in New York: the same, with EDT and EST', async () => {
    const mcp = await agent('newYork', 'modern');
    t.clock.set('2027-11-01T14:00:00Z');
    const asked = errorText(
      await mcp.raw('book', {
        services: "men's cut",
        starts_at: 'Sunday November 7 at 1:30 am',
        client: { first_name: 'Chris', last_name: 'Moore', phone: '(718) 555-0199' },
      }),
    );
    expect(asked).toMatch(
      /ask the caller which: 1:30 AM EDT \(2027-11-07T01:30:00-04:00\) or 1:30 AM EST \(2027-11-07T01:30:00-05:00\), and pass that one/,
    );
  });
});

describe('what a move says, a taken time, a service the team books', () => {
  it('in Kathmandu: reschedule says the new time was sent; a time booked earlier is "already booked"', async () => {
    const mcp = await agent('twoCountries');
    const client = { first_name: 'Gita', last_name: 'Karki', phone: '9851 445566' };
    const booked = await mcp.call('book', {
      location: 'kathmandu',
      services: 'head massage',
      starts_at: '2026-11-26T11:00:00+05:45',
      client,
    });
    const moved = await mcp.call('reschedule', {
      reference: booked.booking.reference,
      starts_at: 'Friday at 2pm',
    });
    expect(moved.spoken).toMatch(/^Moved: .* New time sent to the number ending 5566\.$/);
    t.clock.set('2026-11-24T09:00:00Z');
    const taken = await mcp.call('book', {
      location: 'kathmandu',
      services: 'head massage',
      staff: moved.booking.staff_name,
      starts_at: moved.booking.starts_at,
      client: { first_name: 'Hari', last_name: 'Shrestha', phone: '9851 778899' },
    });
    expect(taken).toMatchObject({ ok: false, reason: 'slot_unavailable' });
    expect(taken.hint).toMatch(/^That time is already booked;/);
  });

  it('in London: cancel and reschedule say what was sent; a service the team books is not "in person" and a phone', async () => {
    const mcp = await agent('demo', 'modern');
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-27T10:00:00+00:00',
      client: { first_name: 'Ola', last_name: 'Berg', phone: '07911 123459', email: 'ola@example.org' },
    });
    expect(booked.ok, JSON.stringify(booked)).toBe(true);
    const moved = await mcp.call('reschedule', {
      reference: booked.booking.reference,
      starts_at: 'Friday at 11am',
    });
    expect(moved.spoken).toMatch(/ New time sent to the number ending 3459 and by e-mail\.$/);
    const cancelled = await mcp.call('cancel', { reference: booked.booking.reference });
    expect(cancelled.spoken).toMatch(/ Cancellation sent to the number ending 3459 and by e-mail\.$/);
    const consult = await mcp.call('find_slots', {
      location: 'camden',
      services: 'patch test',
      date: 'tomorrow',
    });
    expect(consult.hint).toBe(
      "Colour consultation is not booked on this line: the salon's team books it themselves; offer to take a message for them, or give the salon's number, 0 2 0, 7 4 8 5, 0 0 0 0.",
    );
  });
});

describe('a move with "anyone" (the hint offers "anyone else")', () => {
  it('goes to whoever is free then, the stylist it has first, never asks the agent to pick one', async () => {
    const mcp = await agent('demo', 'modern');
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      starts_at: '2026-11-27T10:00:00+00:00',
      client: { first_name: 'Rae', last_name: 'Dunn', phone: '07911 123461' },
    });
    expect(booked.ok, JSON.stringify(booked)).toBe(true);
    const { reference } = booked.booking;
    // Thursday at 10: Amara starts at 11, Ben is in. Asked for Amara, the hint offers anyone else.
    const refused = await mcp.call('reschedule', { reference, starts_at: 'Thursday 3 December at 10am' });
    expect(refused).toMatchObject({ ok: false, reason: 'staff_not_working' });
    expect(refused.hint).toMatch(/, or anyone else\.$/);
    // The caller does not mind who: the agent says so, and hears who it would be.
    for (const staff of ['anyone', 'no preference', "I don't mind"]) {
      const preview = await mcp.call('reschedule', {
        reference,
        starts_at: 'Thursday 3 December at 10am',
        staff,
        dry_run: true,
      });
      expect(preview, JSON.stringify(preview)).toMatchObject({ ok: true, dry_run: true });
      expect(preview.booking).toMatchObject({
        staff_name: 'Ben Carter',
        starts_at: '2026-12-03T10:00:00+00:00',
      });
      expect(preview.spoken).toContain('with Ben Carter');
    }
    // Where the stylist it has is free, it stays with them.
    const stays = await mcp.call('reschedule', {
      reference,
      starts_at: 'Thursday 3 December at 3pm',
      staff: 'anyone',
    });
    expect(stays, JSON.stringify(stays)).toMatchObject({ ok: true, dry_run: false });
    expect(stays.booking).toMatchObject({
      staff_name: 'Amara Okafor',
      starts_at: '2026-12-03T15:00:00+00:00',
    });
    const moved = await mcp.call('reschedule', {
      reference,
      starts_at: 'Thursday 3 December at 10am',
      staff: 'anyone',
    });
    expect(moved, JSON.stringify(moved)).toMatchObject({ ok: true, dry_run: false });
    expect(moved.booking).toMatchObject({ staff_name: 'Ben Carter', starts_at: '2026-12-03T10:00:00+00:00' });
    // Nobody who cuts is in then: said of everyone, not "Ben Carter does not work then ... or anyone else".
    const late = await mcp.call('reschedule', {
      reference,
      starts_at: 'Saturday 5 December at 5pm',
      staff: 'anyone',
    });
    expect(late).toMatchObject({ ok: false, reason: 'slot_unavailable' });
    expect(late.hint).toBe(
      'Nobody who does that is free at that time on Saturday 5 December; offer the nearest free times in alternatives.',
    );
    expect(late.alternatives.length).toBeGreaterThan(0);
  });
});

describe('messages for a booking next year say the year', () => {
  it('in London and Kathmandu: the confirmation SMS names 2027', async () => {
    const mcp = await agent('twoCountries');
    t.clock.set('2026-12-20T09:00:00Z');
    for (const [location, startsAt, expected] of [
      [
        'london',
        '2027-01-05T10:00:00+00:00',
        'on Tuesday, 5 January 2027 at 10:00 GMT, at Everest & Thames London',
      ],
      [
        'kathmandu',
        '2027-01-05T10:00:00+05:45',
        // Its zone by its city: en-GB writes Kathmandu's as "GMT+5:45".
        'on Tuesday, 5 January 2027 at 10:00 (Kathmandu time), at Everest & Thames Kathmandu',
      ],
    ] as const) {
      const booked = await mcp.call('book', {
        location,
        services: 'haircut',
        starts_at: startsAt,
        client: { first_name: 'Marcus', last_name: 'Bell', phone: '+44 7911 123999' },
      });
      const { sms } = await delivered('everest-thames', booked.booking.reference, 'confirmed');
      expect(sms).toContain(expected);
    }
  });
});

/**
 * What `spoken` may not hold: words for the agent rather than the caller, and data nobody reads aloud
 * (ISO times, ids, argument names).
 */
function expectOnlyWordsToSay(spoken: unknown): void {
  expect(typeof spoken).toBe('string');
  const said = spoken as string;
  expect(said).not.toMatch(/the caller|ask the|dry_run|alternatives|\bhint\b/i);
  expect(said).not.toMatch(/\d{4}-\d\d-\d\d|T\d\d:\d\d/);
  expect(said).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  expect(said).not.toMatch(/\b[a-z]+_[a-z_]+\b/);
}

describe('spoken carries everything to say, and nothing else', () => {
  it('in London (Islington): find_slots says the times, the stylist, the length, the price and the terms in one field', async () => {
    const mcp = await agent('demo');
    const found = await mcp.call('find_slots', { location: 'islington', services: 'cut', date: 'wednesday' });
    expectOnlyWordsToSay(found.spoken);
    const times = found.slots.map((s: { spoken: string }) => s.spoken.split(' at ').at(-1));
    expect(found.spoken).toBe(
      `${found.slots[0].staff_name} is free Wednesday 25 November at ${times.slice(0, -1).join(', ')} or ${times.at(-1)}. ` +
        'There are other times too. Cut & blow-dry takes 1 hour 15 minutes and costs 62 pounds. ' +
        "You'd finish booking online with a card on file; cancelling less than 2 days before costs 50% and a no-show 100% of the price.",
    );
  });

  it('in New York: times of several barbers over two days are each said with their barber', async () => {
    const mcp = await agent('newYork', 'modern');
    const found = await mcp.call('find_slots', {
      services: "men's cut",
      date: 'tomorrow',
      days: 2,
      limit: 20,
    });
    expectOnlyWordsToSay(found.spoken);
    for (const slot of found.slots) {
      expect(found.spoken).toContain(slot.spoken.split(', ').at(-1)!.split(' at ')[0]);
      expect(found.spoken).toContain(slot.staff_name);
    }
    expect(found.spoken).toMatch(
      /^Free: tomorrow, Tuesday, November 24 at .+ and costs 42 dollars and 50 cents\.$/,
    );
  });

  it('in Kathmandu: lookup_client says the upcoming booking with its reference, and the usual', async () => {
    const mcp = await agent('twoCountries', 'modern');
    const booked = await mcp.call('book', {
      location: 'kathmandu',
      services: 'head massage',
      starts_at: '2026-11-26T11:00:00+05:45',
      client: { first_name: 'Pema', last_name: 'Lama', phone: '9841 555111' },
    });
    const found = await mcp.call('lookup_client', { phone: '9841 555111' });
    expectOnlyWordsToSay(found.spoken);
    expect(found.spoken).toBe(
      `You have an upcoming booking: ${booked.booking.spoken} (reference ${booked.booking.reference_spoken}).`,
    );
    expect(found.usual.spoken).toMatch(/^Your usual: Head massage with /);
    // Once the visit is past, the usual is said too: it is what "the same again" books.
    t.clock.set('2026-11-27T09:00:00Z');
    const later = await mcp.call('lookup_client', { phone: '9841 555111' });
    expectOnlyWordsToSay(later.spoken);
    expect(later.spoken).toMatch(
      /^You have no upcoming bookings\. Your usual: Head massage with .+ at Everest & Thames Kathmandu \(last Thursday 26 November at 11 am\)\.$/,
    );
  });

  it('in Sydney: a dry-run cancel says the fee to the caller; asking whether to go ahead is the hint', async () => {
    const mcp = await agent('sydney', 'modern');
    const found = await mcp.call('find_slots', { services: 'cut and style', date: 'tuesday' });
    const held = await mcp.call('book', {
      services: 'cut and style',
      starts_at: found.slots[0].starts_at,
      client: { first_name: 'Ivy', last_name: 'Nash', phone: '0412 345 777' },
    });
    expectOnlyWordsToSay(held.spoken);
    expect(held.spoken).toContain('please save a card on the booking page to confirm it');
    expect(held.hint).toBeUndefined();
    const dry = await mcp.call('cancel', { reference: held.booking.reference, dry_run: true });
    expectOnlyWordsToSay(dry.spoken);
    expect(dry.spoken).toMatch(/^If cancelled now: /);
    expect(dry.hint).toBe('Ask the caller whether to go ahead; if so, call again without dry_run.');
    const move = await mcp.call('reschedule', {
      reference: held.booking.reference,
      starts_at: found.slots[1].starts_at,
      dry_run: true,
    });
    expectOnlyWordsToSay(move.spoken);
    expect(move.hint).toBe('Ask the caller whether to go ahead; if so, call again without dry_run.');
  });

  it('in London and New York: a time not free says the nearest free times in words', async () => {
    for (const [business, args] of [
      ['demo', { location: 'camden', services: 'cut', starts_at: '2026-11-25T08:00:00+00:00' }],
      ['newYork', { services: "men's cut", starts_at: '2026-11-25T07:00:00-05:00' }],
    ] as const) {
      const mcp = await agent(business);
      const refused = await mcp.call('book', {
        ...args,
        client: { first_name: 'Lee', last_name: 'Park', phone: '+44 7911 120555' },
      });
      expect(refused).toMatchObject({ ok: false });
      expect(refused.alternatives.length).toBeGreaterThan(0);
      expectOnlyWordsToSay(refused.spoken);
      expect(refused.spoken).toMatch(/^The nearest free times? (?:is|are) /);
      for (const slot of refused.alternatives) {
        expect(refused.spoken).toContain(slot.spoken.split(' at ').at(-1));
        expect(refused.spoken).toContain(slot.staff_name);
      }
    }
  });

  it('names one stylist once when their nearest free times run over several days', async () => {
    const mcp = await agent('demo');
    // Beard trims at Camden are Ben's alone, Tuesdays, Thursdays and Saturdays: from 4 pm next week,
    // a few a day on several days.
    const refused = await mcp.call('find_slots', {
      location: 'camden',
      services: 'beard',
      date: 'next monday',
      earliest: '4pm',
    });
    expect(refused).toMatchObject({ ok: false });
    const days = new Set(
      (refused.alternatives as { spoken: string }[]).map((slot) => slot.spoken.split(' at ')[0]),
    );
    expect(days.size).toBeGreaterThan(1);
    // Why first: nobody who does a beard trim works at Camden that Monday, though the salon is open.
    expect(refused.spoken).toMatch(
      /^Nobody who does that is working at Northside Camden on Monday 30 November\. The nearest free times are .+; or .+, all with Ben Carter\.$/,
    );
    expect(refused.spoken.split('Ben Carter')).toHaveLength(2);
  });
});

describe('a late fee waived before the cancellation message went', () => {
  it('is not in the message: the SMS and e-mail say no fee', async () => {
    // An app of its own: the protected booking is cancelled in the tests above.
    const own = await startTestApp({ catalogues: [demoWithProtectedBooking()] });
    try {
      const mcp = await connectInProcess(own, own.keys.readWrite, 'legacy');
      own.clock.set('2026-11-23T15:00:00Z');
      const done = await mcp.call('cancel', { reference: PROTECTED_REFERENCE });
      expect(done.fee).toMatchObject({ amount: 3100 });
      await mcp.close();
      // Waived at the desk while the message still waited (its providers down, say).
      const { id } = await own.database.db
        .selectFrom('organisations')
        .select('id')
        .where('slug', '=', 'northside-hair')
        .executeTakeFirstOrThrow();
      await waiveFee(own.database.db, id, PROTECTED_REFERENCE, own.clock.nowMs());
      await deliverAllDue({
        db: own.database.db,
        clock: own.clock,
        senders: { sms: null, email: null },
        links: customerLinks(localCheckout, 'https://book.example'),
      });
      const sent = (await listOutbox(own.database.db, id)).filter(
        (m) => m.reference === PROTECTED_REFERENCE && m.kind === 'cancelled',
      );
      const texts = sent.map((m) => JSON.parse(m.body ?? 'null').text as string);
      expect(texts).toHaveLength(2);
      for (const text of texts) {
        expect(text).toContain('Cancelled');
        expect(text).not.toContain('fee');
      }
    } finally {
      await own.close();
    }
  });
});

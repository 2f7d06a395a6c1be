import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { TOOLS } from '../../src/mcp/build-server.ts';
import { demoMcp, errorText, type Json } from '../helpers/mcp-harness.ts';

/**
 * How the tools read arguments (design.md 9.3): `null` for an optional argument is the argument left
 * out (voice platforms and strict function calling send it), on every tool and inside `client`; and an
 * argument error names every bad argument with its limit or form, not only the first. Through the
 * SDK's client on the demo catalogue; the clock stands at Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();
const CALLER = { first_name: 'Nia', last_name: 'Obi', phone: '07911 123458' };

/** The optional arguments of a tool, each sent as null. */
function nullsFor(tool: string, except: readonly string[] = []): Record<string, null> {
  const spec = TOOLS.find((t) => t.name === tool)!;
  const optional = Object.entries(spec.input)
    .filter(([name, field]) => !except.includes(name) && (field as z.ZodType).safeParse(undefined).success)
    .map(([name]) => [name, null]);
  return Object.fromEntries(optional);
}

describe('null for an optional argument means absent', () => {
  it.each([
    ['get_location_info', {}],
    ['get_location_info', { location: 'camden' }],
    ['list_services', {}],
    ['list_services', { location: 'camden' }],
    ['find_slots', { location: 'camden', services: 'cut', date: 'tomorrow' }],
    ['lookup_client', { phone: '+447911123456' }],
  ])('%s answers %j with nulls as it answers it without', async (tool, args: Json) => {
    const withNulls = await demo.mcp.call(tool, { ...nullsFor(tool, Object.keys(args)), ...args });
    expect(withNulls).toEqual(await demo.mcp.call(tool, args));
  });

  it('registers, books, moves, cancels and takes a message with every optional argument null', async () => {
    const registered = await demo.mcp.call('register_client', {
      ...nullsFor('register_client'),
      ...CALLER,
    });
    expect(registered, JSON.stringify(registered)).toMatchObject({
      ok: true,
      created: true,
      client: { email: null },
    });
    const { slots } = await demo.mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      earliest: '3pm',
    });
    const booked = await demo.mcp.call('book', {
      ...nullsFor('book', ['location', 'client']),
      location: 'camden',
      services: 'cut',
      starts_at: slots[0].starts_at,
      client: { ...CALLER, email: null },
    });
    expect(booked).toMatchObject({ ok: true, booking: { client_id: registered.client.id, notes: null } });
    const { reference } = booked.booking;
    const moved = await demo.mcp.call('reschedule', {
      ...nullsFor('reschedule'),
      reference,
      starts_at: slots[1].starts_at,
    });
    // dry_run null is no dry run: the booking moved.
    expect(moved).toMatchObject({ ok: true, booking: { starts_at: slots[1].starts_at } });
    expect(moved.dry_run).not.toBe(true);
    const cancelled = await demo.mcp.call('cancel', { ...nullsFor('cancel'), reference });
    expect(cancelled).toMatchObject({ ok: true, booking: { status: 'cancelled' } });
    const message = await demo.mcp.call('take_message', {
      ...nullsFor('take_message'),
      caller_name: 'Nia Obi',
      message: 'Please call back about colours.',
    });
    expect(message.ok).toBe(true);
  });

  it('still refuses null for an argument that is required', async () => {
    const text = errorText(
      await demo.mcp.raw('find_slots', { location: 'camden', services: 'cut', date: null }),
    );
    expect(text).toMatch(/find_slots: date is missing; expected: YYYY-MM-DD/);
  });
});

describe('an argument error names every bad argument', () => {
  it('says each limit and form of find_slots in one answer', async () => {
    const text = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: [],
        days: 40,
        time_of_day: 'night',
        limit: 50,
      }),
    );
    expect(text).toMatch(/^Something in the request was not valid.* find_slots has 5 bad arguments: /);
    expect(text).toContain('services has at least 1 item');
    expect(text).toMatch(/date is missing; expected: YYYY-MM-DD/);
    expect(text).toContain('days is at most 14');
    expect(text).toContain('time_of_day is one of morning, afternoon, evening');
    expect(text).toContain('limit is at most 20');
  });

  it('says the most services a call takes when more are sent, on every tool that takes them', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `service ${i + 1}`);
    const slots = errorText(
      await demo.mcp.raw('find_slots', { location: 'camden', services: eleven, date: 'tomorrow', limit: 50 }),
    );
    expect(slots).toContain('find_slots has 2 bad arguments: ');
    expect(slots).toContain('services has at most 10 items');
    expect(slots).toContain('limit is at most 20');
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: eleven,
        starts_at: '2026-11-24T15:00:00+00:00',
        client: CALLER,
      }),
    );
    expect(book).toMatch(/ book: services has at most 10 items\.$/);
    const waiting = errorText(
      await demo.mcp.raw('join_waitlist', {
        location: 'camden',
        services: eleven,
        client: CALLER,
        from_date: 'tomorrow',
        to_date: 'friday',
      }),
    );
    expect(waiting).toMatch(/ join_waitlist: services has at most 10 items\.$/);
    // A list holding something other than a name is said with the form services take.
    for (const services of [[1], [null], ['cut', 7]]) {
      const odd = errorText(
        await demo.mcp.raw('find_slots', { location: 'camden', services, date: 'tomorrow' }),
      );
      expect(odd).toMatch(
        / find_slots: services is not valid; expected: Names as said, or ids; several back to back\.$/,
      );
    }
  });

  it('says a list holding an item it does not take as the list, with its choices', async () => {
    // times: [null] was "times needs 0", and ["noon"] "times.0 is one of ...": the agent passes a list.
    for (const times of [[null], ['noon'], [3], ['morning', null, 'night']]) {
      const text = errorText(
        await demo.mcp.raw('join_waitlist', {
          location: 'camden',
          services: 'cut',
          client: CALLER,
          from_date: 'friday',
          to_date: 'friday',
          times,
        }),
      );
      expect(text, JSON.stringify(times)).toMatch(
        / join_waitlist: times is a list of any of morning, afternoon, evening\.$/,
      );
    }
  });

  it('names what a nested client lacks and what is too long', async () => {
    const text = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: { first_name: 'Sam' },
        notes: 'n'.repeat(1001),
      }),
    );
    expect(text).toContain('book has 3 bad arguments: ');
    expect(text).toContain('client needs last_name');
    expect(text).toContain('notes is at most 1000 characters');
    expect(text).toContain('client.phone: give a phone number or an e-mail address for a new client.');
  });

  it('names a date and a time find_slots cannot read in one answer', async () => {
    const text = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'soonish',
        earliest: 'after lunch',
        latest: 'zzz',
      }),
    );
    expect(text).toMatch(/ date: say a date as .*"next week"\. earliest: /);
    expect(text).toContain('earliest: give a time of day such as "2:30pm" or "14:30".');
    expect(text).toContain('latest: give a time of day such as "2:30pm" or "14:30".');
  });

  it('names a date it cannot read beside a limit the schema refuses', async () => {
    const text = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'someday',
        earliest: 'after lunch',
        limit: 50,
      }),
    );
    expect(text).toContain('find_slots has 3 bad arguments: ');
    expect(text).toContain('limit is at most 20');
    expect(text).toMatch(/date: say a date as .*"next week"/);
    expect(text).toContain('earliest: give a time of day such as "2:30pm" or "14:30"');
  });

  it('names a start, a phone and an e-mail it cannot read beside what the schema refuses', async () => {
    const text = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'whenever suits',
        client: { first_name: 'Sam', phone: '12', email: 'sam at nowhere' },
      }),
    );
    expect(text).toContain('book has 4 bad arguments: ');
    expect(text).toContain('client needs last_name');
    expect(text).toContain('starts_at: give starts_at as find_slots returned it');
    expect(text).toContain('client.phone: That phone number does not look complete');
    expect(text).toContain('client.email: That e-mail address does not look right');
    const waiting = errorText(
      await demo.mcp.raw('join_waitlist', {
        location: 'camden',
        services: 'cut',
        client: CALLER,
        from_date: 'someday',
        to_date: 'the 45th',
        times: 'morning',
      }),
    );
    expect(waiting).toContain('join_waitlist has 3 bad arguments: ');
    expect(waiting).toMatch(/from_date: say a date as /);
    expect(waiting).toContain('to_date: the 45th is not a real date');
    const lookup = errorText(await demo.mcp.raw('lookup_client', { phone: '12', email: 7 }));
    expect(lookup).toContain('lookup_client has 2 bad arguments: ');
    expect(lookup).toContain('phone: That phone number does not look complete');
  });

  it('names what the tool would refuse only once the rest were mended: a new client without contact, crossed times, crossed dates', async () => {
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'whenever',
        client: { first_name: 'Ada', last_name: 'Bee' },
      }),
    );
    expect(book).toContain('book has 2 bad arguments: ');
    expect(book).toContain('starts_at: give starts_at as find_slots returned it');
    expect(book).toContain('client.phone: give a phone number or an e-mail address for a new client.');
    const slots = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'next tuesday',
        earliest: '3pm',
        latest: '9am',
        limit: 99,
      }),
    );
    expect(slots).toContain('find_slots has 2 bad arguments: ');
    expect(slots).toContain('limit is at most 20');
    expect(slots).toContain('earliest and latest: latest (9am) is before earliest (3pm)');
    const waiting = errorText(
      await demo.mcp.raw('join_waitlist', {
        location: 'camden',
        services: 'cut',
        client: CALLER,
        from_date: '2026-11-27',
        to_date: '2026-11-24',
        times: ['night'],
      }),
    );
    expect(waiting).toContain('join_waitlist has 2 bad arguments: ');
    expect(waiting).toContain('from_date and to_date: from_date (2026-11-27) is after to_date (2026-11-24)');
    expect(waiting).toMatch(/times/);
  });

  it('names a call-back phone it cannot read beside what take_message’s schema refuses', async () => {
    const text = errorText(
      await demo.mcp.raw('take_message', { caller_name: '', phone: '12', message: 'Call me back' }),
    );
    expect(text).toContain('take_message has 2 bad arguments: ');
    expect(text).toContain('caller_name is at least 1 character');
    expect(text).toContain('phone: That phone number does not look complete');
  });

  it('names a start and a phone it cannot read in one answer when the schema takes both', async () => {
    const text = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'whenever suits',
        client: { ...CALLER, phone: '12' },
      }),
    );
    expect(text).toContain('starts_at: give starts_at as find_slots returned it');
    expect(text).toContain('client.phone: That phone number does not look complete');
  });

  it('says the form a number, a yes-or-no or a list takes when one is sent as something else', async () => {
    const slots = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'tomorrow',
        limit: 1.5,
        days: '2',
      }),
    );
    expect(slots).toContain('find_slots has 2 bad arguments: ');
    expect(slots).toContain('days is a whole number from 1 to 14.');
    expect(slots).toContain('limit is a whole number from 1 to 20.');
    const cancel = errorText(await demo.mcp.raw('cancel', { reference: 'NHC-7KQ2MX', dry_run: 'yes' }));
    expect(cancel).toMatch(/ cancel: dry_run is true or false\.$/);
    const series = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: CALLER,
        repeat: { every_weeks: 2.5, count: 3 },
      }),
    );
    expect(series).toMatch(/ book: repeat\.every_weeks is a whole number from 1 to 12\.$/);
    const waiting = errorText(
      await demo.mcp.raw('join_waitlist', {
        location: 'camden',
        services: 'cut',
        client: CALLER,
        from_date: 'tomorrow',
        to_date: 'friday',
        times: 'morning',
      }),
    );
    expect(waiting).toMatch(/ join_waitlist: times is a list of any of morning, afternoon, evening\.$/);
    const consent = errorText(await demo.mcp.raw('register_client', { ...CALLER, marketing_consent: 'no' }));
    expect(consent).toMatch(/ register_client: marketing_consent is true or false\.$/);
  });

  it('gives the range of a whole number given as a fraction, nested ones too', async () => {
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client_id: '0190a0b0-0000-7000-8000-000000000000',
        repeat: { every_weeks: 1.5, count: 30 },
      }),
    );
    expect(book).toContain('book has 2 bad arguments: ');
    expect(book).toContain('repeat.every_weeks is a whole number from 1 to 12');
    expect(book).toContain('repeat.count is at most 26');
  });

  it('gives the limit the tool sets for a whole number too large for any, not the largest safe integer', async () => {
    const slots = errorText(
      await demo.mcp.raw('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'tomorrow',
        days: -1e300,
        limit: 1e16,
      }),
    );
    expect(slots).toContain('find_slots has 2 bad arguments: ');
    expect(slots).toContain('days is at least 1.');
    expect(slots).toContain('limit is at most 20.');
    expect(slots).not.toContain('9007199254740991');
    const series = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: CALLER,
        repeat: { every_weeks: 2, count: 1e300 },
      }),
    );
    expect(series).toMatch(/ book: repeat\.count is at most 26\.$/);
  });

  it('gives the range of a nested whole number left out or sent as null', async () => {
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client_id: '0190a0b0-0000-7000-8000-000000000000',
        repeat: { every_weeks: null },
      }),
    );
    expect(book).toContain('book has 2 bad arguments: ');
    expect(book).toContain('repeat needs every_weeks, a whole number from 1 to 12.');
    expect(book).toContain('repeat needs count, a whole number from 2 to 26.');
  });

  it('says what the booking service refused in words, never zod’s own English', async () => {
    // times passes join_waitlist's own schema (any number of times of day) and is refused by the
    // waitlist's (at most three): the hint carries that refusal's message.
    const text = errorText(
      await demo.mcp.raw('join_waitlist', {
        location: 'camden',
        services: 'cut',
        client: { first_name: 'Nia', last_name: 'Obi', phone: '07911 123458' },
        from_date: '2026-11-25',
        to_date: '2026-11-27',
        times: ['morning', 'morning', 'afternoon', 'evening'],
      }),
    );
    expect(text).not.toMatch(/Too big|expected array|<=/);
    expect(text).toMatch(/ times must have at most 3 items\.$/);
  });

  it('says a drama number (07700 900123) is no one’s phone, international or national, not that it is incomplete', async () => {
    const drama =
      /^That is one of the numbers kept for TV and film dramas, so it is nobody's phone; ask the caller for the number they really use\.$/;
    for (const phone of ['+447700900123', '07700 900123', '0044 7700 900123']) {
      const looked = await demo.mcp.call('lookup_client', { phone });
      expect(looked, phone).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(looked.hint, phone).toMatch(drama);
      const registered = await demo.mcp.call('register_client', {
        first_name: 'Dee',
        last_name: 'Rama',
        phone,
      });
      expect(registered.hint, phone).toMatch(drama);
    }
    // Beside another bad argument, named with the same words.
    const text = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: 'whenever suits',
        client: { first_name: 'Dee', last_name: 'Rama', phone: '+447700900123' },
      }),
    );
    expect(text).toContain(
      "client.phone: That is one of the numbers kept for TV and film dramas, so it is nobody's phone",
    );
    // A complete number with a start no one has is not said to be incomplete either.
    const unused = await demo.mcp.call('lookup_client', { phone: '+1 555 555 0123' });
    expect(unused.hint).toMatch(/^That is not a phone number anyone has there; /);
  });

  // design.md 9.1: never texted or called back, so refused where a caller gives it, in every tool that
  // takes one, with what it is (before, register_client answered the service's 400 after a generic
  // sentence, and take_message stored it).
  it('refuses a premium-rate or satellite number in every tool that takes one, saying what it is', async () => {
    const hint = (what: string) =>
      `That is ${what}, which the salon never texts or calls back; ask the caller for their own mobile or landline number, or an e-mail address.`;
    const client = (phone: string) => ({ first_name: 'Pat', last_name: 'Rate', phone });
    for (const [phone, what] of [
      ['0909 123 4567', 'a premium-rate number'],
      ['+881 6 1234 5678', 'a satellite or global-service number'],
    ] as const) {
      const calls: [string, Json][] = [
        ['register_client', client(phone)],
        ['take_message', { caller_name: 'Pat', phone, message: 'Call me back', location: 'camden' }],
        [
          'book',
          {
            location: 'camden',
            services: 'cut',
            starts_at: '2026-11-25T10:00:00+00:00',
            client: client(phone),
          },
        ],
        [
          'join_waitlist',
          {
            location: 'camden',
            services: 'cut',
            from_date: '2026-11-25',
            to_date: '2026-11-27',
            client: client(phone),
          },
        ],
      ];
      for (const [tool, args] of calls) {
        const answer = await demo.mcp.call(tool, args);
        expect(answer, `${tool} ${phone}`).toMatchObject({
          ok: false,
          code: 'invalid_request',
          hint: hint(what),
        });
      }
    }
    const registered = await demo.t.request({ method: 'GET', url: '/v1/clients?phone=%2B449091234567' });
    expect(registered.statusCode).toBe(404);
  });

  it('names a blank client name as client.first_name, as it was sent', async () => {
    for (const [tool, args] of [
      ['book', { location: 'camden', services: 'cut', starts_at: '2026-11-24T15:00:00+00:00' }],
      [
        'join_waitlist',
        { location: 'camden', services: 'cut', from_date: '2026-11-25', to_date: '2026-11-27' },
      ],
    ] as const) {
      for (const client of [
        { ...CALLER, first_name: '   ' },
        { ...CALLER, last_name: '\t' },
      ]) {
        const text = errorText(await demo.mcp.raw(tool, { ...args, client }));
        const name = client.first_name.trim() ? 'last_name' : 'first_name';
        expect(text, tool).toMatch(new RegExp(` client\\.${name} must be 1 to 60 characters\\.$`));
      }
    }
  });

  it('names both blank names, and both blank parts of a message, not the first alone', async () => {
    const FRESH = { first_name: 'Ola', last_name: 'Ade', phone: '07911 123999' };
    const names = ' first_name must be 1 to 60 characters. last_name must be 1 to 60 characters.';
    const register = errorText(
      await demo.mcp.raw('register_client', { ...FRESH, first_name: '   ', last_name: '\t' }),
    );
    expect(register).toMatch(new RegExp(` register_client has 2 bad arguments:${names}$`));
    // One blank, one empty (the schema's): both named.
    expect(
      errorText(await demo.mcp.raw('register_client', { ...FRESH, first_name: '', last_name: '  ' })),
    ).toMatch(
      / register_client has 2 bad arguments: first_name is at least 1 character\. last_name must be 1 to 60/,
    );
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: { ...FRESH, first_name: ' ', last_name: ' ' },
      }),
    );
    expect(book).toMatch(
      / book has 2 bad arguments: client\.first_name must be 1 to 60 characters\. client\.last_name must be 1 to 60 characters\.$/,
    );
    const message = errorText(await demo.mcp.raw('take_message', { caller_name: '  ', message: '  ' }));
    expect(message).toMatch(
      / take_message has 2 bad arguments: caller_name must be 1 to 120 characters, without control characters\. message must be 1 to 2000 characters /,
    );
    // Beside a limit the schema refuses, too.
    const limited = errorText(
      await demo.mcp.raw('take_message', { caller_name: '  ', message: 'Call me back', location: 7 }),
    );
    expect(limited).toMatch(
      / take_message has 2 bad arguments: location .*\. caller_name must be 1 to 120 characters/,
    );
    // Beside a phone no country reads, in client too.
    expect(
      errorText(await demo.mcp.raw('register_client', { ...FRESH, first_name: ' ', phone: '12' })),
    ).toMatch(/ register_client has 2 bad arguments: first_name must be 1 to 60 characters\. phone: /);
    const bookBadPhone = errorText(
      await demo.mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: { ...FRESH, last_name: ' ', phone: '12' },
      }),
    );
    expect(bookBadPhone).toMatch(
      / book has 2 bad arguments: client\.last_name must be 1 to 60 characters\. client\.phone: /,
    );
    // Nobody was registered on the way.
    expect(await demo.mcp.call('lookup_client', { phone: FRESH.phone })).toMatchObject({ ok: false });
  });

  it('names a blank reference as a bad argument on every tool that takes one, not as an unknown booking', async () => {
    for (const tool of ['get_booking', 'cancel', 'reschedule', 'send_link']) {
      const args =
        tool === 'reschedule' ? { reference: '   ', starts_at: 'tomorrow at 3pm' } : { reference: ' \t ' };
      const result = await demo.mcp.raw(tool, args);
      expect(result.isError, tool).toBe(true);
      expect(errorText(result), tool).toMatch(new RegExp(` ${tool}: reference is at least 1 character\\.$`));
    }
  });

  it('keeps one bad argument in the form it had', async () => {
    const text = errorText(await demo.mcp.raw('get_booking', { reference: 7 }));
    expect(text).toMatch(
      / get_booking: reference is not valid; expected: As said, e\.g\. NHC-7KQ2MX \(text of 1 to 120 characters\)\.$/,
    );
  });

  it('says what text or an object sent as something else should be, with its limits, for every one', async () => {
    // A number for text and text for an object: the limits tools/list leaves out are said here, or
    // the agent hears "expected: For the stylist" and cannot tell what to send.
    const book = errorText(
      await demo.mcp.raw('book', {
        location: 3,
        services: 'cut',
        starts_at: '2026-11-24T15:00:00+00:00',
        client: 'Nia Obi',
        notes: 42,
        repeat: 'every 3 weeks',
      }),
    );
    expect(book).toContain('book has 4 bad arguments: ');
    expect(book).toContain('location is not valid; expected: text.');
    expect(book).toContain(
      'client is not valid; expected: A new client, instead of client_id (an object with first_name and last_name, and optionally phone and email).',
    );
    expect(book).toContain(
      'notes is not valid; expected: For the stylist (text of at most 1000 characters).',
    );
    expect(book).toContain(
      'repeat is not valid; expected: A series: same time every every_weeks weeks, count visits (an object with every_weeks (a whole number from 1 to 12) and count (a whole number from 2 to 26)).',
    );
    const register = errorText(
      await demo.mcp.raw('register_client', { first_name: 7, phone: 7911123458, email: ['nia@example.com'] }),
    );
    expect(register).toContain('register_client has 4 bad arguments: ');
    expect(register).toContain('first_name is not valid; expected: text of 1 to 60 characters.');
    expect(register).toContain('last_name is missing; expected: text of 1 to 60 characters.');
    // A description ending in an ellipsis keeps it.
    expect(register).toContain('phone is not valid; expected: As said: +44... or 07911... (text).');
    expect(register).toContain('email is not valid; expected: text.');
    const nested = errorText(
      await demo.mcp.raw('join_waitlist', {
        services: 'cut',
        from_date: 'friday',
        to_date: 'friday',
        client: { first_name: 7, last_name: 'Obi', phone: '07911 123458' },
      }),
    );
    expect(nested).toMatch(
      / join_waitlist: client\.first_name is not valid; expected: text of 1 to 60 characters\.$/,
    );
    const message = errorText(await demo.mcp.raw('take_message', { caller_name: 'Nia', message: 42 }));
    expect(message).toMatch(
      / take_message: message is not valid; expected: In the caller's words \(text of 1 to 2000 characters\)\.$/,
    );
  });
});

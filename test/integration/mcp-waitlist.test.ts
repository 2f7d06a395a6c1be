import { afterEach, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { connectInProcess, connectOverRest, type Era, errorText } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAnaOnTuesday, TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * join_waitlist (design.md 9.4) through the SDK's client: find_slots finding nothing says the caller
 * can join; joining with a new caller, by spoken dates and parts of the day, makes the entry the worker
 * offers the next freed time to; bad arguments are named together (a read key does not see the tool:
 * mcp-tool-surface.test.ts lists exactly the read tools). In process on both protocol
 * generations, and over REST (`booking mcp --base-url`). The small catalogue; Monday 23 November 2026,
 * 09:00 in London; Ana's Tuesday at Soho booked full.
 */
const NOW = '2026-11-23T09:00:00Z';
const ALREADY_WAITING =
  'The caller is already on the waitlist here for those services and will be sent a link when a time frees up; ' +
  'to change the days or times, offer to take a message for the salon.';

/** join_waitlist's hint for parts of Tuesday 24 November (today) already over. */
const TODAY_OVER = (parts: string) =>
  `The ${parts} already over today, Tuesday 24 November; ask the caller whether a later part of the day or another day suits, then join_waitlist with that.`;

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe.each(['legacy', 'modern'] as Era[])('join_waitlist (%s protocol)', (era) => {
  it('is offered when nothing is free, and its entry gets the next time that frees', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const none = await mcp.call('find_slots', {
        location: 'soho',
        services: 'cut',
        date: 'tuesday',
        staff: 'Ana',
      });
      expect(none).toMatchObject({ ok: false, code: 'no_slots' });
      expect(none.hint).toContain('join_waitlist');

      const joined = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        client: { first_name: 'Ada', last_name: 'Waiting', phone: '07911 778899', email: null },
        from_date: 'tuesday',
        to_date: 'tuesday',
        times: ['afternoon'],
      });
      expect(joined).toMatchObject({ ok: true });
      expect(joined.spoken).toBe(
        "You're on the waitlist with Ana for tomorrow, Tuesday 24 November, in the afternoon. If a time frees up, it's held for you and we'll send you a link to book it.",
      );
      const ids = await catalogueIds(t.database.db);
      const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json().data;
      expect(entry).toMatchObject({
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.ana,
        from_date: TUESDAY,
        to_date: TUESDAY,
        times: ['afternoon'],
        status: 'waiting',
      });

      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel` });
      expect(await waitlistPass(t)).toBe(1);
      const offered = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json()
        .data;
      expect(offered.offer).toMatchObject({ starts_at: `${TUESDAY}T15:00:00+00:00` });

      // Ada rings about the offer and asks for that time: the offer is hers already, to claim; Soho
      // has no Booking Protection, so nothing is said of one.
      const asked = await mcp.call('book', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        starts_at: 'Tuesday 3pm',
        client_id: entry.client_id,
      });
      expect(asked).toMatchObject({ ok: true, existing: true, status: 'pending_confirmation' });
      expect(asked.booking.reference).toBe(offered.offer.booking_reference);
      expect(asked.spoken).not.toContain('Booking Protection');
      expect(asked.spoken).toContain(
        'This time is offered to you from the waitlist: please claim it on the booking page to book it.',
      );
      // Read back, or listed when she rings again, the offer is said as one (a time to claim), not as
      // something she left unfinished online.
      const read = await mcp.call('get_booking', { reference: offered.offer.booking_reference });
      expect(read.spoken).toMatch(
        /^Offered to you from the waitlist and held until \d{1,2}:\d\d [ap]m today for you to claim online, not yet booked: .+ at 3 pm\. The reference is /,
      );
      const found = await mcp.call('lookup_client', { phone: '07911 778899' });
      expect(found.spoken).toMatch(
        /^You have an upcoming booking: .+ at 3 pm, offered to you from the waitlist for you to claim online \(reference [A-Z0-9 ]+ dash [A-Z0-9 ]+\)\.$/,
      );
      expect(`${asked.spoken} ${read.spoken} ${found.spoken}`).not.toContain('finish online');
    } finally {
      await mcp.close();
    }
  });

  it('tells a caller already waiting for those services that they are on the list', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const args = {
        location: 'soho',
        services: 'cut',
        client: { first_name: 'Ada', last_name: 'Waiting', phone: '07911 778899' },
        from_date: 'next week',
        to_date: 'next week',
      };
      expect(await mcp.call('join_waitlist', args)).toMatchObject({ ok: true });
      const again = await mcp.call('join_waitlist', { ...args, from_date: 'tomorrow', times: ['morning'] });
      expect(again).toMatchObject({ ok: false, code: 'conflict', hint: ALREADY_WAITING });
    } finally {
      await mcp.close();
    }
  });

  it('tells a caller waiting for a cut and a colour that they wait already when asked for a colour and a cut', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const args = {
        location: 'soho',
        services: ['cut', 'colour'],
        client_id: (await catalogueIds(t.database.db)).jo,
        from_date: 'next week',
        to_date: 'next week',
      };
      expect(await mcp.call('join_waitlist', args)).toMatchObject({ ok: true });
      const again = await mcp.call('join_waitlist', { ...args, services: ['colour', 'cut'] });
      expect(again).toMatchObject({ ok: false, code: 'conflict', hint: ALREADY_WAITING });
      expect((await t.request({ method: 'GET', url: '/v1/waitlist' })).json().data).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });

  it('reads the last date as said after the first: "Monday to Friday", "the 28th to the 3rd"', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const jo = (await catalogueIds(t.database.db)).jo;
      // Monday 23 November: "Monday" is today, so Wednesday to Monday is Wednesday 25 to Monday 30.
      const joined = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        client_id: jo,
        from_date: 'Wednesday',
        to_date: 'Monday',
      });
      expect(joined, JSON.stringify(joined)).toMatchObject({ ok: true });
      const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json().data;
      expect(entry).toMatchObject({ from_date: '2026-11-25', to_date: '2026-11-30' });

      const across = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'colour',
        client_id: jo,
        from_date: 'the 28th',
        to_date: 'the 3rd',
      });
      expect(across, JSON.stringify(across)).toMatchObject({ ok: true });
      const second = (await t.request({ method: 'GET', url: `/v1/waitlist/${across.entry_id}` })).json().data;
      expect(second).toMatchObject({ from_date: '2026-11-28', to_date: '2026-12-03' });

      // Dates given as dates, and days named from today, are taken as they are: the wrong way round
      // is still said.
      for (const to_date of ['2026-11-26', 'tomorrow']) {
        const wrong = await mcp.raw('join_waitlist', {
          location: 'soho',
          services: ['cut', 'colour'],
          client_id: jo,
          from_date: '2026-11-28',
          to_date,
        });
        expect(wrong.isError).toBe(true);
        expect(errorText(wrong)).toContain('from_date is after to_date');
      }
    } finally {
      await mcp.close();
    }
  });

  it('says a wait that started on a day already past from today, the first day a time can free up', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const jo = (await catalogueIds(t.database.db)).jo;
      const since = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        client_id: jo,
        from_date: 'last Friday',
        to_date: 'Wednesday',
      });
      expect(since, JSON.stringify(since)).toMatchObject({ ok: true });
      expect(since.spoken).toBe(
        "You're on the waitlist from today, Monday 23 November to Wednesday 25 November. If a time frees up, it's held for you and we'll send you a link to book it.",
      );
      const today = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'colour',
        client_id: jo,
        from_date: 'yesterday',
        to_date: 'today',
      });
      expect(today.spoken).toBe(
        "You're on the waitlist for today, Monday 23 November. If a time frees up, it's held for you and we'll send you a link to book it.",
      );
    } finally {
      await mcp.close();
    }
  });

  it('asks for a phone number or e-mail for a new caller who gave neither, rather than joining nobody to tell', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      for (const contact of [{}, { phone: ' ', email: '' }]) {
        const joined = await mcp.call('join_waitlist', {
          location: 'soho',
          services: 'cut',
          client: { first_name: 'Nell', last_name: 'Quiet', ...contact },
          from_date: 'tuesday',
          to_date: 'tuesday',
        });
        expect(joined).toMatchObject({ ok: false, code: 'invalid_request' });
        expect(joined.hint).toContain('I need a phone number or e-mail to tell them when a time frees up');
      }
      expect((await t.request({ method: 'GET', url: '/v1/waitlist' })).json().data).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('says the parts of today asked for are over, to offer a later one, and joins nobody', async () => {
    // Tuesday 24 November 2026, 18:00 in London: the morning and afternoon are over, the evening not.
    t = await startTestApp({ now: `${TUESDAY}T18:00:00Z` });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const args = {
        location: 'soho',
        services: 'cut',
        client_id: (await catalogueIds(t.database.db)).jo,
        from_date: 'today',
        to_date: 'today',
      };
      const over = await mcp.call('join_waitlist', { ...args, times: ['morning', 'afternoon'] });
      expect(over).toMatchObject({
        ok: false,
        code: 'invalid_request',
        hint: TODAY_OVER('morning and afternoon are'),
      });
      expect(
        await mcp.call('join_waitlist', { ...args, from_date: 'this morning', to_date: 'this morning' }),
      ).toMatchObject({ ok: false, hint: TODAY_OVER('morning is') });
      expect((await t.request({ method: 'GET', url: '/v1/waitlist' })).json().data).toEqual([]);
      expect(await mcp.call('join_waitlist', { ...args, times: ['evening'] })).toMatchObject({ ok: true });
    } finally {
      await mcp.close();
    }
  });

  it('names every bad argument at once', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, era);
    try {
      const bad = await mcp.raw('join_waitlist', {
        location: 'soho',
        services: 'cut',
        client_id: (await catalogueIds(t.database.db)).jo,
        from_date: 'the 45th',
        to_date: 'someday',
      });
      expect(bad.isError).toBe(true);
      const text = errorText(bad);
      expect(text).toContain('from_date');
      expect(text).toContain('to_date');
    } finally {
      await mcp.close();
    }
  });
});

describe('join_waitlist over REST (booking mcp --base-url)', () => {
  it('joins through POST /v1/waitlist, and a second time is the conflict the API answers', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectOverRest(t);
    try {
      const args = {
        location: 'soho',
        services: 'cut',
        client_id: (await catalogueIds(t.database.db)).jo,
        from_date: '2026-11-24',
        to_date: '2026-11-30',
      };
      const joined = await mcp.call('join_waitlist', args);
      expect(joined.ok).toBe(true);
      const listed = (await t.request({ method: 'GET', url: '/v1/waitlist' })).json().data;
      expect(listed.map((e: { id: string }) => e.id)).toEqual([joined.entry_id]);
      const again = await mcp.call('join_waitlist', args);
      expect(again).toMatchObject({ ok: false, code: 'conflict', hint: ALREADY_WAITING });
    } finally {
      await mcp.close();
    }
  });

  it('says the parts of today asked for are over, as the API refused them', async () => {
    t = await startTestApp({ now: `${TUESDAY}T23:30:00Z` });
    const mcp = await connectOverRest(t);
    try {
      const over = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        client_id: (await catalogueIds(t.database.db)).jo,
        from_date: TUESDAY,
        to_date: TUESDAY,
        times: ['morning'],
      });
      // Said as in process: the tools read today on the app's clock, as the API does.
      expect(over).toMatchObject({ ok: false, code: 'invalid_request', hint: TODAY_OVER('morning is') });
    } finally {
      await mcp.close();
    }
  });
});

describe('join_waitlist for a caller no offer could reach', () => {
  it.each(['in process', 'over REST'])(
    'asks for an e-mail when the number is abroad and there is none, then joins with it, registered once (%s)',
    async (face) => {
      t = await startTestApp({ now: NOW });
      const mcp =
        face === 'in process' ? await connectInProcess(t, t.keys.readWrite) : await connectOverRest(t);
      const roux = () =>
        t.database.db
          .selectFrom('clients')
          .select(['first_name', 'email'])
          .where('last_name', '=', 'Roux')
          .execute();
      try {
        const args = { location: 'soho', services: 'cut', from_date: TUESDAY, to_date: TUESDAY };
        // A name registration refuses is refused as book refuses it, for the agent to ask again.
        const garbled = errorText(
          await mcp.raw('join_waitlist', {
            ...args,
            client: { first_name: 'Ame\nlie', last_name: 'Roux', email: 'amelie@example.com' },
          }),
        );
        expect(garbled).toContain('client.first_name holds a control character');
        // A French mobile: the London salon texts the United Kingdom only.
        const abroad = await mcp.call('join_waitlist', {
          ...args,
          client: { first_name: 'Amelie', last_name: 'Roux', phone: '+33612345678' },
        });
        expect(abroad).toMatchObject({
          ok: false,
          code: 'invalid_request',
          hint: expect.stringMatching(/^We can't text that number .*ask the caller for an e-mail address/),
        });
        // Refused, she is not registered: the join with her e-mail makes her one record, not a second.
        expect(await roux()).toEqual([]);
        const withEmail = await mcp.call('join_waitlist', {
          ...args,
          client: { first_name: 'Amelie', last_name: 'Roux', email: 'amelie@example.com' },
        });
        expect(withEmail, JSON.stringify(withEmail)).toMatchObject({ ok: true });
        expect(await roux()).toEqual([{ first_name: 'Amelie', email: 'amelie@example.com' }]);
        // On file now: found by her e-mail under her name, said with its accent, for a colour too.
        const colour = await mcp.call('join_waitlist', {
          ...args,
          services: 'colour',
          client: { first_name: 'Amélie', last_name: 'Roux', email: 'AMELIE@example.com' },
        });
        expect(colour, JSON.stringify(colour)).toMatchObject({ ok: true });
        expect(await roux()).toHaveLength(1);
        // Her e-mail given for someone else is not her entry, as book would not book her.
        const other = await mcp.call('join_waitlist', {
          ...args,
          client: { first_name: 'Anna', last_name: 'Roux', email: 'amelie@example.com' },
        });
        expect(other).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Amelie Roux'] });
        expect(await roux()).toHaveLength(1);
      } finally {
        await mcp.close();
      }
    },
  );
});

describe('find_slots for a part of the day nobody works', () => {
  it('says the location is not open then, not that nothing is free: the waitlist cannot help', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, 'modern');
    try {
      // Soho closes at 5 pm on Tuesdays: no evening time there can ever free up.
      const evening = await mcp.call('find_slots', {
        location: 'soho',
        services: 'cut',
        date: 'tuesday evening',
        staff: 'Ana',
      });
      expect(evening).toMatchObject({ ok: false, code: 'no_slots' });
      expect(evening.hint).toBe(
        'Soho is not open tomorrow, Tuesday 24 November in the evening (open Monday and Tuesday 9 am to ' +
          '5 pm, Wednesday 10 am to 6 pm); offer the nearest free times in alternatives, not the waitlist: ' +
          'no time frees up then.',
      );
      expect((evening.alternatives as unknown[]).length).toBeGreaterThan(0);

      // Open then, but closing before a Cut (45 minutes) could end: no time frees up then either.
      const lastHalfHour = await mcp.call('find_slots', {
        location: 'soho',
        services: 'cut',
        date: 'tuesday',
        earliest: '4:30 pm',
        staff: 'Ana',
      });
      expect(lastHalfHour).toMatchObject({ ok: false, code: 'no_slots' });
      expect(lastHalfHour.hint).toMatch(
        /^Soho is not open tomorrow, Tuesday 24 November from 4:30 pm long enough \(open .*not the waitlist/,
      );

      // Inside the hours, a full afternoon still says nothing is free and offers the waitlist.
      await bookAnaOnTuesday(t, ['12', '13', '14', '15', '16']);
      const afternoon = await mcp.call('find_slots', {
        location: 'soho',
        services: 'cut',
        date: 'tuesday afternoon',
        staff: 'Ana',
      });
      expect(afternoon.hint).toContain('join_waitlist');
    } finally {
      await mcp.close();
    }
  });
});

describe('join_waitlist with a part of the day said in its dates', () => {
  it('waits for that part of the day ("Tuesday afternoon"), not any time', async () => {
    t = await startTestApp({ now: NOW });
    const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
    const mcp = await connectInProcess(t, t.keys.readWrite, 'modern');
    try {
      const joined = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        staff: 'Ana',
        client: { first_name: 'Ada', last_name: 'Waiting', phone: '07911 778899' },
        from_date: 'tuesday afternoon',
        to_date: 'tuesday afternoon',
      });
      expect(joined).toMatchObject({ ok: true });
      const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json().data;
      expect(entry.times).toEqual(['afternoon']);
      // Said back as asked: the stylist and the part of the day, not just the day.
      expect(joined.spoken).toMatch(
        /^You're on the waitlist with Ana for tomorrow, Tuesday 24 November, in the afternoon\. /,
      );
      // A morning that frees is not what Ada asked for.
      await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('09')}/cancel` });
      expect(await waitlistPass(t)).toBe(0);

      // Different parts at the two ends say where a span starts and ends: any time between suits.
      const span = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'colour',
        client_id: entry.client_id,
        from_date: 'tomorrow morning',
        to_date: 'wednesday evening',
      });
      const spanEntry = (await t.request({ method: 'GET', url: `/v1/waitlist/${span.entry_id}` })).json()
        .data;
      expect(spanEntry.times).toBeNull();
      expect(span.spoken).toMatch(
        /^You're on the waitlist from tomorrow, Tuesday 24 November to Wednesday 25 November\. /,
      );

      // Parts of the day given are said in the day's order, whatever order they came in.
      const parts = await mcp.call('join_waitlist', {
        location: 'soho',
        services: ['cut', 'colour'],
        client_id: entry.client_id,
        from_date: 'wednesday',
        to_date: 'friday',
        times: ['evening', 'morning'],
      });
      expect(parts.spoken).toMatch(
        /^You're on the waitlist from Wednesday 25 November to Friday 27 November, in the morning or evening\. /,
      );
    } finally {
      await mcp.close();
    }
  });
});

describe('a caller with no stylist in mind', () => {
  it('joins for anyone when the staff said is "anyone" or "no preference", not a stylist the agent then picks', async () => {
    t = await startTestApp({ now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite, 'modern');
    try {
      const joined = await mcp.call('join_waitlist', {
        location: 'soho',
        services: 'cut',
        staff: 'anyone',
        client: { first_name: 'Ada', last_name: 'Waiting', phone: '07911 778899' },
        from_date: 'tuesday',
        to_date: 'tuesday',
      });
      expect(joined).toMatchObject({ ok: true });
      const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json().data;
      expect(entry.staff_id).toBeNull();
      // No stylist was named, so none is said.
      expect(joined.spoken).toMatch(/^You're on the waitlist for tomorrow, Tuesday 24 November\. /);
      const slots = await mcp.call('find_slots', {
        location: 'soho',
        services: 'cut',
        date: 'tuesday',
        staff: 'No preference.',
      });
      expect(slots).toMatchObject({ slots: expect.any(Array) });
    } finally {
      await mcp.close();
    }
  });
});

/**
 * Ana's Tuesday at Soho booked full; Jo joins the waitlist for a cut with her on Tuesday (through MCP,
 * in process or over REST), and 10 am, freed, is offered to her.
 */
async function offerToJo(face: string) {
  t = await startTestApp({ now: NOW });
  const ids = await catalogueIds(t.database.db);
  const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
  // Jo's own Tuesday times were booked before she joined, and are no answer to the offer.
  t.clock.advance({ minutes: 1 });
  const mcp = face === 'in process' ? await connectInProcess(t, t.keys.readWrite) : await connectOverRest(t);
  const joined = await mcp.call('join_waitlist', {
    location: 'soho',
    services: 'cut',
    staff: 'Ana',
    client_id: ids.jo,
    from_date: TUESDAY,
    to_date: TUESDAY,
  });
  expect(joined, JSON.stringify(joined)).toMatchObject({ ok: true });
  await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('10')}/cancel`, payload: {} });
  expect(await waitlistPass(t)).toBe(1);
  const { offer } = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json().data;
  return { ids, booked, mcp, joined, offer };
}

describe('cancel of a time offered from the waitlist, not claimed yet', () => {
  it.each(['in process', 'over REST'])(
    'says the offer is released and nothing sent, not "cancellation sent" (%s)',
    async (face) => {
      const { ids, mcp, joined, offer } = await offerToJo(face);
      try {
        const links = customerLinks(localCheckout, 'https://book.example');
        await deliverAllDue({
          db: t.database.db,
          clock: t.clock,
          senders: { sms: null, email: null },
          links,
        });
        // Jo got the offer's text and rings: she cannot make it. The engine withdraws the offer quietly (nothing was booked).
        const preview = await mcp.call('cancel', { reference: offer.booking_reference, dry_run: true });
        expect(preview.spoken).toMatch(
          /^If released now: the time offered from the waitlist, not booked: Cut with Ana at Soho, .*Tuesday 24 November at 10 am\. Nothing would be sent; the caller stays on the waitlist\.$/,
        );
        const released = await mcp.call('cancel', { reference: offer.booking_reference });
        expect(released).toMatchObject({ ok: true });
        expect(released.spoken).toMatch(
          /^Released: the time offered from the waitlist, not booked: Cut with Ana at Soho, .*Tuesday 24 November at 10 am\. Nothing is sent; the caller stays on the waitlist\.$/,
        );
        const sent = (await listOutbox(t.database.db, ids.organisation)).filter(
          (m) => m.reference === offer.booking_reference,
        );
        // The offer's text and e-mail, and nothing after them.
        expect(sent.map((m) => `${m.kind}:${m.channel}`).sort()).toEqual([
          'booking_page_link:email',
          'booking_page_link:sms',
        ]);
        const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json()
          .data;
        expect(entry).toMatchObject({ status: 'waiting', offer: null });
      } finally {
        await mcp.close();
      }
    },
  );

  it.each(['in process', 'over REST'])(
    'says the caller is off the waitlist when they booked a time it waits for meanwhile (%s)',
    async (face) => {
      const { ids, booked, mcp, joined, offer } = await offerToJo(face);
      try {
        // Before the offer reaches her, Jo rings and takes 3 pm, freed meanwhile: the offer is still hers.
        t.clock.advance({ minutes: 2 });
        await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('15')}/cancel`, payload: {} });
        const three = await mcp.call('book', {
          location: 'soho',
          services: 'cut',
          staff: 'Ana',
          starts_at: 'Tuesday 3pm',
          client_id: ids.jo,
        });
        expect(three, JSON.stringify(three)).toMatchObject({ ok: true, status: 'confirmed' });
        const stillWaiting = (
          await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })
        ).json().data;
        expect(stillWaiting).toMatchObject({
          status: 'waiting',
          offer: { booking_reference: offer.booking_reference },
        });

        const preview = await mcp.call('cancel', { reference: offer.booking_reference, dry_run: true });
        expect(preview.spoken).toMatch(
          /^If released now: the time offered from the waitlist, not booked: Cut with Ana at Soho, .*Tuesday 24 November at 10 am\. Nothing would be sent\. The caller would be off the waitlist: they have booked Cut with Ana at Soho, .*Tuesday 24 November at 3 pm, a time they are waiting for\.$/,
        );
        const released = await mcp.call('cancel', { reference: offer.booking_reference });
        expect(released).toMatchObject({ ok: true });
        expect(released.spoken).toMatch(
          /^Released: the time offered from the waitlist, not booked: Cut with Ana at Soho, .*Tuesday 24 November at 10 am\. Nothing is sent\. The caller is off the waitlist: they have booked Cut with Ana at Soho, .*Tuesday 24 November at 3 pm, a time they were waiting for\.$/,
        );
        const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.entry_id}` })).json()
          .data;
        expect(entry).toMatchObject({
          status: 'booked',
          booking_reference: three.booking.reference,
          offer: null,
        });
      } finally {
        await mcp.close();
      }
    },
  );
});

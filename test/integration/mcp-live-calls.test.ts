import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listMessages } from '../../src/app/message-service.ts';
import { payDepositByStaff } from '../../src/app/staff-actions.ts';
import { countBookings } from '../helpers/booking-fixtures.ts';
import { demoWithProtectedBooking, PROTECTED_REFERENCE } from '../helpers/live-call-fixtures.ts';
import { connectInProcess, type Json, type McpHarness } from '../helpers/mcp-harness.ts';
import { connectStreamableHttp } from '../helpers/mcp-servers.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { KATHMANDU, NEW_YORK, SYDNEY } from '../helpers/world-catalogues.ts';

/**
 * Phone calls as an LLM receptionist plays them (issue "MCP for live calls"), through the SDK's client,
 * in process and over Streamable HTTP, on a fixed clock: Monday 23 November 2026, 09:00 in London.
 * The demo salon (London, en-GB; Islington with Booking Protection, 50 % for a late cancellation) and
 * businesses in New York (en-US), Sydney and Kathmandu. Each call checks the structured answer and the
 * words the agent reads out or acts on.
 */

const SAM = { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' };

describe.each(['in process', 'over HTTP'] as const)('live calls, %s', (transport) => {
  let t: TestApp;
  let keys: Record<'london' | 'newYork' | 'sydney' | 'kathmandu', string>;
  const open: McpHarness[] = [];
  let origin = '';

  beforeAll(async () => {
    t = await startTestApp({
      catalogues: [demoWithProtectedBooking(), NEW_YORK, SYDNEY, KATHMANDU],
      limits: { requestsPerMinute: 100_000 },
    });
    keys = {
      london: t.keys.readWrite,
      newYork: await t.keyFor('brooklyn-barbers'),
      sydney: await t.keyFor('bondi-beauty'),
      kathmandu: await t.keyFor('thamel-salon'),
    };
    if (transport === 'over HTTP') {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const address = t.app.server.address();
      if (address === null || typeof address === 'string') throw new Error('not listening on a port');
      origin = `http://127.0.0.1:${address.port}`;
    }
  });
  afterEach(() => t.clock.set(TEST_START));
  afterAll(async () => {
    for (const mcp of open) await mcp.close();
    await t.close();
  });

  /** The agent of one business, connected as the transport under test does. */
  async function agent(business: keyof typeof keys = 'london'): Promise<McpHarness> {
    const mcp =
      transport === 'in process'
        ? await connectInProcess(t, keys[business])
        : await connectStreamableHttp(origin, keys[business]);
    open.push(mcp);
    return mcp;
  }

  it('a new caller books a cut for tomorrow afternoon, hears it read back, and finds it by its spoken reference', async () => {
    const mcp = await agent();
    const found = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      time_of_day: 'afternoon',
    });
    expect(found.ok).toBe(true);
    // The price, and nothing more to tell before booking: no deposit, no card.
    expect(found.spoken).toMatch(/ Cut & blow-dry takes 1 hour and costs 55 pounds\.$/);
    const slot = found.slots[0];
    expect(slot.spoken).toMatch(/^tomorrow, Tuesday 24 November at (noon|12 pm|[1-5](:\d\d)? pm)$/);

    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: slot.starts_at,
      client: SAM,
    });
    expect(booked).toMatchObject({
      ok: true,
      status: 'confirmed',
      existing: false,
      payment_url: null,
      booking: {
        starts_at: slot.starts_at,
        staff_id: slot.staff_id,
        service_names: ['Cut & blow-dry'],
        client_name: 'Sam Lee',
        total_price: { amount: 5500, spoken: '55 pounds' },
        notes: null,
      },
    });
    expect(booked.spoken).toMatch(
      /^Booked: Cut & blow-dry with .* at Northside Camden, tomorrow, Tuesday 24 November at/,
    );
    expect(booked.spoken).toContain(`The reference is ${booked.booking.reference_spoken}.`);

    const { reference } = booked.booking;
    const code = reference.slice(4);
    for (const said of [
      reference.toLowerCase().replace('-', ' '),
      `N H C dash ${code.split('').join(' ')}`,
      code,
      `nhc${code.toLowerCase()}`,
      // A hyphen where the caller paused, not after the prefix.
      `${code.slice(0, 3)}-${code.slice(3)}`,
      `NHC-${code.slice(0, 3)}-${code.slice(3)}`,
      `n h c dash ${code.slice(0, 3).split('').join(' ')} dash ${code.slice(3).split('').join(' ')}`,
    ]) {
      const read = await mcp.call('get_booking', { reference: said });
      expect(read.booking.reference, said).toBe(reference);
    }
  });

  it('a retry with a changed argument, or naming the stylist who already has it, never books twice', async () => {
    const mcp = await agent();
    const slots = (await mcp.call('find_slots', { location: 'camden', services: 'cut', date: 'wednesday' }))
      .slots;
    const args = { location: 'camden', services: 'cut', starts_at: slots[1].starts_at, client: SAM };
    const first = await mcp.call('book', args);
    const before = await countBookings(t.database.db);
    const withNotes = await mcp.call('book', { ...args, notes: 'Fringe only, please' });
    expect(withNotes).toMatchObject({
      ok: true,
      existing: true,
      booking: { reference: first.booking.reference },
    });
    expect(withNotes.spoken).toMatch(/^You already have this booking; nothing new was booked\./);
    const withStylist = await mcp.call('book', { ...args, staff: first.booking.staff_name });
    expect(withStylist).toMatchObject({
      ok: true,
      existing: true,
      booking: { reference: first.booking.reference },
    });
    expect(await countBookings(t.database.db)).toBe(before);
  });

  it('two calls at once for one caller at one time, naming different stylists and services, make one booking', async () => {
    const [one, other] = [await agent(), await agent()];
    const caller = { first_name: 'Dee', last_name: 'Twice', phone: '07911 123458' };
    // A time both stylists are free, each for their service.
    const free = async (services: string, staff: string) =>
      (
        (await one.call('find_slots', { location: 'camden', services, staff, date: 'thursday', limit: 20 }))
          .slots as Json[]
      ).map((slot) => slot.starts_at as string);
    const bens = await free('beard trim', 'Ben');
    const startsAt = (await free('cut', 'Amara')).find((at) => bens.includes(at))!;
    // The caller is on file first: both calls then name the same client.
    await one.call('register_client', caller);
    const before = await countBookings(t.database.db);
    const answers = await Promise.all([
      one.call('book', {
        location: 'camden',
        services: 'cut',
        staff: 'Amara',
        starts_at: startsAt,
        client: caller,
      }),
      other.call('book', {
        location: 'camden',
        services: 'beard trim',
        staff: 'Ben',
        starts_at: startsAt,
        client: caller,
      }),
    ]);
    expect(
      answers.map((answer) => answer.ok),
      JSON.stringify(answers),
    ).toEqual([true, true]);
    expect(answers.map((answer) => answer.existing).sort()).toEqual([false, true]);
    expect(answers[0].booking.reference).toBe(answers[1].booking.reference);
    expect(await countBookings(t.database.db)).toBe(before + 1);
  });

  it('refusals say why: too soon, off the grid, closed on Sunday, closed for Christmas, a stylist not in that day', async () => {
    const mcp = await agent();
    const book = (starts_at: string, extra: Json = {}) =>
      mcp.call('book', { location: 'camden', services: 'cut', starts_at, client: SAM, ...extra });

    const soon = await book('2026-11-23T09:30:00+00:00');
    expect(soon).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
    expect(soon.hint).toMatch(/^That is too soon: bookings there need 1 hour's notice; offer the earliest/);
    expect(soon.alternatives.length).toBeGreaterThan(0);

    const offGrid = await book('2026-11-24T10:05:00+00:00');
    expect(offGrid).toMatchObject({ ok: false, code: 'conflict', reason: 'not_on_grid' });
    expect(offGrid.hint).toMatch(/start every 15 minutes/);

    const sunday = await mcp.call('find_slots', { location: 'camden', services: 'cut', date: 'sunday' });
    expect(sunday).toMatchObject({ ok: false, code: 'no_slots', reason: 'closed' });
    expect(sunday.hint).toMatch(/^Northside Camden is closed on Sunday 29 November/);
    expect(sunday.hint).not.toMatch(/Nothing is free/);

    const christmas = await book('2026-12-25T10:00:00+00:00');
    expect(christmas).toMatchObject({ ok: false, code: 'conflict', reason: 'closed' });
    expect(christmas.hint).toMatch(/closed on Friday 25 December \(Christmas Day\)/);

    // Ben works at Camden on Tuesday, Thursday and Saturday, at Islington on the other weekdays.
    const ben = await book('2026-11-30T10:00:00+00:00', { staff: 'Ben' });
    expect(ben).toMatchObject({ ok: false, code: 'conflict', reason: 'staff_not_working' });
    // Said day by day as he works them: his Mondays, Wednesdays and Fridays are not "Monday to Friday".
    expect(ben.hint).toBe(
      'Ben Carter does not work then; Ben Carter works Tuesday and Thursday 10 am to 6 pm, Saturday 9 am ' +
        'to 4 pm at Northside Camden and Monday, Wednesday and Friday 9 am to 5 pm at Northside Islington; ' +
        "offer Ben Carter's nearest free times in alternatives, or anyone else.",
    );
  });

  it('a deposit is told before booking; the hold, its end and its link after; a late cancel says the deposit is kept', async () => {
    const mcp = await agent();
    const found = await mcp.call('find_slots', {
      location: 'camden',
      services: 'full colour',
      date: 'thursday',
    });
    expect(found.ok).toBe(true);
    expect(found.spoken).toMatch(
      / Full colour takes 1 hour 30 minutes and costs 95 pounds\. A deposit of 20 pounds is paid online to confirm the booking\.$/,
    );

    const held = await mcp.call('book', {
      location: 'camden',
      services: 'full colour',
      starts_at: found.slots[0].starts_at,
      client: SAM,
    });
    expect(held).toMatchObject({
      ok: true,
      status: 'pending_payment',
      payment_url: expect.stringMatching(/\/checkout\//),
      booking: {
        deposit: { amount: 2000 },
        hold_expires_at: '2026-11-23T09:30:00Z',
        hold_expires_spoken: '9:30 am today',
      },
    });
    expect(held.spoken).toMatch(/^Held until 9:30 am today for the deposit of 20 pounds, not yet booked:/);
    expect(held.spoken).not.toMatch(/Booked/);
    // The payment link went to the caller's phone with the booking (the outbox); the answer says so.
    expect(held.spoken).toMatch(/ Link sent to the number ending 3457\.$/);

    const { reference } = held.booking;
    const again = await mcp.call('get_booking', { reference });
    expect(new URL(again.booking.payment_url).pathname).toBe(new URL(held.payment_url).pathname);

    await payDepositByStaff(t.database.db, await orgOf('northside-hair'), reference, t.clock.nowMs());
    // Wednesday afternoon: less than 24 hours before Thursday's appointment.
    t.clock.set('2026-11-25T16:00:00Z');
    const dry = await mcp.call('cancel', { reference, dry_run: true });
    expect(dry).toMatchObject({ ok: true, dry_run: true, late: true, deposit_refunded: false, fee: null });
    expect(dry.spoken).toMatch(
      /The deposit of 20 pounds would be kept, as this is less than 24 hours before/,
    );
    expect((await mcp.call('get_booking', { reference })).booking.status).toBe('confirmed');
    const done = await mcp.call('cancel', { reference });
    expect(done).toMatchObject({ ok: true, dry_run: false, late: true, deposit_refunded: false });
    expect(done.spoken).toMatch(/^Cancelled: .*The deposit of 20 pounds is kept/);
  });

  it('a protected location is told before booking, and a late cancellation there names its fee first', async () => {
    const mcp = await agent();
    const found = await mcp.call('find_slots', { location: 'islington', services: 'cut', date: 'wednesday' });
    expect(found.ok).toBe(true);
    expect(found.spoken).toMatch(
      /You'd finish booking online with a card on file; cancelling less than 2 days before costs 50%/,
    );

    // Monday afternoon: less than 48 hours before Tuesday 14:00.
    t.clock.set('2026-11-23T15:00:00Z');
    const dry = await mcp.call('cancel', { reference: 'nhc 2dsdkb', dry_run: true });
    expect(dry).toMatchObject({
      ok: true,
      dry_run: true,
      late: true,
      deposit_refunded: null,
      // Half of the cut's 62 pounds at Islington.
      fee: { amount: 3100, currency: 'GBP', spoken: '31 pounds' },
    });
    expect(dry.spoken).toMatch(/^If cancelled now: .*A late-cancellation fee of 31 pounds would be charged/);
    // spoken is only for the caller: what the agent does next is the hint.
    expect(dry.spoken).toMatch(/would be charged to the card on file\.$/);
    expect(dry.hint).toBe('Ask the caller whether to go ahead; if so, call again without dry_run.');
    const done = await mcp.call('cancel', { reference: PROTECTED_REFERENCE });
    expect(done.fee).toEqual(dry.fee);
    expect(done.spoken).toMatch(
      /^Cancelled: .*A late-cancellation fee of 31 pounds will be charged to the card on file\./,
    );
  });

  it('a lookup miss asks for another number first; a name that differs is confirmed, never booked under the other person', async () => {
    const mcp = await agent();
    const miss = await mcp.call('lookup_client', { phone: '07912 345678' });
    expect(miss).toMatchObject({ ok: false, code: 'not_found' });
    expect(miss.hint).toMatch(/another number or e-mail/);

    const alex = { first_name: 'Alex', last_name: 'Smith', phone: '07911 123456' };
    const registered = await mcp.call('register_client', alex);
    expect(registered).toMatchObject({
      ok: true,
      created: false,
      name_mismatch: true,
      client: { first_name: 'Jo', last_name: 'Bloggs' },
    });
    expect(registered.hint).toMatch(/confirm who is calling/);

    const before = await countBookings(t.database.db);
    const slots = (await mcp.call('find_slots', { location: 'camden', services: 'cut', date: 'friday' }))
      .slots;
    const refused = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: slots[0].starts_at,
      client: alex,
    });
    expect(refused).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Jo Bloggs'] });
    expect(refused.hint).toMatch(/belongs to Jo Bloggs on file, not Alex Smith/);
    expect(await countBookings(t.database.db)).toBe(before);
  });

  it('answers hours, closures and the policy in words, and takes a message for staff', async () => {
    const mcp = await agent();
    const info = await mcp.call('get_location_info', { location: 'camden' });
    expect(info).toMatchObject({ ok: true, card_required: false, phone: '+442074850000' });
    expect(info.opening_hours_spoken).toMatch(
      /^Monday 9 am to 1 pm and 2 pm to 6 pm, Tuesday 9 am to 6 pm, .*Saturday 9 am to 4 pm/,
    );
    expect(info.opening_hours_spoken).toMatch(/closed on Sunday$/);
    expect(info.closures).toContainEqual({
      date: '2026-12-25',
      reason: 'Christmas Day',
      spoken: 'Friday 25 December (Christmas Day)',
    });
    expect(info.deposits_spoken).toMatch(/Full colour \(20 pounds\)/);
    expect(info.policy_spoken).toMatch(/less than 24 hours before the appointment is late/);
    expect(info.policy_spoken).toMatch(/late change of time is not possible/);

    const taken = await mcp.call('take_message', {
      caller_name: 'Priya',
      phone: '07400 123456',
      message: 'Can Amara call me back about a wedding trial?',
    });
    expect(taken).toMatchObject({ ok: true, message_id: expect.any(String) });
    expect(taken.spoken).toMatch(/passed your message on/);
    const messages = await listMessages(t.database.db, await orgOf('northside-hair'));
    expect(messages).toContainEqual(
      expect.objectContaining({ id: taken.message_id, callerName: 'Priya', phone: '+447400123456' }),
    );
  });

  it('a message about a reference no booking has is not taken; the reference is said back to check', async () => {
    const mcp = await agent();
    const refused = await mcp.call('take_message', {
      caller_name: 'Priya',
      message: 'Please move my appointment',
      reference: 'NHC-ZZZZZZ',
    });
    expect(refused).toMatchObject({ ok: false, code: 'not_found' });
    expect(refused.hint).toBe(
      'No booking has the reference NHC-ZZZZZZ; ask the caller to read it again, or find it with lookup_client.',
    );
  });

  it('in New York, times and prices are said the American way, with the offset in force', async () => {
    const mcp = await agent('newYork');
    const found = await mcp.call('find_slots', { services: 'shave', date: 'tomorrow' });
    expect(found.spoken).toMatch(/ costs 35 dollars\.$/);
    expect(found.slots[0].starts_at).toMatch(/^2026-11-24T\d\d:\d\d:00-05:00$/);
    expect(found.slots[0].spoken).toMatch(/^tomorrow, Tuesday, November 24 at \d+(:\d\d)? AM$/);
    const booked = await mcp.call('book', {
      services: 'shave',
      starts_at: found.slots[0].starts_at,
      client: { first_name: 'Pat', last_name: 'Kim', phone: '(718) 555-0123' },
    });
    expect(booked.booking.reference).toMatch(/^BKB-/);
    expect(booked.booking.total_price.spoken).toBe('35 dollars');
  });

  it('in Sydney and Kathmandu, slots carry summer time and the quarter-hour offset', async () => {
    const sydney = await agent('sydney');
    const bondi = await sydney.call('find_slots', { services: 'brow shape', date: 'tomorrow' });
    expect(bondi.slots[0].starts_at).toMatch(/^2026-11-24T\d\d:\d\d:00\+11:00$/);
    const kathmandu = await agent('kathmandu');
    const thamel = await kathmandu.call('find_slots', { services: 'haircut', date: 'tomorrow' });
    expect(thamel.slots[0].starts_at).toMatch(/^2026-11-24T\d\d:\d\d:00\+05:45$/);
    expect(thamel.spoken).toMatch(/ costs \d+ rupees/);
    const booked = await kathmandu.call('book', {
      services: 'haircut',
      starts_at: thamel.slots[0].starts_at,
      client_id: (await kathmandu.call('lookup_client', { phone: '+977 984-1234567' })).client.id,
    });
    expect(booked).toMatchObject({
      ok: true,
      status: 'confirmed',
      booking: { starts_at: thamel.slots[0].starts_at },
    });
  });

  async function orgOf(slug: string): Promise<string> {
    const row = await t.database.db
      .selectFrom('organisations')
      .select('id')
      .where('slug', '=', slug)
      .executeTakeFirstOrThrow();
    return row.id;
  }
});

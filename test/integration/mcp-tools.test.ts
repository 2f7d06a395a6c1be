import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/app/api-key-crypto.ts';
import { revokeApiKey } from '../../src/app/api-key-service.ts';
import { TOOLS } from '../../src/mcp/build-server.ts';
import { countBookings } from '../helpers/booking-fixtures.ts';
import {
  connectInProcess,
  demoCatalogue,
  errorText,
  type Json,
  type McpHarness,
  TOOL_NAMES,
} from '../helpers/mcp-harness.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';

/**
 * Every tool through the SDK's client (in-memory transport), on the demo catalogue. The clock stands at
 * Monday 23 November 2026, 09:00 in London (GMT): "tomorrow" is Tuesday 24 November. At Camden, Amara
 * works 09:00-13:00 and 14:00-18:00 on Tuesdays and Ben 10:00-18:00; a cut takes an hour plus 10
 * minutes' buffer. Islington has Booking Protection. Each test books slots no other test uses.
 */
let t: TestApp;
let mcp: McpHarness;
beforeAll(async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
  mcp = await connectInProcess(t, t.keys.readWrite);
});
afterEach(() => t.clock.set(TEST_START));
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const NEW_CALLER = { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' };
const localTime = (iso: string) => iso.slice(11, 16);

describe('tools/list', () => {
  it('lists every tool with input and output schemas and truthful annotations', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS.map((tool) => tool.name));
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      // The success payload; the envelope every answer has (ok, code, hint...) is the docs' (tool-kit.ts).
      expect(tool.outputSchema?.properties, tool.name).not.toHaveProperty('ok');
      expect(tool.outputSchema?.properties, tool.name).not.toHaveProperty('hint');
    }
    for (const name of ['list_locations', 'list_services', 'find_slots', 'lookup_client', 'get_booking']) {
      expect(byName[name]!.annotations, name).toMatchObject({ readOnlyHint: true });
    }
    for (const name of ['reschedule', 'cancel']) {
      expect(byName[name]!.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
    expect(byName.book!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(byName.find_slots!.inputSchema.required).toEqual(['services', 'date']);
    expect(byName.book!.inputSchema.properties).toHaveProperty('client');
  });
});

/** Every subschema of a JSON Schema, with its path, depth first. */
function* subschemas(node: unknown, path: string): Generator<[string, Json]> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* subschemas(item, `${path}[${i}]`);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  yield [path, node as Json];
  for (const [key, value] of Object.entries(node)) {
    // Property names are not schemas; their values are.
    if (key === 'properties') {
      for (const [name, sub] of Object.entries(value as Json)) yield* subschemas(sub, `${path}.${name}`);
    } else if (typeof value === 'object') yield* subschemas(value, `${path}/${key}`);
  }
}

describe('tools/list is small and flat (design.md 8.1)', () => {
  it('stays under 12,000 characters of JSON, with names a host accepts', async () => {
    const listing = await mcp.client.listTools();
    expect(JSON.stringify(listing).length).toBeLessThan(12_000);
    for (const tool of listing.tools) expect(tool.name).toMatch(/^[a-z][a-z_]{0,39}$/);
  });

  it('stays under 12,000 characters on protocol 2026-07-28 too, as the HTTP answer carries it', async () => {
    // The 2026 answer carries more (its result type and cache hints), and the JSON-RPC envelope.
    const answers: string[] = [];
    const modern = await connectInProcess(t, t.keys.readWrite, 'modern', (text) => answers.push(text));
    try {
      const { tools } = await modern.client.listTools();
      const listing = answers.find((text) => text.includes('"tools":['));
      expect(listing).toContain(`"name":"${tools[0]!.name}"`);
      expect(listing!.length).toBeLessThan(12_000);
    } finally {
      await modern.close();
    }
  });

  it('has no $ref, $defs, type arrays, nor anyOf/oneOf/allOf at the top of a schema', async () => {
    const { tools } = await mcp.client.listTools();
    for (const tool of tools) {
      for (const [which, schema] of [
        ['input', tool.inputSchema],
        ['output', tool.outputSchema],
      ] as const) {
        const at = `${tool.name} ${which}`;
        expect(schema, at).toBeDefined();
        for (const keyword of ['anyOf', 'oneOf', 'allOf']) expect(schema, at).not.toHaveProperty(keyword);
        for (const [path, sub] of subschemas(schema, at)) {
          expect(sub, path).not.toHaveProperty('$ref');
          expect(sub, path).not.toHaveProperty('$defs');
          if ('type' in sub) expect(typeof sub.type, path).toBe('string');
        }
      }
    }
  });
});

describe('list_locations and list_services', () => {
  it('gives each location its address, phone digit by digit and local time now', async () => {
    const { locations } = await mcp.call('list_locations');
    expect(locations.map((l: Json) => l.slug)).toEqual(['camden', 'islington']);
    expect(locations[0]).toMatchObject({
      name: 'Northside Camden',
      address: '12 Parkway, London, NW1 7AA',
      phone: '+442074850000',
      phone_spoken: '0 2 0, 7 4 8 5, 0 0 0 0',
      timezone: 'Europe/London',
      booking_protection: false,
      local_now: { date: '2026-11-23', weekday: 'Monday', time: '9 am', iso: '2026-11-23T09:00:00+00:00' },
    });
    expect(locations[1].booking_protection).toBe(true);
  });

  it('lists bookable services with spoken prices, and names the in-person ones', async () => {
    const result = await mcp.call('list_services', { location: 'Camden' });
    const cut = result.services.find((s: Json) => s.name === 'Cut & blow-dry');
    expect(cut).toMatchObject({
      duration_minutes: 60,
      duration_spoken: '1 hour',
      price: { amount: 5500, currency: 'GBP' },
      price_spoken: '55 pounds',
      deposit: null,
      staff: ['Amara Okafor', 'Ben Carter'],
    });
    const colour = result.services.find((s: Json) => s.name === 'Full colour');
    expect(colour).toMatchObject({ deposit_spoken: '20 pounds', price_spoken: '95 pounds' });
    expect(result.in_person_only).toEqual(['Colour consultation']);
  });

  it('sees a catalogue change at once, though listings are shared between calls', async () => {
    const price = async () =>
      (await mcp.call('list_services', { location: 'camden' })).services.find(
        (s: Json) => s.name === 'Beard trim',
      ).price_spoken;
    expect(await price()).toBe('15 pounds');
    expect(await price()).toBe('15 pounds');
    await t.database.db
      .updateTable('services')
      .set({ price_minor: 1800 })
      .where('name', '=', 'Beard trim')
      .execute();
    expect(await price()).toBe('18 pounds');
    await t.database.db
      .updateTable('services')
      .set({ price_minor: 1500 })
      .where('name', '=', 'Beard trim')
      .execute();
    expect(await price()).toBe('15 pounds');
  });

  it('asks which location when the business has several and none was named', async () => {
    const result = await mcp.call('list_services', {});
    expect(result).toMatchObject({
      ok: false,
      code: 'ambiguous',
      choices: ['Northside Camden', 'Northside Islington'],
    });
    expect(result.hint).toMatch(/which one: Northside Camden or Northside Islington/);
    const unknown = await mcp.call('list_services', { location: 'Hackney' });
    expect(unknown).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('find_slots', () => {
  it('finds tomorrow afternoon, spread out, in local time with the words to say', async () => {
    const result = await mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      time_of_day: 'afternoon',
    });
    expect(result.ok).toBe(true);
    // The service as matched, its length and price: said once, in spoken.
    expect(result.spoken).toMatch(/ Cut & blow-dry takes 1 hour and costs 55 pounds\.$/);
    expect(result.slots).toHaveLength(5);
    expect(result.more_available).toBe(true);
    const starts = result.slots.map((s: Json) => s.starts_at);
    expect(starts.map(localTime)).toEqual(['12:00', '12:30', '13:00', '13:30', '14:00']);
    expect(starts.every((s: string) => s.startsWith('2026-11-24T') && s.endsWith('+00:00'))).toBe(true);
    expect(result.slots[0]).toMatchObject({
      spoken: 'tomorrow, Tuesday 24 November at noon',
      staff_name: expect.stringMatching(/^(Amara Okafor|Ben Carter)$/),
    });
  });

  it('honours a staff member by first name, and earliest and latest times', async () => {
    const result = await mcp.call('find_slots', {
      location: 'camden',
      services: ['Cut and blow dry'],
      date: '2026-11-24',
      staff: 'amara',
      earliest: '2pm',
      latest: '15:30',
      limit: 10,
    });
    // Fewer matches than the limit: all of them, not a spread.
    expect(result.slots.map((s: Json) => localTime(s.starts_at))).toEqual([
      '14:00',
      '14:15',
      '14:30',
      '14:45',
      '15:00',
      '15:15',
      '15:30',
    ]);
    expect(new Set(result.slots.map((s: Json) => s.staff_name))).toEqual(new Set(['Amara Okafor']));
  });

  it('resolves weekday names in the location’s time zone', async () => {
    const result = await mcp.call('find_slots', { location: 'camden', services: 'beard', date: 'thursday' });
    expect(result.slots[0].starts_at.slice(0, 10)).toBe('2026-11-26');
    expect(result.slots[0].spoken).toMatch(/^Thursday 26 November at /);
  });

  it('says a closed day is closed, with its reason, and offers the nearest free times (Christmas Day)', async () => {
    const result = await mcp.call('find_slots', { location: 'camden', services: 'cut', date: '25 December' });
    expect(result).toMatchObject({ ok: false, code: 'no_slots', reason: 'closed' });
    expect(result.hint).toMatch(
      /^Northside Camden is closed on Friday 25 December \(Christmas Day\); offer the nearest free times/,
    );
    expect(result.alternatives.length).toBe(5);
    expect(result.alternatives[0].spoken).toMatch(/^Saturday 26 December at/);
  });

  it('does not call the salon closed on a day it opens when nobody who does the service works', async () => {
    // Wednesday at Camden: Amara works; Ben, the only one who trims beards, is at Islington.
    const hint =
      'Nobody who does that works at Northside Camden on Wednesday 25 November, though it is open that day for others; ' +
      'offer the nearest free times in alternatives.';
    const found = await mcp.call('find_slots', { location: 'camden', services: 'beard', date: 'wednesday' });
    expect(found).toMatchObject({ ok: false, code: 'no_slots', reason: 'closed', hint });
    expect(found.alternatives[0].spoken).toMatch(/^Thursday 26 November at /);
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'beard',
      starts_at: 'Wednesday at 11am',
      client: NEW_CALLER,
    });
    expect(booked).toMatchObject({ ok: false, code: 'conflict', reason: 'closed', hint });
    // Sunday nobody works there: closed, as before.
    const sunday = await mcp.call('find_slots', { location: 'camden', services: 'beard', date: 'sunday' });
    expect(sunday.hint).toMatch(/^Northside Camden is closed on Sunday 29 November/);
  });

  it('answers unknown, ambiguous, in-person-only and staff mismatches conversationally', async () => {
    const ask = (args: Json) => mcp.call('find_slots', { location: 'camden', date: 'tomorrow', ...args });
    expect(await ask({ services: 'perm' })).toMatchObject({ ok: false, code: 'not_found' });
    expect(await ask({ services: 'trim' })).toMatchObject({
      ok: false,
      code: 'ambiguous',
      choices: ['Cut & blow-dry', 'Beard trim'],
    });
    const inPerson = await ask({ services: 'consultation' });
    expect(inPerson).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(inPerson.hint).toBe(
      "Colour consultation is not booked on this line: the salon's team books it themselves; offer to take a message for them, or give the salon's number, 0 2 0, 7 4 8 5, 0 0 0 0.",
    );
    const mismatch = await ask({ services: 'beard trims', staff: 'Amara' });
    expect(mismatch).toMatchObject({ ok: false, code: 'invalid_request', choices: ['Ben Carter'] });
    expect(mismatch.hint).toBe('Amara Okafor does not do Beard trim; offer Ben Carter instead.');
    expect(await ask({ services: 'cut', staff: 'Zed' })).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('reports arguments the agent must fix as MCP errors with the hint', async () => {
    const badDate = await mcp.raw('find_slots', { location: 'camden', services: 'cut', date: 'soonish' });
    expect(errorText(badDate)).toMatch(/^Something in the request was not valid.* date: say a date as/);
    const badTime = await mcp.raw('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      earliest: 'after lunch',
    });
    expect(errorText(badTime)).toMatch(/earliest: give a time of day/);
    const badType = await mcp.raw('find_slots', {
      location: 'camden',
      services: 'cut',
      date: 'tomorrow',
      days: 40,
    });
    expect(errorText(badType)).toMatch(/days/);
  });

  it('refuses a broken character (a lone UTF-16 surrogate) in any argument, and writes nothing', async () => {
    const before = await countBookings(t.database.db);
    const broken = await mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T15:00:00Z',
      client: NEW_CALLER,
      notes: 'Allergic to \ud800 dye',
    });
    expect(errorText(broken)).toMatch(
      /^Something in the request was not valid.* book: notes holds a broken character/,
    );
    const nested = await mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T15:00:00Z',
      client: { ...NEW_CALLER, first_name: 'S\udc00m' },
    });
    expect(errorText(nested)).toMatch(/book: client holds a broken character/);
    expect(await countBookings(t.database.db)).toBe(before);
  });
});

describe('find_slots and book on a day everyone at the location is off', () => {
  // Amara, the only one who works at Camden on Wednesdays, is off on Wednesday 2 December.
  let off: TestApp;
  let offMcp: McpHarness;
  beforeAll(async () => {
    const catalogue = demoCatalogue() as { staff: { ref: string; time_off?: unknown[] }[] };
    catalogue.staff
      .find((s) => s.ref === 'amara')!
      .time_off!.push({ start: '2026-12-02T00:00', end: '2026-12-03T00:00', reason: 'Holiday' });
    off = await startTestApp({ catalogues: [catalogue] });
    offMcp = await connectInProcess(off, off.keys.readWrite);
  });
  afterAll(async () => {
    await offMcp.close();
    await off.close();
  });

  it('says the salon is closed, not open for others, when nobody at all works there that day', async () => {
    const found = await offMcp.call('find_slots', {
      location: 'camden',
      services: 'beard',
      date: '2 December',
    });
    expect(found).toMatchObject({ ok: false, code: 'no_slots', reason: 'closed' });
    expect(found.hint).toBe(
      'Northside Camden is closed on Wednesday 2 December (nobody who does that works then); offer the nearest free times in alternatives.',
    );
    const booked = await offMcp.call('book', {
      location: 'camden',
      services: 'beard',
      starts_at: '2 December at 11am',
      client: NEW_CALLER,
    });
    expect(booked).toMatchObject({ ok: false, code: 'conflict', reason: 'closed' });
    expect(booked.hint).toBe(
      'Northside Camden is closed on Wednesday 2 December (nobody who does that works that day); offer the nearest free times in alternatives.',
    );
  });
});

describe('clients', () => {
  it('finds a caller by a national phone number or e-mail, with upcoming bookings', async () => {
    const byPhone = await mcp.call('lookup_client', { phone: '07911 123456' });
    expect(byPhone.client).toMatchObject({
      first_name: 'Jo',
      last_name: 'Bloggs',
      phone: '+447911123456',
      phone_spoken: '0 7 9 1 1, 1 2 3 4 5 6',
    });
    expect(byPhone.upcoming_bookings).toEqual([]);
    const byEmail = await mcp.call('lookup_client', { email: ' JO.Bloggs@Example.com ' });
    expect(byEmail.client.id).toBe(byPhone.client.id);
  });

  it('answers nobody on file, a misheard number and a missing contact', async () => {
    const nobody = await mcp.call('lookup_client', { phone: '+44 7912 345678' });
    expect(nobody).toMatchObject({ ok: false, code: 'not_found' });
    expect(nobody.hint).toMatch(/ask whether they booked with another number or e-mail/);
    const misheard = await mcp.call('lookup_client', { phone: '07911 12' });
    expect(misheard).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(misheard.hint).toMatch(/digit by digit/);
    expect(errorText(await mcp.raw('lookup_client', {}))).toMatch(/phone: give a phone number or an e-mail/);
  });

  it('registers a caller once: the second time gives the same client', async () => {
    const caller = { first_name: 'Rae', last_name: 'Khan', phone: '07911 223344' };
    const first = await mcp.call('register_client', caller);
    expect(first).toMatchObject({ ok: true, created: true, client: { phone: '+447911223344' } });
    const again = await mcp.call('register_client', { ...caller, phone: '+447911223344' });
    expect(again).toMatchObject({ created: false, client: { id: first.client.id } });
  });
});

describe('book', () => {
  it('books a new caller, reads the reference back, and makes one booking however often it is retried', async () => {
    const args = {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T16:00:00+00:00',
      client: NEW_CALLER,
    };
    const before = await countBookings(t.database.db);
    const first = await mcp.call('book', args);
    expect(first).toMatchObject({
      ok: true,
      status: 'confirmed',
      payment_url: null,
      booking: {
        location_name: 'Northside Camden',
        service_names: ['Cut & blow-dry'],
        starts_at: '2026-11-24T16:00:00+00:00',
      },
    });
    const { reference } = first.booking;
    expect(first.booking.reference_spoken).toBe(reference.split('').join(' ').replace('-', 'dash'));
    expect(first.spoken).toBe(
      `Booked: Cut & blow-dry with ${first.booking.staff_name} at Northside Camden, tomorrow, Tuesday 24 November at 4 pm. The reference is ${first.booking.reference_spoken}. Confirmation sent to the number ending 3457.`,
    );
    const again = await mcp.call('book', args);
    const reworded = await mcp.call('book', {
      ...args,
      services: ['Cut & Blow-Dry'],
      location: 'Northside Camden',
    });
    expect(again.booking.reference).toBe(reference);
    expect(reworded.booking.reference).toBe(reference);
    expect(await countBookings(t.database.db)).toBe(before + 1);
  });

  it('books again after the first booking of the same request was cancelled', async () => {
    const args = {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T10:00:00+00:00',
      client: NEW_CALLER,
    };
    const first = await mcp.call('book', args);
    await mcp.call('cancel', { reference: first.booking.reference });
    const second = await mcp.call('book', args);
    expect(second.ok).toBe(true);
    expect(second.booking.reference).not.toBe(first.booking.reference);
    expect(second.booking.status).toBe('confirmed');
  });

  it('asks for a deposit with a payment link', async () => {
    const result = await mcp.call('book', {
      location: 'camden',
      services: 'full colour',
      starts_at: '2026-11-25T14:00:00+00:00',
      client: NEW_CALLER,
    });
    expect(result).toMatchObject({
      ok: true,
      status: 'pending_payment',
      booking: { deposit: { amount: 2000, currency: 'GBP' }, deposit_status: 'pending' },
      payment_url: expect.stringMatching(/^http:\/\/localhost:8080\/checkout\//),
    });
    expect(result.spoken).toMatch(/ for the deposit of 20 pounds, not yet booked: /);
    // The link went to the caller's phone with the booking (the outbox), and the answer says so.
    expect(result.spoken).toMatch(/Link sent to the number ending 3457\.$/);
    expect(result.hint).toBeUndefined();
  });

  it('offers the nearest free times when the slot was just taken', async () => {
    const taken = {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: '2026-11-26T14:00:00+00:00',
    };
    await mcp.call('book', { ...taken, client: NEW_CALLER });
    const result = await mcp.call('book', {
      ...taken,
      client: { first_name: 'Al', last_name: 'Ng', email: 'al@example.com' },
    });
    expect(result).toMatchObject({ ok: false, code: 'conflict' });
    expect(result.hint).toMatch(/already booked; apologise and offer the nearest free times/);
    const times = result.alternatives.map((s: Json) => s.starts_at);
    expect(times).toHaveLength(3);
    expect(times).not.toContain('2026-11-26T14:00:00+00:00');
    // Ben is busy 14:00-15:10 (an hour and the 10-minute buffer); a cut ends 10 minutes before his next.
    expect(times.map(localTime)).toEqual(['12:30', '12:45', '15:15']);
    expect(new Set(result.alternatives.map((s: Json) => s.staff_name))).toEqual(new Set(['Ben Carter']));
  });

  it('says a time has passed rather than that it was taken', async () => {
    const result = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-23T08:00:00+00:00',
      client: NEW_CALLER,
    });
    expect(result).toMatchObject({ ok: false, code: 'conflict' });
    expect(result.hint).toBe('That time has already passed; offer the nearest free times in alternatives.');
    expect(result.alternatives[0].starts_at).toBe('2026-11-23T10:00:00+00:00');
  });

  it('holds a protected location for the booking page, saying the outbox sent its link', async () => {
    const slots = await mcp.call('find_slots', { location: 'islington', services: 'cut', date: 'wednesday' });
    expect(slots.ok).toBe(true);
    const result = await mcp.call('book', {
      location: 'islington',
      services: 'cut',
      starts_at: slots.slots[0].starts_at,
      client: NEW_CALLER,
    });
    expect(result).toMatchObject({ ok: true, status: 'pending_confirmation' });
    expect(result.booking.pending_confirmation.requirements).toEqual(['protection_setup']);
    expect(result.booking_page_url).toMatch(/^http:\/\/localhost:8080\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    expect(result.spoken).toMatch(
      /Booking Protection: please save a card on the booking page to confirm it\. A late cancellation \(less than 2 days before\) costs \d+ pounds, and a no-show \d+ pounds\. Link sent to the number ending \d{4}\.$/,
    );
  });

  it('needs a client, and a start it can read', async () => {
    const noClient = await mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T16:30:00Z',
    });
    expect(errorText(noClient)).toMatch(/client_id: give client_id/);
    const badStart = await mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'half past',
      client: NEW_CALLER,
    });
    expect(errorText(badStart)).toMatch(/starts_at: give starts_at as find_slots returned it/);
  });
});

describe('get_booking, reschedule and cancel', () => {
  async function bookJo(startsAt: string) {
    const jo = await mcp.call('lookup_client', { phone: '+447911123456' });
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'amara',
      starts_at: startsAt,
      client_id: jo.client.id,
    });
    expect(booked.ok).toBe(true);
    return booked.booking.reference as string;
  }

  it('reads a booking back by its reference in any case', async () => {
    const reference = await bookJo('2026-11-27T09:00:00+00:00');
    const result = await mcp.call('get_booking', { reference: reference.toLowerCase() });
    expect(result.booking).toMatchObject({ reference, staff_name: 'Amara Okafor', status: 'confirmed' });
    expect(result.spoken).toBe(
      `Booked: Cut & blow-dry with Amara Okafor at Northside Camden, Friday 27 November at 9 am. The reference is ${result.booking.reference_spoken}.`,
    );
    const unknown = await mcp.call('get_booking', { reference: 'NHC-ZZZZZZ' });
    expect(unknown).toMatchObject({ ok: false, code: 'not_found' });
    expect(unknown.hint).toMatch(/^No booking has the reference NHC-ZZZZZZ/);
  });

  it('moves a booking, refuses a taken time with alternatives, and a late change per policy', async () => {
    const reference = await bookJo('2026-11-30T09:00:00+00:00');
    const moved = await mcp.call('reschedule', { reference, starts_at: '2026-11-30T11:00:00+00:00' });
    expect(moved.booking).toMatchObject({
      starts_at: '2026-11-30T11:00:00+00:00',
      staff_name: 'Amara Okafor',
    });
    expect(moved.spoken).toBe(
      'Moved: Cut & blow-dry with Amara Okafor at Northside Camden, Monday 30 November at 11 am. New time sent to the number ending 3456 and by e-mail.',
    );

    const other = await bookJo('2026-11-30T15:00:00+00:00');
    const clash = await mcp.call('reschedule', { reference: other, starts_at: '2026-11-30T11:30:00+00:00' });
    expect(clash).toMatchObject({ ok: false, code: 'conflict' });
    expect(clash.alternatives.length).toBeGreaterThan(0);

    // Camden forbids changes less than 24 hours before the appointment.
    t.clock.set('2026-11-29T12:00:00Z');
    const late = await mcp.call('reschedule', { reference, starts_at: '2026-11-30T16:00:00+00:00' });
    expect(late).toMatchObject({ ok: false, code: 'conflict' });
    expect(late.hint).toBe(
      'Changes less than 24 hours before the appointment are not allowed here. The appointment stays as it is; offer to pass a message to the salon on 0 2 0, 7 4 8 5, 0 0 0 0.',
    );
  });

  it('says a move to the time the booking has changes nothing, also when called again inside the window', async () => {
    const reference = await bookJo('2026-12-02T09:00:00+00:00');
    const move = { reference, starts_at: '2026-11-24T12:00:00+00:00' };
    expect((await mcp.call('reschedule', move)).spoken).toMatch(/^Moved: .* New time sent to/);
    // The host calls again (a retry), now less than 24 hours before: Camden forbids late changes.
    t.clock.set('2026-11-24T09:00:00Z');
    const again = await mcp.call('reschedule', move);
    expect(again).toMatchObject({
      ok: true,
      dry_run: false,
      late: false,
      booking: { starts_at: '2026-11-24T12:00:00+00:00' },
    });
    expect(again.spoken).toBe(
      'That is the time it already has, so nothing changed: Cut & blow-dry with Amara Okafor at Northside Camden, today, Tuesday 24 November at noon.',
    );
    const asked = await mcp.call('reschedule', { ...move, starts_at: 'today at noon', dry_run: true });
    expect(asked.spoken).toBe(again.spoken);
    expect(asked.hint).toBeUndefined();
  });

  it('cancels, and says when a booking can no longer be changed', async () => {
    const reference = await bookJo('2026-12-01T09:00:00+00:00');
    const cancelled = await mcp.call('cancel', { reference, reason: 'Caller is unwell' });
    expect(cancelled).toMatchObject({
      ok: true,
      dry_run: false,
      late: false,
      deposit_refunded: null,
      fee: null,
      booking: { status: 'cancelled' },
    });
    expect(cancelled.spoken).toBe(
      'Cancelled: Cut & blow-dry with Amara Okafor at Northside Camden, Tuesday 1 December at 9 am. Cancellation sent to the number ending 3456 and by e-mail.',
    );
    // Asked again (a retry): done already, said as done.
    const again = await mcp.call('cancel', { reference });
    expect(again).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
    expect(again.hint).toBe(
      'That booking (Tuesday 1 December at 9 am) is already cancelled, so nothing more needs doing; tell the caller it is cancelled.',
    );
    const moved = await mcp.call('reschedule', { reference, starts_at: '2026-12-01T10:00:00+00:00' });
    expect(moved.hint).toBe(
      'That booking is cancelled and can no longer be changed; check the details with the caller.',
    );
  });
});

describe('keys, scopes and limits', () => {
  it('lets a read key look things up but not book', async () => {
    const reader = await connectInProcess(t, t.keys.read);
    try {
      expect(
        (await reader.call('find_slots', { location: 'camden', services: 'cut', date: 'tomorrow' })).ok,
      ).toBe(true);
      const refused = await reader.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-24T17:00:00+00:00',
        client: NEW_CALLER,
      });
      expect(errorText(refused)).toBe(
        'This assistant may only look things up: it cannot change bookings or take a message; ask the caller to contact the salon for that.',
      );
      // Not sent to take_message, which this key is refused too.
      const message = await reader.raw('take_message', { caller_name: 'Pat', message: 'Call me back' });
      expect(errorText(message)).toBe(errorText(refused));
    } finally {
      await reader.close();
    }
  });

  it('stops a key the moment it is revoked, and refuses an unknown one', async () => {
    const key = await t.keyFor('northside-hair', 'read');
    const agent = await connectInProcess(t, key);
    try {
      expect((await agent.call('list_locations')).ok).toBe(true);
      const row = await t.database.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_hash', '=', hashApiKey(key))
        .executeTakeFirstOrThrow();
      await revokeApiKey(t.database.db, row.id, t.clock.nowMs());
      expect(errorText(await agent.raw('list_locations'))).toMatch(/rejected its API key/);
    } finally {
      await agent.close();
    }
    const stranger = await connectInProcess(t, `bk_${'x'.repeat(40)}`);
    try {
      expect(errorText(await stranger.raw('list_locations'))).toMatch(/rejected its API key/);
    } finally {
      await stranger.close();
    }
  });

  it('counts each tool call against the key’s rate limit and says how long to wait', async () => {
    const agent = await connectInProcess(t, await t.keyFor('northside-hair', 'read', 2));
    try {
      await agent.call('list_locations');
      await agent.call('list_locations');
      const limited = await agent.call('list_locations');
      expect(limited).toMatchObject({ ok: false, code: 'rate_limited' });
      expect(limited.hint).toBe(
        'The booking system is busy; ask the caller to hold, wait 60 seconds, then try again.',
      );
      t.clock.advance({ seconds: 60 });
      expect((await agent.call('list_locations')).ok).toBe(true);
    } finally {
      await agent.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { demoMcp, errorText } from '../helpers/mcp-harness.ts';

/**
 * Arguments an agent should not send but will: words where an id belongs, and names far longer than
 * any name. Each is answered with a short hint, never REST's validation text or the words echoed whole.
 */
const demo = demoMcp();

describe('odd arguments', () => {
  it('says where a client id comes from when given a name instead', async () => {
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T16:00:00+00:00',
      client_id: 'jo bloggs',
    });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /client_id: give the client_id lookup_client or register_client returned/,
    );
    expect(errorText(result)).not.toMatch(/UUID/);
  });

  it('takes a client id in capitals as the id it is', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const booked = await demo.mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-24T17:00:00+00:00',
      client_id: jo.client.id.toUpperCase(),
    });
    expect(booked).toMatchObject({ ok: true, booking: { client_id: jo.client.id } });
  });

  it.each([
    ['find_slots', { location: 'x'.repeat(50_000), services: 'cut', date: 'tomorrow' }],
    ['find_slots', { location: 'camden', services: 'y'.repeat(50_000), date: 'tomorrow' }],
    ['find_slots', { location: 'camden', services: 'cut', staff: 'z'.repeat(50_000), date: 'tomorrow' }],
    ['list_services', { location: 'x'.repeat(50_000) }],
  ])('quotes back at most 60 characters of an unknown name (%s)', async (tool, args) => {
    const result = await demo.mcp.call(tool, args);
    expect(result.ok).toBe(false);
    expect(result.hint.length).toBeLessThan(300);
    expect(result.hint).toMatch(/"[xyz]{60}…"/);
  });

  it('takes an argument it does not know sent as null as left out, as it takes null for one it knows', async () => {
    const found = await demo.mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: '2026-11-25',
      dry_run: null,
    });
    expect(found.ok).toBe(true);
  });

  it('refuses an argument the tool does not take, and does nothing: book with dry_run books nothing', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T10:00:00+00:00',
      client_id: jo.client.id,
      dry_run: true,
    });
    expect(errorText(result)).toMatch(/book: dry_run is not an argument of book; nothing was done/);
    expect(errorText(result)).toMatch(/its arguments are location, services, starts_at/);
    const after = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const starts = after.upcoming_bookings.map((booking: { starts_at: string }) => booking.starts_at);
    expect(starts).not.toContain('2026-11-25T10:00:00+00:00');
  });

  it('names every argument it does not take', async () => {
    const result = await demo.mcp.raw('cancel', { reference: 'NHC-ABCDEF', dryrun: true, fee: 0 });
    expect(errorText(result)).toMatch(/cancel: dryrun and fee are not arguments of cancel; nothing was done/);
  });

  // docs/mcp.md: "An argument error names every bad argument at once": an unknown one beside others
  // used to be the only one named, the notes over their limit said only once dry_run was dropped.
  it('names the other bad arguments beside one it does not take', async () => {
    const booked = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T10:00:00+00:00',
      client: { first_name: 'Ada', last_name: 'Quist', phone: '07911 123998', nickname: 'Ad' },
      notes: 'x'.repeat(1001),
      dry_run: true,
    });
    const said = errorText(booked);
    expect(said).toMatch(/ book has 2 bad arguments: /);
    expect(said).toMatch(/dry_run and client\.nickname are not arguments of book; nothing was done/);
    expect(said).toMatch(/notes is at most 1000 characters/);
    const cancelled = errorText(
      await demo.mcp.raw('cancel', { reference: 'NHC-ABCDEF', dry_run: 'yes', foo: 1 }),
    );
    expect(cancelled).toMatch(/ cancel has 2 bad arguments: /);
    expect(cancelled).toMatch(/foo is not an argument of cancel/);
    expect(cancelled).toMatch(/dry_run is /);
    const after = await demo.mcp.call('lookup_client', { phone: '07911 123998' });
    expect(after).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses a member client does not take, naming it and the members it takes, and books nothing', async () => {
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T11:00:00+00:00',
      client: {
        first_name: 'Ada',
        last_name: 'Quist',
        phone: '07911 123999',
        email_address: 'ada@example.com',
      },
    });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /book: client\.email_address is not a member of client; nothing was done \(client takes first_name, last_name, phone, email\)/,
    );
    // Nothing was done: no client was registered with that phone.
    const after = await demo.mcp.call('lookup_client', { phone: '07911 123999' });
    expect(after).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses a member repeat does not take, and books no series', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T12:00:00+00:00',
      client_id: jo.client.id,
      repeat: { every_weeks: 2, count: 3, until: '2027-01-31' },
    });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /book: repeat\.until is not a member of repeat; nothing was done \(repeat takes every_weeks, count\)/,
    );
    const after = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const starts = after.upcoming_bookings.map((booking: { starts_at: string }) => booking.starts_at);
    expect(starts).not.toContain('2026-11-25T12:00:00+00:00');
  });

  it('names unknown members beside unknown arguments, in join_waitlist too', async () => {
    const result = await demo.mcp.raw('join_waitlist', {
      location: 'camden',
      services: 'cut',
      from_date: '2026-11-30',
      to_date: '2026-12-04',
      client: { first_name: 'Ada', last_name: 'Quist', mobile: '07911 123999' },
      priority: 'high',
    });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /join_waitlist: priority and client\.mobile are not arguments of join_waitlist; nothing was done/,
    );
    expect(errorText(result)).toMatch(/client takes first_name, last_name, phone, email/);
  });

  it('takes a member client does not know sent as null as left out', async () => {
    const booked = await demo.mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T14:00:00+00:00',
      client: { first_name: 'Ada', last_name: 'Quist', phone: '07911 123998', email_address: null },
      repeat: null,
    });
    expect(booked, JSON.stringify(booked)).toMatchObject({
      ok: true,
      booking: { starts_at: '2026-11-25T14:00:00+00:00' },
    });
  });

  it('refuses names every object has (constructor, toString) as arguments or members it does not take', async () => {
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T16:00:00+00:00',
      constructor: 1,
      client: { first_name: 'Ada', last_name: 'Quist', phone: '07911 123999', toString: 'x' },
    });
    expect(errorText(result)).toMatch(
      /book: constructor and client\.toString are not arguments of book; nothing was done/,
    );
  });

  it('refuses client_id and client together, booking for neither', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const result = await demo.mcp.raw('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-25T15:00:00+00:00',
      client_id: jo.client.id,
      client: { first_name: 'Sam', last_name: 'Reed', phone: '07911 123457' },
    });
    expect(errorText(result)).toMatch(/client_id and client are both given/);
    const after = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const starts = after.upcoming_bookings.map((booking: { starts_at: string }) => booking.starts_at);
    expect(starts).not.toContain('2026-11-25T15:00:00+00:00');
    const sam = await demo.mcp.call('lookup_client', { phone: '07911 123457' });
    expect(sam).toMatchObject({ ok: false, code: 'not_found' });
  });
});

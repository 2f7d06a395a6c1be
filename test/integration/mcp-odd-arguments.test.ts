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
});

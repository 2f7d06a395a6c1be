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
});

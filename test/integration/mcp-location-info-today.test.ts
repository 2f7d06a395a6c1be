import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, type Json, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { NEW_YORK } from '../helpers/world-catalogues.ts';

/**
 * get_location_info says a closure is "today" or "tomorrow" by the location's own date, whenever in
 * its day the agent asks, though the tools keep the answer between calls. New York closes on Monday
 * 2 November 2026 (training) and Tuesday 3 November (Election Day); the clock starts on the Sunday
 * evening there, 8 pm EST (01:00 UTC on the Monday: UTC's date has turned, New York's has not).
 * The same barber moved to Chatham (UTC+13:45) is the other way: its date turns at 10:15 UTC, while
 * UTC's stays.
 */
function withClosures(catalogue: unknown, zone?: { timezone: string; slug: string }): unknown {
  const copy = structuredClone(catalogue) as Json;
  copy.locations[0].closures = [
    { date: '2026-11-02', reason: 'Staff training' },
    { date: '2026-11-03', reason: 'Election Day' },
  ];
  if (zone) {
    Object.assign(copy.organisation, { slug: zone.slug, booking_reference_prefix: 'CH' });
    Object.assign(copy.locations[0], { timezone: zone.timezone });
  }
  return copy;
}

let t: TestApp;
let newYork: McpHarness;
let chatham: McpHarness;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: [
      withClosures(NEW_YORK),
      withClosures(NEW_YORK, { timezone: 'Pacific/Chatham', slug: 'chatham' }),
    ],
    now: '2026-11-02T01:00:00Z',
  });
  newYork = await connectInProcess(t, t.keys.readWrite);
  chatham = await connectInProcess(t, await t.keyFor('chatham'));
});
afterAll(async () => {
  await newYork.close();
  await chatham.close();
  await t.close();
});

const closuresSaid = async (mcp: McpHarness) =>
  ((await mcp.call('get_location_info', {})).closures as Json[]).map((c) => c.spoken);

describe('get_location_info on the day after the agent last asked', () => {
  it("names New York's closures from its own date once it turns, not from UTC's", async () => {
    expect(await closuresSaid(newYork)).toEqual([
      'tomorrow, Monday, November 2 (Staff training)',
      'Tuesday, November 3 (Election Day)',
    ]);
    // Monday 9 am in New York, the same UTC date as before.
    t.clock.set('2026-11-02T14:00:00Z');
    expect(await closuresSaid(newYork)).toEqual([
      'today, Monday, November 2 (Staff training)',
      'tomorrow, Tuesday, November 3 (Election Day)',
    ]);
  });

  it("names Chatham's closures from its own date once it turns ahead of UTC's", async () => {
    // Sunday 1 November, 9:45 pm in Chatham (08:00 UTC).
    t.clock.set('2026-11-01T08:00:00Z');
    expect(await closuresSaid(chatham)).toEqual([
      'tomorrow, Monday, November 2 (Staff training)',
      'Tuesday, November 3 (Election Day)',
    ]);
    // Monday 12:45 am in Chatham (11:00 UTC, still 1 November there).
    t.clock.set('2026-11-01T11:00:00Z');
    expect(await closuresSaid(chatham)).toEqual([
      'today, Monday, November 2 (Staff training)',
      'tomorrow, Tuesday, November 3 (Election Day)',
    ]);
  });
});

describe("find_slots at Chatham, by Chatham's own zone names", () => {
  it('reads an earliest said in CHADT, as the tools themselves say times there', async () => {
    t.clock.set('2026-11-02T01:00:00Z');
    const found = await chatham.raw('find_slots', {
      services: "men's cut",
      date: '2026-11-04',
      earliest: '3 pm CHADT',
    });
    expect(found.isError, JSON.stringify(found)).toBeFalsy();
    const slots = (found.structuredContent as Json).slots as Json[];
    for (const slot of slots) expect(slot.starts_at >= '2026-11-04T15:00:00+13:45').toBe(true);
    // The name of the other half of the year is asked about, as BST in a London winter is.
    const winter = await chatham.raw('find_slots', {
      services: "men's cut",
      date: '2026-11-04',
      earliest: '3 pm CHAST',
    });
    expect(winter.isError).toBe(true);
    expect(JSON.stringify(winter.content)).toContain('Chatham is on CHADT, not CHAST, then');
  });
});

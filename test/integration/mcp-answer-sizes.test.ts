import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeQuestion, largestFindSlotsAnswer } from '../../bench/lib/find-slots-sizes.ts';
import { connectInProcess, demoCatalogue, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Issue 15: a voice agent keeps every character of a tool's answer in its context, so a five-slot
 * find_slots answer stays under 1,500 characters of JSON, the largest the demo catalogue gives: every
 * location, service and pair of services, day and part of the day of a week (bench/lib/find-slots-sizes.ts,
 * which `mcp-round-trips` reports too). The clock stands on Tuesday 28 September 2027, 08:00 in London,
 * so the days are said with the longest words the calendar has ("tomorrow, Wednesday 29 September").
 * The largest is Islington's (Booking Protection: a card on file and its fees) for two services, one
 * with a deposit, over two days: it was 2,286 characters when each answer repeated its price, deposit,
 * terms, duration, location and services beside `spoken`, which says them.
 */
describe('find_slots answers an agent can afford', () => {
  let t: TestApp;
  let mcp: McpHarness;
  beforeAll(async () => {
    t = await startTestApp({
      catalogues: [demoCatalogue()],
      now: '2027-09-28T07:00:00Z',
      limits: { requestsPerMinute: 100_000 },
    });
    mcp = await connectInProcess(t, t.keys.readWrite);
  });
  afterAll(async () => {
    await mcp.close();
    await t.close();
  });

  it('the largest five-slot answer of the demo catalogue is under 1,500 characters of JSON', async () => {
    const largest = await largestFindSlotsAnswer((tool, args) => mcp.call(tool, args), '2027-09-28');
    expect(largest.size, `${describeQuestion(largest.args)}: ${JSON.stringify(largest.answer)}`).toBeLessThan(
      1_500,
    );
    // The scan reached the answers that say the most: Booking Protection with a deposit.
    expect(largest.measured).toBeGreaterThan(100);
    expect(largest.answer.spoken).toContain('with a card on file and a deposit of 20 pounds');
  });

  it('keeps what design.md names, and says everything the caller hears in spoken', async () => {
    const found = await mcp.call('find_slots', {
      location: 'islington',
      services: ['cut', 'colour'],
      date: 'tomorrow',
    });
    expect(Object.keys(found).sort()).toEqual(['more_available', 'ok', 'slots', 'spoken']);
    expect(found.slots).toHaveLength(5);
    for (const slot of found.slots) {
      expect(Object.keys(slot).sort()).toEqual(['ends_at', 'spoken', 'staff_id', 'staff_name', 'starts_at']);
      expect(slot.spoken).toMatch(/^tomorrow, Wednesday 29 September at \d/);
      expect(found.spoken).toContain(slot.spoken.split(' at ')[1]);
    }
    expect(found.spoken).toBe(
      'Chloé Martin is free tomorrow, Wednesday 29 September at 9 am, 9:30 am, 10 am, 10:30 am or 11 am. ' +
        'There are other times too. Cut & blow-dry and Full colour take 2 hours 45 minutes and cost 157 pounds. ' +
        "You'd finish booking online with a card on file and a deposit of 20 pounds; cancelling less than " +
        '2 days before costs 50% and a no-show 100% of the price.',
    );
  });
});

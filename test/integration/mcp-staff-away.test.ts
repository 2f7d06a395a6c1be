import { describe, expect, it } from 'vitest';
import { demoMcp } from '../helpers/mcp-harness.ts';

/**
 * A stylist away on a day they usually work (time off: Amara Okafor, 24 to 28 December in the demo
 * catalogue, usually in on Thursdays and Mondays). The hint says they are off that day, not "does not
 * work on Thursday 24 December; works ... Thursday 11 am to 8 pm", which an agent reads out as a
 * contradiction. Through the SDK's client; Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();

describe('a stylist off on a day they usually work', () => {
  it('find_slots says they are off that day and usually work then', async () => {
    const found = await demo.mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: '2026-12-24',
      staff: 'Amara',
    });
    expect(found).toMatchObject({ ok: false, reason: 'staff_not_working' });
    expect(found.hint).toMatch(/^Amara Okafor is off on Thursday 24 December; Amara Okafor usually works /);
    expect(found.hint).not.toMatch(/does not work/);
  });

  it('book says the same of a time that day', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const refused = await demo.mcp.call('book', {
      location: 'camden',
      services: 'cut',
      staff: 'Amara',
      starts_at: '2026-12-24T12:00:00+00:00',
      client_id: jo.client.id,
    });
    expect(refused).toMatchObject({ ok: false, reason: 'staff_not_working' });
    expect(refused.hint).toMatch(/^Amara Okafor is off then; Amara Okafor usually works /);
  });

  it('a weekday they never work is still said as not working then', async () => {
    const found = await demo.mcp.call('find_slots', {
      location: 'camden',
      services: 'cut',
      date: '2026-12-05',
      staff: 'Amara',
    });
    expect(found.hint).toMatch(/^Amara Okafor does not work on Saturday 5 December; Amara Okafor works /);
  });

  it('a misspelt stylist off on a day the salon is open, though nobody else does that service then', async () => {
    // Chloé Martin does colour at Islington Tuesday to Thursday and Saturday; on Mondays Ben Carter is
    // in, but he does no colour. The caller asked for Chloé: that is her day off, not the salon closed.
    const found = await demo.mcp.call('find_slots', {
      location: 'islington',
      services: 'colour',
      date: '2026-11-30',
      staff: 'Cloe',
    });
    expect(found).toMatchObject({ ok: false, code: 'conflict', reason: 'staff_not_working' });
    expect(found.hint).toMatch(
      /^Chloé Martin does not work on Monday 30 November; Chloé Martin works Tuesday to Thursday .* at Northside Islington; /,
    );
    expect(found.alternatives.every((s: { staff_name: string }) => s.staff_name === 'Chloé Martin')).toBe(
      true,
    );
  });

  it("book offers a stylist's times beyond the next day, not none", async () => {
    // Ben Carter is at Islington on Mondays, Wednesdays and Fridays: asked for there on a Saturday
    // (the salon open, Sunday closed), his Monday there is offered.
    const refused = await demo.mcp.call('book', {
      location: 'islington',
      services: 'cut',
      staff: 'Ben',
      starts_at: 'Saturday at 11',
      client: { first_name: 'Sam', last_name: 'Lee', phone: '07400 123456' },
    });
    expect(refused, JSON.stringify(refused)).toMatchObject({ ok: false, reason: 'staff_not_working' });
    expect(refused.alternatives.length, JSON.stringify(refused)).toBeGreaterThan(0);
    expect(refused.alternatives[0].spoken).toMatch(/^Monday 30 November at /);
    expect(refused.alternatives.every((s: { staff_name: string }) => s.staff_name === 'Ben Carter')).toBe(
      true,
    );
    expect(refused.hint).toMatch(/offer Ben Carter's nearest free times in alternatives/);
  });
});

import { describe, expect, it } from 'vitest';
import { connectOverRest, demoMcp, type McpHarness } from '../helpers/mcp-harness.ts';

/**
 * A host retries a cancel whose answer it lost (a dropped connection): the booking is cancelled by the
 * first call, and the second is refused as the engine refuses any change to a booking no longer live
 * (conflict, not_changeable). Its hint must not read as a failure: the agent tells the caller the
 * booking is cancelled. In process and over REST (`booking mcp --base-url`); the demo catalogue, the
 * clock at Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();

async function bookAndCancelTwice(mcp: McpHarness, startsAt: string) {
  const jo = await mcp.call('lookup_client', { phone: '+447911123456' });
  const booked = await mcp.call('book', {
    location: 'camden',
    services: 'cut',
    starts_at: startsAt,
    client_id: jo.client.id,
  });
  expect(booked.ok, JSON.stringify(booked)).toBe(true);
  const { reference } = booked.booking;
  const first = await mcp.call('cancel', { reference });
  expect(first).toMatchObject({ ok: true, booking: { status: 'cancelled' } });
  return { reference, again: await mcp.call('cancel', { reference }) };
}

describe('a repeated cancel', () => {
  it.each([
    ['in process', '2026-11-26T10:00:00+00:00'],
    ['over REST', '2026-11-26T11:00:00+00:00'],
  ])('says the booking is already cancelled, not that it cannot be changed (%s)', async (how, startsAt) => {
    const mcp = how === 'over REST' ? await connectOverRest(demo.t) : demo.mcp;
    try {
      const { again } = await bookAndCancelTwice(mcp, startsAt);
      expect(again).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
      expect(again.hint).toMatch(/already cancelled/i);
      expect(again.hint).toMatch(/Thursday 26 November/);
      expect(again.hint).not.toMatch(/can no longer be changed|check the details/);
    } finally {
      if (mcp !== demo.mcp) await mcp.close();
    }
  });

  it('a move of a cancelled booking is still told it is cancelled and cannot be changed', async () => {
    const { reference } = await bookAndCancelTwice(demo.mcp, '2026-11-26T12:00:00+00:00');
    const moved = await demo.mcp.call('reschedule', { reference, starts_at: '2026-11-27T12:00:00+00:00' });
    expect(moved).toMatchObject({ ok: false, code: 'conflict', reason: 'not_changeable' });
    expect(moved.hint).toMatch(/cancelled/);
  });
});

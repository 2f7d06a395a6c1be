import { describe, expect, it } from 'vitest';
import { demoMcp } from '../helpers/mcp-harness.ts';

/**
 * A late cancellation at a Booking Protection location of a hold whose customer never saved a card
 * (the booking page not finished): the engine records the fee (REST `late_cancellation_fee`, with
 * `payment_method_saved` false), but there is no card to charge it to. The answer must not tell the
 * caller it "will be charged to the card on file". Through the SDK's client on the demo catalogue
 * (Islington has Booking Protection, a 50% late-cancellation fee); Monday 23 November 2026, 09:00.
 */
const demo = demoMcp();

describe('a late-cancellation fee with no card saved', () => {
  it('is said as due with no card to charge, not as charged to the card on file', async () => {
    const jo = await demo.mcp.call('lookup_client', { phone: '+447911123456' });
    const held = await demo.mcp.call('book', {
      location: 'islington',
      services: 'cut',
      starts_at: '2026-11-24T15:00:00+00:00',
      client_id: jo.client.id,
    });
    expect(held, JSON.stringify(held)).toMatchObject({
      ok: true,
      booking: { status: 'pending_confirmation' },
    });
    const { reference } = held.booking;
    for (const dryRun of [true, false]) {
      const cancelled = await demo.mcp.call('cancel', { reference, dry_run: dryRun });
      expect(cancelled, JSON.stringify(cancelled)).toMatchObject({ ok: true, late: true });
      expect(cancelled.spoken).not.toMatch(/card on file/);
      expect(cancelled.fee).toMatchObject({ amount: 3100, currency: 'GBP' });
      expect(cancelled.spoken).toMatch(/fee of 31 pounds (would be|is) due; no card is saved/);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { demoMcp } from '../helpers/mcp-harness.ts';

/**
 * A late cancellation at a Booking Protection location of a hold whose customer never saved a card
 * (the booking page not finished): its customer never agreed to the fee, and a hold left to lapse
 * costs nothing, so none is owed (docs/payments.md). The answer must not tell the caller of a fee,
 * let alone one "charged to the card on file". Through the SDK's client on the demo catalogue
 * (Islington has Booking Protection, a 50% late-cancellation fee); Monday 23 November 2026, 09:00.
 */
const demo = demoMcp();

describe('a late-cancellation fee with no card saved', () => {
  it('is not owed, and not said', async () => {
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
      expect(cancelled.fee).toBeNull();
      expect(cancelled.spoken).toContain('no fee applies');
      expect(cancelled.spoken).not.toMatch(/card/);
    }
  });
});

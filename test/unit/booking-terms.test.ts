import { describe, expect, it } from 'vitest';
import { feesSentence, protectionTerms } from '../../src/mcp/tools/booking-terms.ts';

describe('Booking Protection terms in words (list_services, get_location_info)', () => {
  it('says each fee with its verb, whichever of the two the policy sets', () => {
    const both = { late_cancellation_fee_percentage: 50, no_show_fee_percentage: 100 };
    expect(protectionTerms(both, 48)).toBe(
      'Booking here is finished online with a card on file (Booking Protection): cancelling less than 2 days before costs 50% and a no-show 100% of the price.',
    );
    expect(protectionTerms({ late_cancellation_fee_percentage: null, no_show_fee_percentage: 100 }, 48)).toBe(
      'Booking here is finished online with a card on file (Booking Protection): a no-show costs 100% of the price.',
    );
    expect(protectionTerms({ late_cancellation_fee_percentage: 30, no_show_fee_percentage: null })).toBe(
      'Booking here is finished online with a card on file (Booking Protection): a late cancellation costs 30% of the price.',
    );
    expect(protectionTerms({ late_cancellation_fee_percentage: null, no_show_fee_percentage: null })).toBe(
      'Booking here is finished online with a card on file (Booking Protection).',
    );
  });
});

describe("a booking's fees in words (book, get_booking)", () => {
  const api = { locationInfo: async () => ({ policy: { cancellation_window_hours: 48 } }) };
  const place = { locale: 'en-GB', location: { slug: 'camden' } };
  const fee = (amount_minor: number) => ({ amount_minor, currency: 'GBP' });
  const say = (booking: object) => feesSentence(api as never, booking as never, place as never);

  it('gives a no-show fee its verb when it is the only fee', async () => {
    expect(await say({ late_cancellation_fee: null, no_show_fee: fee(6200) })).toBe(
      ' A no-show costs 62 pounds.',
    );
    expect(await say({ late_cancellation_fee: fee(3100), no_show_fee: fee(6200) })).toBe(
      ' A late cancellation (less than 2 days before) costs 31 pounds, and a no-show 62 pounds.',
    );
    expect(await say({ late_cancellation_fee: null, no_show_fee: null })).toBe('');
  });

  it('says nothing of a fee of nothing (protection without that fee: fee_percentage null)', async () => {
    expect(await say({ late_cancellation_fee: fee(0), no_show_fee: fee(6200) })).toBe(
      ' A no-show costs 62 pounds.',
    );
    expect(await say({ late_cancellation_fee: fee(0), no_show_fee: fee(0) })).toBe('');
  });
});

import { describe, expect, it } from 'vitest';
import type { Fee } from '../../src/domain/booking/booking.ts';
import { feeWords } from '../../src/http/pages/manage-page.ts';
import { formatter } from '../../src/http/pages/page-shell.ts';

/** A fee on the customer's booking page, as each thing the salon may do with it leaves it. */
describe('feeWords', () => {
  const f = formatter({ locale: 'en-GB', currency: 'GBP', timezone: 'Europe/London' });
  const fee = (status: Fee['status'], depositCreditMinor = 0): Fee => ({
    kind: 'late_cancellation',
    status,
    currency: 'GBP',
    feePercentage: 50,
    amountMinor: 3100,
    depositCreditMinor,
    chargeAmountMinor: Math.max(0, 3100 - depositCreditMinor),
    failureReason: status === 'failed' ? 'card_declined' : null,
    processedAt: status === null ? null : 0,
  });

  it('says what is to be charged, what was, and what was not', () => {
    expect(feeWords(fee(null), f)).toBe(
      '£31.00 (50% of the price): £31.00 to be charged to your saved card.',
    );
    expect(feeWords(fee('charged', 2000), f)).toBe(
      '£31.00 (50% of the price), less the deposit of £20.00 you paid: £11.00 charged to your saved card.',
    );
    expect(feeWords(fee('deposit_covered', 3100), f)).toBe(
      '£31.00 (50% of the price): covered by the deposit you paid; nothing more is charged.',
    );
    expect(feeWords(fee('waived'), f)).toBe(
      '£31.00 (50% of the price): waived by the salon; nothing is charged.',
    );
    // The provider's reason is the salon's to read (the console shows it), not the customer's.
    expect(feeWords(fee('failed'), f)).toBe(
      '£31.00 (50% of the price): £31.00 could not be charged to your saved card; the salon may contact you.',
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateReference } from '../../src/app/booking-reference.ts';
import { computeFee, processedStatus } from '../../src/domain/booking/fees.ts';
import { normaliseReference, REFERENCE_ALPHABET } from '../../src/domain/booking/reference.ts';

describe('fee arithmetic', () => {
  it.each([
    // total, percentage, retained deposit -> amount, credit, charge
    [9500, 50, 0, 4750, 0, 4750],
    [9501, 50, 0, 4751, 0, 4751], // 4750.5 rounds half up
    [9499, 50, 0, 4750, 0, 4750], // 4749.5 rounds half up
    [333, 10, 0, 33, 0, 33], // 33.3 rounds down
    [335, 10, 0, 34, 0, 34], // 33.5 rounds up
    [9500, 100, 2000, 9500, 2000, 7500],
    [9500, 50, 5000, 4750, 4750, 0], // deposit covers it all
    [9500, 0, 2000, 0, 0, 0],
    [0, 100, 0, 0, 0, 0],
  ])(
    'total %i at %i%% with %i retained: %i, credit %i, charge %i',
    (total, pct, deposit, amount, credit, charge) => {
      expect(computeFee(total, pct, deposit)).toEqual({
        amountMinor: amount,
        depositCreditMinor: credit,
        chargeAmountMinor: charge,
      });
    },
  );

  it('never exceeds the total, never credits more than the fee, and adds up', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000_000),
        fc.integer({ min: 0, max: 100 }),
        fc.nat(10_000_000),
        (total, pct, deposit) => {
          const fee = computeFee(total, pct, deposit);
          expect(fee.amountMinor).toBeLessThanOrEqual(total);
          expect(fee.depositCreditMinor).toBeLessThanOrEqual(Math.min(deposit, fee.amountMinor));
          expect(fee.chargeAmountMinor).toBe(fee.amountMinor - fee.depositCreditMinor);
          // Half-up rounding agrees with exact rational arithmetic.
          expect(fee.amountMinor).toBe(Math.min(total, Math.floor((total * pct) / 100 + 0.5)));
        },
      ),
    );
  });

  it('refuses fractional or out-of-range inputs', () => {
    expect(() => computeFee(10.5, 50, 0)).toThrow(RangeError);
    expect(() => computeFee(100, 101, 0)).toThrow(RangeError);
    expect(() => computeFee(100, 50, -1)).toThrow(RangeError);
  });

  it('records deposit_covered when the deposit pays it all, else the charge outcome', () => {
    expect(processedStatus(computeFee(9500, 50, 5000), true)).toBe('deposit_covered');
    expect(processedStatus(computeFee(9500, 50, 2000), true)).toBe('charged');
    expect(processedStatus(computeFee(9500, 50, 2000), false)).toBe('failed');
  });
});

describe('booking references', () => {
  it('are PREFIX-XXXXXX from an alphabet without look-alikes', () => {
    expect(REFERENCE_ALPHABET).not.toMatch(/[01ILO]/);
    for (let i = 0; i < 200; i++) expect(generateReference('NHC')).toMatch(/^NHC-[2-9A-HJKMNP-Z]{6}$/);
  });

  it('match case-insensitively and ignoring spaces', () => {
    expect(normaliseReference(' nhc-7k3 m9p ')).toBe('NHC-7K3M9P');
  });
});

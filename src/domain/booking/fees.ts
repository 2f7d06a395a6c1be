/**
 * Booking Protection fee arithmetic (design.md section 6), on integers only.
 *
 * amount  = min(total, round-half-up(total × percentage / 100))
 * credit  = min(retained deposit, amount)
 * charge  = amount − credit
 */
export interface FeeFigures {
  amountMinor: number;
  depositCreditMinor: number;
  chargeAmountMinor: number;
}

export function computeFee(totalMinor: number, percentage: number, retainedDepositMinor: number): FeeFigures {
  assertWholeNonNegative('total', totalMinor);
  assertWholeNonNegative('retained deposit', retainedDepositMinor);
  if (!Number.isInteger(percentage) || percentage < 0 || percentage > 100) {
    throw new RangeError(`A fee percentage is a whole number from 0 to 100, not ${percentage}`);
  }
  // Half-up rounding of total × p / 100 without floating point: floor((total × p × 2 + 100) / 200).
  const rounded = Math.floor((totalMinor * percentage * 2 + 100) / 200);
  const amountMinor = Math.min(totalMinor, rounded);
  const depositCreditMinor = Math.min(retainedDepositMinor, amountMinor);
  return { amountMinor, depositCreditMinor, chargeAmountMinor: amountMinor - depositCreditMinor };
}

/**
 * What processing a fee records: a fee wholly covered by the retained deposit needs no charge and is
 * deposit_covered; otherwise the card is charged (or the charge fails) for the rest.
 */
export function processedStatus(
  figures: FeeFigures,
  chargeSucceeded: boolean,
): 'charged' | 'deposit_covered' | 'failed' {
  if (figures.chargeAmountMinor === 0 && figures.depositCreditMinor > 0) return 'deposit_covered';
  return chargeSucceeded ? 'charged' : 'failed';
}

function assertWholeNonNegative(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`The ${name} must be a whole number of minor units`);
}

import { AppError } from '../domain/errors.ts';

/**
 * Amounts as Stripe's API counts them. The engine's minor units are those its pages and messages show
 * (Intl's digits for the currency: whole krónur, forints or pesos for ISK, HUF or COP), while Stripe
 * counts most currencies in hundredths, including some shown whole (ISK stays two-decimal there, an ISK
 * amount of 100 being 1 króna), a few in whole units (its zero-decimal list) and five in thousandths.
 * https://docs.stripe.com/currencies
 */
const STRIPE_ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const STRIPE_THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

function stripeDigits(currency: string): number {
  if (STRIPE_ZERO_DECIMAL.has(currency)) return 0;
  return STRIPE_THREE_DECIMAL.has(currency) ? 3 : 2;
}

/** The digits of the engine's minor units, as its pages format them. */
function ourDigits(currency: string): number {
  return (
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  );
}

/** `minor` of our units in Stripe's; payments_unavailable when Stripe cannot state it exactly. */
export function toStripeAmount(minor: number, currency: string): number {
  const code = currency.toUpperCase();
  const shift = stripeDigits(code) - ourDigits(code);
  if (shift >= 0) return minor * 10 ** shift;
  const divisor = 10 ** -shift;
  if (minor % divisor !== 0) {
    throw new AppError(
      'payments_unavailable',
      `Stripe cannot take ${minor} minor units of ${code} exactly; set the amount in whole ${code} hundredths.`,
    );
  }
  return minor / divisor;
}

/** Whether Stripe's `amount` (in its units) is exactly `minor` of ours. */
export function isStripeAmountOf(
  amount: number | null | undefined,
  minor: number,
  currency: string,
): boolean {
  if (amount == null) return false;
  try {
    return toStripeAmount(minor, currency) === amount;
  } catch {
    return false;
  }
}

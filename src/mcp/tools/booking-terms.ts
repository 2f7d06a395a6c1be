import { z } from 'zod';
import type { Service } from '../booking-api.ts';
import type { Place } from '../resolution.ts';
import { speakPrice } from '../speech.ts';

/**
 * What booking these services at this location will ask of the caller, said before they book rather
 * than discovered at `book`: the price, a deposit taken at booking, and a card on file where Booking
 * Protection applies (design.md 8.2).
 */

const SpokenMoney = z.object({ amount: z.int(), currency: z.string(), spoken: z.string() });

export const BookingTerms = {
  price: SpokenMoney.describe("The services' total here."),
  deposit: SpokenMoney.nullable().describe(
    'Taken when booking (the booking is held until it is paid); null when none.',
  ),
  card_required: z
    .boolean()
    .describe('Booking Protection: the caller finishes the booking online with a card on file.'),
  terms_spoken: z
    .string()
    .nullable()
    .describe('The deposit or card requirement in words, to tell the caller first.'),
};

export interface Terms {
  price: z.infer<typeof SpokenMoney>;
  deposit: z.infer<typeof SpokenMoney> | null;
  card_required: boolean;
  terms_spoken: string | null;
}

export function bookingTerms(place: Place, services: readonly Service[]): Terms {
  const currency = services[0]?.price.currency ?? '';
  const money = (amount: number) => ({
    amount,
    currency,
    spoken: speakPrice(amount, currency, place.locale),
  });
  const price = money(services.reduce((total, s) => total + s.price.amount, 0));
  const depositMinor = services.reduce((total, s) => total + (s.deposit?.amount ?? 0), 0);
  const deposit = depositMinor > 0 ? money(depositMinor) : null;
  const protection = place.location.booking_protection_policy;
  const said: string[] = [];
  if (deposit)
    said.push(`A deposit of ${deposit.spoken} is taken when booking; the booking is held until it is paid.`);
  if (protection.applies) said.push(protectionTerms(protection));
  return {
    price,
    deposit,
    card_required: protection.applies,
    terms_spoken: said.length > 0 ? said.join(' ') : null,
  };
}

/** "Booking here needs a card on file: a late cancellation costs 50% and a no-show 100% of the price." */
export function protectionTerms(policy: {
  late_cancellation_fee_percentage: number | null;
  no_show_fee_percentage: number | null;
}): string {
  const fees = [
    policy.late_cancellation_fee_percentage !== null &&
      `a late cancellation costs ${policy.late_cancellation_fee_percentage}%`,
    policy.no_show_fee_percentage !== null && `a no-show ${policy.no_show_fee_percentage}%`,
  ].filter((fee): fee is string => typeof fee === 'string');
  const charges = fees.length > 0 ? `: ${fees.join(' and ')} of the price` : '';
  return `Booking here is finished online with a card on file (Booking Protection)${charges}.`;
}

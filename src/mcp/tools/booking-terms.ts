import { z } from 'zod';
import type { Booking, BookingApi, Service } from '../booking-api.ts';
import type { Place } from '../resolution.ts';
import { speakPrice } from '../speech.ts';
import { speakWindow } from '../spoken-hours.ts';

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

/**
 * `windowHours`: the location's cancellation window, which says what "late" means where Booking
 * Protection charges for it (read from get_location_info's policy only then).
 */
export function bookingTerms(place: Place, services: readonly Service[], windowHours?: number | null): Terms {
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
  if (protection.applies) said.push(protectionTerms(protection, windowHours));
  return {
    price,
    deposit,
    card_required: protection.applies,
    terms_spoken: said.length > 0 ? said.join(' ') : null,
  };
}

/**
 * "Booking here is finished online with a card on file (Booking Protection): a late cancellation
 * (less than 2 days before) costs 50% and a no-show 100% of the price."
 */
export function protectionTerms(
  policy: { late_cancellation_fee_percentage: number | null; no_show_fee_percentage: number | null },
  windowHours?: number | null,
): string {
  const fees = [
    policy.late_cancellation_fee_percentage !== null &&
      `a late cancellation${lateMeans(windowHours)} costs ${policy.late_cancellation_fee_percentage}%`,
    policy.no_show_fee_percentage !== null && `a no-show ${policy.no_show_fee_percentage}%`,
  ].filter((fee): fee is string => typeof fee === 'string');
  const charges = fees.length > 0 ? `: ${fees.join(' and ')} of the price` : '';
  return `Booking here is finished online with a card on file (Booking Protection)${charges}.`;
}

/** " (less than 2 days before)": what late means, where the window is known, as get_location_info says it. */
export function lateMeans(windowHours: number | null | undefined): string {
  if (windowHours === null || windowHours === undefined) return '';
  return ` (less than ${speakWindow(windowHours)} before)`;
}

/**
 * What this booking would cost if cancelled late or missed, where Booking Protection charges the card
 * on file, with what late means (the cancellation window): " A late cancellation (less than 2 days
 * before) costs 31 pounds, and a no-show 62 pounds."; empty without protection.
 */
export async function feesSentence(api: BookingApi, booking: Booking, place: Place): Promise<string> {
  const late = booking.late_cancellation_fee;
  const missed = booking.no_show_fee;
  if (!late && !missed) return '';
  const { policy } = await api.locationInfo(place.location.slug);
  const price = (fee: { amount_minor: number; currency: string }) =>
    speakPrice(fee.amount_minor, fee.currency, place.locale);
  const fees = [
    late && `a late cancellation${lateMeans(policy.cancellation_window_hours)} costs ${price(late)}`,
    missed && `a no-show ${price(missed)}`,
  ].filter((fee): fee is string => typeof fee === 'string');
  const [first, ...rest] = fees.join(', and ');
  return ` ${first!.toUpperCase()}${rest.join('')}.`;
}

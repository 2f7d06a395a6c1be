import type { Booking, BookingApi, Service } from '../booking-api.ts';
import type { Place } from '../resolution.ts';
import { speakDuration, speakPrice } from '../speech.ts';
import { speakWindow } from '../spoken-hours.ts';
import { listed } from '../word-lists.ts';

/**
 * What these services cost here and what booking them asks of the caller, in the words to say before
 * they book rather than discovered at `book` (design.md 8.2): "Full colour takes 1 hour 30 minutes and
 * costs 95 pounds. A deposit of 20 pounds is paid online to confirm the booking."; where Booking
 * Protection applies, the card on file (and any deposit) with what late means and costs: "You'd finish
 * booking online with a card on file and a deposit of 20 pounds; cancelling less than 2 days before
 * costs 50% and a no-show 100% of the price."
 * `windowHours`: the location's cancellation window, which says what "late" means where Booking
 * Protection charges for it (read from get_location_info's policy only then).
 */
export function speakBookingTerms(
  place: Place,
  services: readonly Service[],
  durationMinutes: number,
  windowHours?: number | null,
): string {
  const currency = services[0]?.price.currency ?? '';
  const price = (amount: number) => speakPrice(amount, currency, place.locale);
  const total = services.reduce((sum, s) => sum + s.price.amount, 0);
  const depositMinor = services.reduce((sum, s) => sum + (s.deposit?.amount ?? 0), 0);
  const deposit = depositMinor > 0 ? `a deposit of ${price(depositMinor)}` : null;
  const several = services.length > 1;
  const said = [
    `${listed(services.map((s) => s.name))} ${several ? 'take' : 'takes'} ${speakDuration(durationMinutes)} ` +
      `and ${several ? 'cost' : 'costs'} ${price(total)}.`,
  ];
  const protection = place.location.booking_protection_policy;
  if (protection.applies) {
    const fees = feesInPercent(protection, windowHours);
    said.push(
      `You'd finish booking online with a card on file${deposit ? ` and ${deposit}` : ''}${fees ? `; ${fees}` : ''}.`,
    );
  } else if (deposit) {
    said.push(`${deposit[0]!.toUpperCase()}${deposit.slice(1)} is paid online to confirm the booking.`);
  }
  return said.join(' ');
}

/**
 * "cancelling less than 2 days before costs 50% and a no-show 100% of the price"; "a no-show costs
 * 100% of the price"; empty when Booking Protection charges neither.
 */
function feesInPercent(
  policy: { late_cancellation_fee_percentage: number | null; no_show_fee_percentage: number | null },
  windowHours: number | null | undefined,
): string {
  const late = policy.late_cancellation_fee_percentage;
  const missed = policy.no_show_fee_percentage;
  const cancelling =
    windowHours === null || windowHours === undefined
      ? 'a late cancellation'
      : `cancelling less than ${speakWindow(windowHours)} before`;
  if (late !== null && missed !== null)
    return `${cancelling} costs ${late}% and a no-show ${missed}% of the price`;
  if (late !== null) return `${cancelling} costs ${late}% of the price`;
  if (missed !== null) return `a no-show costs ${missed}% of the price`;
  return '';
}

/**
 * "Booking here is finished online with a card on file (Booking Protection): cancelling less than 2
 * days before costs 50% and a no-show 100% of the price."
 */
export function protectionTerms(
  policy: { late_cancellation_fee_percentage: number | null; no_show_fee_percentage: number | null },
  windowHours?: number | null,
): string {
  const fees = feesInPercent(policy, windowHours);
  return `Booking here is finished online with a card on file (Booking Protection)${fees ? `: ${fees}` : ''}.`;
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
  // A fee of nothing (protection without that fee: fee_percentage null) is no cost to speak of.
  const charged = <T extends { amount_minor: number }>(fee: T | null | undefined) =>
    fee && fee.amount_minor > 0 ? fee : null;
  const late = charged(booking.late_cancellation_fee);
  const missed = charged(booking.no_show_fee);
  if (!late && !missed) return '';
  const { policy } = await api.locationInfo(place.location.slug);
  const price = (fee: { amount_minor: number; currency: string }) =>
    speakPrice(fee.amount_minor, fee.currency, place.locale);
  const fees = [
    late && `a late cancellation${lateMeans(policy.cancellation_window_hours)} costs ${price(late)}`,
    missed && `a no-show ${late ? '' : 'costs '}${price(missed)}`,
  ].filter((fee): fee is string => typeof fee === 'string');
  const [first, ...rest] = fees.join(', and ');
  return ` ${first!.toUpperCase()}${rest.join('')}.`;
}

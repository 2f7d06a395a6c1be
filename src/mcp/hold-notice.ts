import { type HoldStep, holdNotice } from '../domain/booking/holds.ts';
import type { LocationInfo } from './booking-api.ts';

/**
 * A booking its customer finishes through a link (a deposit to pay, Booking Protection's card to save,
 * a public booking's code to enter, a waitlist offer to claim) may need more notice than the location's
 * own (holdNotice, docs/decisions/holds-leave-time-to-finish.md).
 * The tools say what that notice is for, so "bookings there need 15 minutes' notice" is never heard
 * where a cut without a deposit can be booked for now.
 */
export interface HoldNotice {
  minutes: number;
  /** What such a booking waits for, as the tools say it: "a deposit paid first", "a card saved first". */
  needing: string;
}

/** What a hold waits for, as the tools say it. */
const NEEDING: Readonly<Record<HoldStep, string>> = {
  deposit: 'a deposit paid first',
  protection_setup: 'a card saved first',
  contact_verification: 'a code entered first',
  waitlist_claim: 'an offer claimed first',
};

/** What a booking made at this location is held for: under Booking Protection, the card; else a deposit. */
function needingAt(info: LocationInfo): string {
  return NEEDING[info.booking_protection_policy.applies ? 'protection_setup' : 'deposit'];
}

/**
 * The notice the location's held bookings need when it is longer than its own min_notice_minutes, with
 * what they wait for; null when every booking there needs just the location's notice (no deposit and no
 * protection, or a notice already as long).
 */
export function holdNoticeAt(info: LocationInfo): HoldNotice | null {
  const { policy } = info;
  const protectedHere = info.booking_protection_policy.applies;
  if (!protectedHere && info.deposits.length === 0) return null;
  const notice = holdNotice(
    {
      minNoticeMinutes: policy.min_notice_minutes,
      pendingConfirmationHoldMinutes: policy.pending_confirmation_hold_minutes,
      pendingPaymentHoldMinutes: policy.pending_payment_hold_minutes,
      // Not a waitlist offer: a booking the caller makes.
      waitlistOfferMinutes: 0,
    },
    { protection: protectedHere, deposit: true },
  );
  return notice.step ? { minutes: notice.minutes, needing: needingAt(info) } : null;
}

/**
 * What a too_soon refusal's notice was needed for, from the hold the engine names in its details
 * (`hold_step`, the hold that asked the most notice): null when it names none (the location's own
 * notice was what refused it).
 */
export function refusedNoticeNeeding(details: Record<string, unknown>): string | null {
  const step = details.hold_step;
  return typeof step === 'string' && Object.hasOwn(NEEDING, step) ? NEEDING[step as HoldStep] : null;
}

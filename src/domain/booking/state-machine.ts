/** Every booking status of the contract (section 3). */
export const BOOKING_STATUSES = [
  'pending_payment',
  'pending_confirmation',
  'confirmed',
  'needs_checkout',
  'completed',
  'no_show',
  'cancelled',
  'expired',
] as const;

export type BookingStatus = (typeof BOOKING_STATUSES)[number];

/**
 * The booking lifecycle as one table (contract section 3 and design.md section 6). Every status change
 * anywhere goes through `transition`, and every change is written to the event log by the caller.
 */
export type BookingEvent =
  /** The payment provider confirms the deposit. */
  | 'deposit_paid'
  /** The customer finished every outstanding step on the hosted booking page. */
  | 'requirements_completed'
  /** A pending hold lapsed unpaid or unfinished. */
  | 'hold_lapsed'
  | 'cancel'
  | 'reschedule'
  /** Staff: the appointment took place but has not been paid at the till. */
  | 'check_out'
  /** Staff: the appointment was delivered (and paid). */
  | 'complete'
  /** Staff: the client did not come. */
  | 'no_show';

/** Why a booking cannot be cancelled or moved once its time has come (in the 409's message). */
export const ALREADY_STARTED = 'the appointment has already started';

export const LIVE_STATUSES: readonly BookingStatus[] = [
  'pending_payment',
  'pending_confirmation',
  'confirmed',
];

/**
 * When, relative to the appointment, the event may happen. Holds need no timing of their own: a lapsed
 * hold makes the booking effectively expired, which no event but hold_lapsed starts from.
 */
type Timing = 'before_start' | 'after_start' | null;

interface Rule {
  from: readonly BookingStatus[];
  /** null: the status does not change (a reschedule keeps it). */
  to: BookingStatus | null;
  timing: Timing;
}

export const TRANSITIONS: Readonly<Record<BookingEvent, Rule>> = {
  deposit_paid: { from: ['pending_payment'], to: 'confirmed', timing: null },
  requirements_completed: { from: ['pending_confirmation'], to: 'confirmed', timing: null },
  hold_lapsed: { from: ['pending_payment', 'pending_confirmation'], to: 'expired', timing: null },
  cancel: { from: LIVE_STATUSES, to: 'cancelled', timing: 'before_start' },
  reschedule: { from: LIVE_STATUSES, to: null, timing: 'before_start' },
  check_out: { from: ['confirmed'], to: 'needs_checkout', timing: 'after_start' },
  complete: { from: ['confirmed', 'needs_checkout'], to: 'completed', timing: 'after_start' },
  no_show: { from: ['confirmed'], to: 'no_show', timing: 'after_start' },
};

export interface BookingClock {
  status: BookingStatus;
  startsAt: number;
  holdExpiresAt: number | null;
}

export type TransitionResult =
  | { ok: true; from: BookingStatus; to: BookingStatus }
  | { ok: false; reason: string };

/**
 * The status `booking` moves to on `event` at `now`, or why it cannot. A pending booking whose hold has
 * lapsed (or whose start has come) counts as expired even before the sweeper has written that (lazy
 * expiry), so it can be neither paid, confirmed nor cancelled.
 */
export function transition(booking: BookingClock, event: BookingEvent, now: number): TransitionResult {
  const rule = TRANSITIONS[event];
  const status = effectiveStatus(booking, now);
  if (event === 'hold_lapsed') {
    const lapsed = status === 'expired' && booking.status !== 'expired';
    return lapsed
      ? { ok: true, from: booking.status, to: 'expired' }
      : { ok: false, reason: 'the hold has not lapsed' };
  }
  if (!rule.from.includes(status)) {
    return { ok: false, reason: `the booking ${whatBecameOf(status)}` };
  }
  if (rule.timing === 'before_start' && now >= booking.startsAt) {
    return { ok: false, reason: ALREADY_STARTED };
  }
  if (rule.timing === 'after_start' && now < booking.startsAt) {
    return { ok: false, reason: 'the appointment has not started yet' };
  }
  return { ok: true, from: status, to: rule.to ?? status };
}

/**
 * The status as of `now`: a pending booking past its hold is expired, written or not. So is one whose
 * appointment has started, whatever its hold said (one stored before holds ended at the start at the
 * latest): a booking never becomes confirmed once its time has begun.
 */
export function effectiveStatus(booking: BookingClock, now: number): BookingStatus {
  const pending = booking.status === 'pending_payment' || booking.status === 'pending_confirmation';
  const lapsed = (booking.holdExpiresAt !== null && booking.holdExpiresAt <= now) || booking.startsAt <= now;
  return pending && lapsed ? 'expired' : booking.status;
}

/**
 * When the booking last changed as of `now`: its stored updated_at, or, for a hold lapsed that nothing
 * has written expired yet (effectiveStatus), the moment it lapsed (its hold's end, or its start if that
 * came first), since that is when it became expired.
 */
export function effectiveUpdatedAt(booking: BookingClock & { updatedAt: number }, now: number): number {
  if (effectiveStatus(booking, now) === booking.status) return booking.updatedAt;
  const lapsed = Math.min(booking.holdExpiresAt ?? booking.startsAt, booking.startsAt);
  return Math.max(booking.updatedAt, lapsed);
}

/**
 * When a hold made at `now` for `holdMinutes` lapses: after those minutes, or at the appointment's
 * start if that comes first (nothing is confirmed once it has begun).
 */
export function holdEnd(now: number, holdMinutes: number, startsAt: number): number {
  return heldUntil(now + holdMinutes * 60_000, startsAt);
}

/**
 * The least time a customer is left to finish a hold through its link (pay its deposit, save Booking
 * Protection's card) before the appointment starts, unless the hold's own minutes are fewer. A hold
 * ends at the start at the latest, so without it a location with no minimum notice would hold a
 * booking starting now for no time at all, and send a link that can no longer be paid.
 */
export const LEAST_MINUTES_TO_FINISH = 15;

/**
 * The notice a booking needs, in minutes: the location's min_notice_minutes, and for a booking held
 * `holdMinutes` for its customer to finish (null: confirmed at once), enough of that hold before its
 * start (LEAST_MINUTES_TO_FINISH, or the whole hold when it is shorter).
 */
export function noticeMinutes(minNoticeMinutes: number, holdMinutes: number | null): number {
  if (holdMinutes === null) return minNoticeMinutes;
  return Math.max(minNoticeMinutes, Math.min(holdMinutes, LEAST_MINUTES_TO_FINISH));
}

/** A hold's expiry for an appointment starting at `startsAt`: never past it; null (no hold) stays null. */
export function heldUntil<Expiry extends number | null>(expiry: Expiry, startsAt: number): Expiry {
  return (expiry === null ? null : Math.min(expiry, startsAt)) as Expiry;
}

/** Whether the booking is a hold not yet lapsed: waiting for its deposit, or for its customer to finish it. */
export function isHeld(booking: BookingClock, now: number): boolean {
  const status = effectiveStatus(booking, now);
  return status === 'pending_payment' || status === 'pending_confirmation';
}

export function isLive(booking: BookingClock, now: number): boolean {
  return LIVE_STATUSES.includes(effectiveStatus(booking, now));
}

/**
 * What became of a booking, said after "the booking" or "it": "is cancelled", "has already taken
 * place"; never its status as a word ("is no show", "is needs checkout"). The one wording of every
 * refusal that names a status, whoever reads it: a caller through the phone agent, a customer on a
 * page, staff at the command line.
 */
export function whatBecameOf(status: BookingStatus): string {
  switch (status) {
    case 'cancelled':
      return 'is cancelled';
    case 'expired':
      return 'has lapsed (its hold expired)';
    case 'completed':
      return 'has already taken place';
    case 'needs_checkout':
      return 'has already taken place and awaits payment at the desk';
    case 'no_show':
      return 'was missed (marked as a no-show)';
    case 'confirmed':
      return 'is confirmed';
    case 'pending_payment':
      return 'is held until its deposit is paid';
    case 'pending_confirmation':
      return 'is held until the customer confirms it';
  }
}

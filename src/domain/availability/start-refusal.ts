import type { HoldStep } from '../booking/holds.ts';
import type { LocationPolicy } from '../catalogue.ts';
import { counted, possessive } from '../counted.ts';
import type { Refusal } from '../errors.ts';
import { formatLocal } from '../time-format.ts';
import type { StartDiagnosis } from './diagnose-start.ts';
import type { Workplace } from './types.ts';

export type { Workplace };

/** What a refusal's words and details need beyond the diagnosis. */
export interface RefusalContext {
  timezone: string;
  locationName: string;
  policy: Pick<LocationPolicy, 'minNoticeMinutes' | 'maxAdvanceDays' | 'slotIntervalMinutes'>;
  /**
   * The notice the booking needed, when it is not the policy's: longer for a booking its customer
   * finishes through a link before it starts (holdNotice), naming that step.
   */
  notice?: { minutes: number; step: HoldStep | null };
  /** The closure's reason, for a date closed by a closure. */
  closureReason: string | null;
  /**
   * For a date nobody who offers the services works: whether others work at the location that
   * weekday (it opens then, only not for these services), so it is not said to be closed.
   */
  openForOthers?: boolean;
  /** The staff member a staff_not_working refusal names. */
  staff?: { id: string; name: string; workplaces: Workplace[] } | undefined;
}

/**
 * The 409 conflict (as data) for a start that is no slot: the diagnosis's reason, a message a person
 * can act on, `param` (staff_id when the staff member is the problem, else starts_at) and details in
 * snake_case for the faces (a closure's reason, where and when a staff member works, the limits).
 */
export function startRefusal(
  diagnosis: Exclude<StartDiagnosis, { ok: true }>,
  startsAt: number,
  context: RefusalContext,
): Refusal {
  const { policy, locationName } = context;
  switch (diagnosis.reason) {
    case 'too_soon': {
      const notice = context.notice ?? { minutes: policy.minNoticeMinutes, step: null };
      const now = diagnosis.earliest - notice.minutes * 60_000;
      return {
        reason: 'too_soon',
        message:
          // A start at this very instant is bookable with no notice: refused, it needed more.
          startsAt < now
            ? 'That time has already passed.'
            : `That time is too soon: ${notice.step ? `${STEP_BEFORE_START[notice.step]}, so this booking needs` : 'bookings here need'} at least ${possessive(counted(notice.minutes, 'minute'))} notice.`,
        param: 'starts_at',
        details: {
          min_notice_minutes: notice.minutes,
          earliest_starts_at: formatLocal(diagnosis.earliest, context.timezone),
          // Which hold asked for more than the location's notice: what a caller says it is for.
          ...(notice.step && { hold_step: notice.step }),
        },
      };
    }
    case 'too_far_ahead':
      return {
        reason: 'too_far_ahead',
        message: `That date is too far ahead: ${locationName} takes bookings up to ${counted(policy.maxAdvanceDays, 'day')} ahead (until ${diagnosis.lastDate}).`,
        param: 'starts_at',
        details: { max_advance_days: policy.maxAdvanceDays, last_date: diagnosis.lastDate },
      };
    case 'closed': {
      const closure = diagnosis.cause === 'closure';
      const why = closure
        ? context.closureReason
          ? ` (${context.closureReason})`
          : ''
        : ': nobody who offers these services works that day';
      return {
        reason: 'closed',
        message:
          !closure && context.openForOthers
            ? `Nobody who offers these services works at ${locationName} on ${diagnosis.date}, though it is open that day for others.`
            : `${locationName} is closed on ${diagnosis.date}${why}.`,
        param: 'starts_at',
        details: {
          date: diagnosis.date,
          closed_because: diagnosis.cause,
          closure_reason: closure ? context.closureReason : null,
        },
      };
    }
    case 'not_on_grid':
      return {
        reason: 'not_on_grid',
        message: `Appointments here start every ${policy.slotIntervalMinutes} minutes from midnight, local time; that time is not one of them.`,
        param: 'starts_at',
        details: { slot_interval_minutes: policy.slotIntervalMinutes },
      };
    case 'staff_not_working': {
      const staff = context.staff ?? { id: diagnosis.staffId, name: 'That staff member', workplaces: [] };
      const where = staff.workplaces.map(
        (w) =>
          `at ${w.locationName} ${w.hours.map((d) => `${capitalised(d.weekday)} ${d.intervals.map((i) => `${i.start}-${i.end}`).join(', ')}`).join('; ')}`,
      );
      const off = diagnosis.onTimeOff ? ' (time off)' : '';
      return {
        reason: 'staff_not_working',
        message:
          where.length > 0
            ? `${staff.name} does not work then${off}; ${staff.name} works ${where.join(', and ')}.`
            : `${staff.name} does not work then${off}, and has no working hours at the moment.`,
        // The time is what is not offered (design.md 6: param starts_at); who and when they do work
        // is in the reason and details.
        param: 'starts_at',
        details: {
          staff_id: staff.id,
          staff_name: staff.name,
          on_time_off: diagnosis.onTimeOff,
          works: staff.workplaces.map((w) => ({
            location_slug: w.locationSlug,
            location_name: w.locationName,
            hours: w.hours,
          })),
        },
      };
    }
    case 'slot_unavailable':
      if (!diagnosis.outsideHours) return SLOT_UNAVAILABLE;
      // Still slot_unavailable (design 8.2's reasons), but said as it is: nobody is working then.
      return {
        reason: 'slot_unavailable',
        message: `Nobody who offers these services works at that time on ${diagnosis.date}; ask for availability again.`,
        param: 'starts_at',
        details: { date: diagnosis.date, outside_hours: true },
      };
  }
}

/** Why a booking held for its customer needs more notice than the location's, in a refusal's words. */
const STEP_BEFORE_START: Readonly<Record<HoldStep, string>> = {
  deposit: 'its deposit must be paid before the appointment starts',
  protection_setup: 'a card must be saved for Booking Protection before the appointment starts',
  contact_verification: 'the code sent to confirm it must be entered before the appointment starts',
  waitlist_claim: 'an offered time must be claimed before the appointment starts',
};

/** The time is allowed by every rule but not (or no longer) free. */
export const SLOT_UNAVAILABLE: Readonly<Refusal> = {
  reason: 'slot_unavailable',
  message: 'That time is not available; ask for availability again.',
  param: 'starts_at',
};

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

import type { OfferedService } from '../catalogue.ts';

/**
 * Inputs and outputs of the availability engine. Everything is a plain value; instants are epoch
 * milliseconds, local calendar dates are 'YYYY-MM-DD' in the location's time zone, and times of day
 * are minutes since local midnight.
 *
 * The rules (design.md section 6 and docs/decisions/availability-engine.md):
 * - Starts lie on the local wall-clock grid: minute-of-day m with m % slotIntervalMinutes === 0,
 *   counted from local midnight. A wall-clock time that does not exist (spring forward) is never
 *   offered; one that exists twice (fall back) is offered at both instants.
 * - A slot [start, end) is the services back to back in the order given: end = start + the sum of
 *   their durations, in elapsed time. The staff member is busy over the block [start, end + buffer),
 *   buffer being the last service's buffer_after.
 * - [start, end) lies inside one of the staff member's working intervals of the slot's local date (a
 *   day's touching intervals count as one). The buffer may run past the end of working hours.
 *   A working interval's endpoints become instants like this: a wall-clock time that exists once is
 *   that instant; one that does not exist (in a spring-forward gap) is the first instant after the gap
 *   (the transition itself); one that exists twice (fall back) is its FIRST (earlier) instant; and
 *   endMinute 1440 is the first instant of the next local date. (Do not rely on luxon's fromObject for
 *   this: it picks the later instant in some zones and the earlier in others.)
 * - The block overlaps no time off of the staff member, no busy time of their external calendars
 *   and no live booking's block [starts_at, blocked_until) of theirs. Live: confirmed, or a pending hold that has not lapsed
 *   (holdExpiresAt > now).
 * - No slot on a local date the location is closed.
 * - start >= now + minNoticeMinutes; the start's local date <= today (local) + maxAdvanceDays.
 * - Any staff (no staffId): one slot per start instant, carrying the eligible free staff member with the
 *   fewest booked minutes on that local date (end - start of their live bookings and of their `done`
 *   ones, buffers excluded, at any location, by the start's local date), ties broken by name, then id.
 * - Slots are sorted by start (and, for one staff member, there is one slot per start).
 */

export interface WorkingInterval {
  /** 1 = Monday .. 7 = Sunday. */
  weekday: number;
  startMinute: number;
  /** Exclusive; up to 1440 (midnight at the end of the day). */
  endMinute: number;
}

export interface Interval {
  start: number;
  end: number;
}

export interface BusyBooking {
  startsAt: number;
  endsAt: number;
  /** endsAt plus the buffer after the booking's last service. */
  blockedUntil: number;
  /** Null when the booking holds nothing (confirmed); a lapsed hold no longer blocks. */
  holdExpiresAt: number | null;
  /**
   * An appointment whose time came and that was then marked completed, needs checkout or no-show: it
   * no longer blocks (only live bookings do), but its minutes were booked that day, so it still counts
   * towards the any-staff rule's booked minutes (marking it must not hand the rest of the day to
   * someone else).
   */
  done?: boolean;
}

/** A staff member who may deliver every requested service at the location (eligibility is decided by the caller). */
export interface StaffSchedule {
  id: string;
  name: string;
  /** Weekly hours at this location, in its local time. */
  workingHours: WorkingInterval[];
  timeOff: Interval[];
  /**
   * The busy times of their external calendars (design.md 9.6). They block like time off, but they
   * are not time off: the staff member works then and is taken, as by a booking. What explains a
   * refusal or an empty day (diagnose-start.ts) counts them as taken, never as not working, so a
   * private calendar reads as "not available", not as a day off or a closed salon.
   */
  busy?: Interval[];
  /**
   * Live bookings of this staff member at any location (pending holds included; lapsed ones are
   * ignored), and the `done` ones, which only count towards booked minutes.
   */
  bookings: BusyBooking[];
}

export interface ServiceSpec {
  id: string;
  durationMinutes: number;
  bufferAfterMinutes: number;
}

export interface AvailabilityQuery {
  timezone: string;
  slotIntervalMinutes: number;
  minNoticeMinutes: number;
  maxAdvanceDays: number;
  /** Local dates ('YYYY-MM-DD') on which the location is closed. */
  closedDates: ReadonlySet<string>;
  /** In booking order. */
  services: ServiceSpec[];
  staff: StaffSchedule[];
  /** First local date searched. */
  fromDate: string;
  /** 1..14 local days from fromDate. */
  days: number;
  /** The instant "now". */
  now: number;
}

export interface Slot {
  startsAt: number;
  endsAt: number;
  staffId: string;
}

/** An availability answer: the services as offered at the location, their total length, the slots. */
export interface Availability {
  services: OfferedService[];
  totalMinutes: number;
  slots: Slot[];
  /** The days searched on which the location is closed for these services, and why. */
  closedDays: ClosedDay[];
  /**
   * With a staff member asked for, when a day searched is one they do not work: where and when they
   * do, so a search on their day off can say so (read only then).
   */
  staffWorks?: Workplace[] | undefined;
}

/** A local date the location is closed: a closure (with its reason), or nobody asked about works. */
export interface ClosedDay {
  date: string;
  cause: 'closure' | 'nobody_works';
  closureReason: string | null;
}

export type WeekdayName = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** From 'HH:MM' to 'HH:MM' local time; `end` may be '24:00' (the end of the day). */
export interface ClockInterval {
  start: string;
  end: string;
}

/** A weekday's hours (opening-hours.ts). */
export interface DayHours {
  weekday: WeekdayName;
  /** Sorted; overlapping or touching intervals merged (split shifts stay apart); empty when closed. */
  intervals: ClockInterval[];
}

/** Where and when a staff member works: their weekly hours at each active location. */
export interface Workplace {
  locationSlug: string;
  locationName: string;
  /** Only the days they work there. */
  hours: DayHours[];
}

import { DateTime } from 'luxon';
import type { EmptyTodayCause } from '../../app/availability-service.ts';
import { calendarFor } from '../../domain/availability/find-slots.ts';
import type { Availability } from '../../domain/availability/types.ts';
import { LAST_CALENDAR_DATE } from '../../domain/availability/zone-calendar.ts';
import type { Location, ServiceWithStaff, StaffRef } from '../../domain/catalogue.ts';
import { counted } from '../../domain/counted.ts';
import { withRepeatedLabel, zoneAbbreviation } from '../../domain/repeated-wall-times.ts';
import { timeOfDay } from '../../domain/waitlist.ts';
import { zoneTimeWords, zoneWordsLanguage } from '../../domain/zone-words.ts';
import { callLinkHtml } from './call-link.ts';
import { esc } from './page-shell.ts';

/**
 * Choosing a time on the customer's pages (booking and moving a booking), without script: a strip of
 * a week's days, each a link (GET) saying how many times it has, with the earlier and later weeks; the
 * chosen day's times as radio buttons grouped morning / afternoon / evening, each labelled with its
 * time only (the day is said once, above them); the zone the times are in; and, on a day with none,
 * why (closed, fully booked, too soon, the working day over, too far ahead).
 */

/** The days a strip shows. */
export const STRIP_DAYS = 7;

/** The days of a strip and the one chosen, as local dates ('YYYY-MM-DD'). */
export interface DayWindow {
  today: string;
  /** The chosen day, never before today. */
  date: string;
  /** The strip's first day: weeks counted from today, so paging moves a week at a time. */
  start: string;
}

/** A day as a form or link gives it: YYYY-MM-DD, and a day the calendar has (not 2026-12-32). */
export function isCalendarDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && DateTime.fromISO(value, { zone: 'UTC' }).isValid;
}

/** The strip holding `date` (today when none, one already past, or none the calendar has). */
export function dayWindow(today: string, asked: string | undefined): DayWindow {
  const date = asked !== undefined && isCalendarDate(asked) && asked > today ? asked : today;
  const offset = daysBetween(today, date);
  return { today, date, start: plusDays(today, Math.floor(offset / STRIP_DAYS) * STRIP_DAYS) };
}

export function plusDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate() ?? date;
}

function daysBetween(from: string, to: string): number {
  return Math.round(
    DateTime.fromISO(to, { zone: 'UTC' }).diff(DateTime.fromISO(from, { zone: 'UTC' }), 'days').days,
  );
}

/** What the page needs to say about the days of a search: each day's starts and why a day has none. */
export interface DaysFound {
  window: DayWindow;
  location: Location;
  locale: string;
  /** The week's availability (STRIP_DAYS days from window.start). */
  availability: Availability;
  /** The staff member asked for, when one was: a day they do not work says so. */
  staffName?: string | undefined;
  /**
   * When nobody who does the services works on the day shown (and no stylist was asked for): whether
   * anyone works at the location that date (their hours less time off: someoneWorksOn) and the
   * services in words, so an open day is not called closed, nor a day everyone is off called open.
   */
  open?: { someoneWorks: boolean; services: string } | undefined;
  /**
   * Today shown with no time left (todayNeedsCause): what keeps its remaining time from being offered
   * (whyNothingIsLeftToday), so "too soon" is said only when the notice is why.
   */
  todayCause?: EmptyTodayCause | undefined;
}

/** Whether `date` is today with no free time and not closed: its cause is then asked (todayCause). */
export function todayNeedsCause(found: DaysFound, date: string): boolean {
  return (
    date === found.window.today &&
    startsOn(found, date).length === 0 &&
    !found.availability.closedDays.some((day) => day.date === date)
  );
}

/** Nobody who does the services works on `date`, no stylist asked for: `open` tells whether the salon does. */
export function nobodyWorksOn(found: DaysFound, date: string): boolean {
  const closed = found.availability.closedDays.find((day) => day.date === date);
  return closed?.cause === 'nobody_works' && !found.staffName;
}

/** The distinct free starts of one local day, earliest first. */
export function startsOn(found: DaysFound, date: string): number[] {
  const zone = found.location.timezone;
  const starts = found.availability.slots
    .map((slot) => slot.startsAt)
    .filter((at) => DateTime.fromMillis(at, { zone }).toISODate() === date);
  return [...new Set(starts)].sort((a, b) => a - b);
}

/** Why a day has no free time, in the customer's words: HTML (a number to call is a link). */
export function emptyDayReasonHtml(found: DaysFound, date: string): string {
  if (date === found.window.today && found.todayCause === 'notice') {
    // A time later today is free, only too soon to book online: the salon may still fit the customer in.
    const call = callLinkHtml(found.location);
    return `Too soon: no times are left to book online today.${call ? ` Call ${call} to ask.` : ''}`;
  }
  return esc(emptyDayReason(found, date));
}

function emptyDayReason(found: DaysFound, date: string): string {
  const { location } = found;
  const closed = found.availability.closedDays.find((day) => day.date === date);
  if (closed?.cause === 'closure') {
    return closed.closureReason ? `Closed that day: ${closed.closureReason}.` : 'Closed that day.';
  }
  if (closed?.cause === 'nobody_works') {
    if (found.staffName) return `${found.staffName} does not work that day; choose another day, or anyone.`;
    // Someone works there that day; only nobody who does these (a stylist's day off).
    if (found.open?.someoneWorks) {
      return `Nobody who does ${found.open.services} works that day; choose another day.`;
    }
    return 'Closed that day.';
  }
  const { maxAdvanceDays } = location.policy;
  if (date > plusDays(found.window.today, maxAdvanceDays)) {
    return `Too far ahead: times can be booked up to ${counted(maxAdvanceDays, 'day')} ahead.`;
  }
  if (date === found.window.today && found.todayCause === 'hours_over') {
    return 'No more times today: the working day is over.';
  }
  return 'Fully booked that day.';
}

/** Where the strip's GET form goes, and the search it keeps (hidden fields). */
export interface StripTarget {
  action: string;
  keep: Record<string, string>;
}

/**
 * The strip: one GET form (no script) whose buttons are the week's days (each with its count of
 * times, the chosen one marked as current), the day before and after the chosen one, and the
 * earlier and later weeks. Buttons carry only the date; the search is kept once, in hidden fields.
 */
export function dayStrip(found: DaysFound, target: StripTarget): string {
  const { window, location, locale } = found;
  // The calendar ends on 9999-12-31: no day, and no pager, past it (a later date cannot be written).
  const days = Array.from({ length: STRIP_DAYS }, (_, i) => plusDays(window.start, i)).filter(isCalendarDate);
  const go = (date: string, words: string, extra = '') =>
    `<button type="submit" name="date" value="${date}"${extra}>${words}</button>`;
  const items = days.map((date) => {
    const count = startsOn(found, date).length;
    const day = DateTime.fromISO(date, { zone: location.timezone }).setLocale(locale);
    // The visible words are the whole accessible name (no aria-label that could drift from them).
    const words = `${day.toFormat('ccc d')} <small>${count === 0 ? 'none' : counted(count, 'time')}</small>`;
    const current = date === window.date ? ' aria-current="date"' : '';
    return `<li>${go(date, words, `${current}${count === 0 ? ' class="none"' : ''}`)}</li>`;
  });
  const previous = window.date > window.today ? go(plusDays(window.date, -1), 'Previous day') : '';
  const earlier = window.start > window.today ? go(plusDays(window.start, -STRIP_DAYS), 'Earlier days') : '';
  const next = window.date < LAST_CALENDAR_DATE ? go(plusDays(window.date, 1), 'Next day') : '';
  const laterStart = plusDays(window.start, STRIP_DAYS);
  const later = isCalendarDate(laterStart) ? go(laterStart, 'Later days') : '';
  const keep = Object.entries(target.keep)
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join('');
  return `<nav aria-label="Days" class="strip"><form method="get" action="${esc(target.action)}#times">${keep}
<ul class="days">
${items.join('\n')}
</ul>
<p class="pager">${earlier}${previous}${next}${later}</p>
</form></nav>`;
}

/**
 * The zone the times of `date` (the day shown) are in, named: a visitor elsewhere (travelling, abroad)
 * knows which clock. Named as on that day (its noon), not today: a day after the clocks change is in
 * the other offset. The clock in the words of the language the times are written in, as after every
 * time on the pages (clockAfterTime): "Times are London time (GMT), …" in English; in another
 * language its words in brackets in the page's English sentence ("Times are local time where Soho is
 * (heure : Royaume-Uni, UTC+0).", "… (MEZ).").
 */
export function zoneWords(location: Location, locale: string, date: string): string {
  const zone = location.timezone;
  const noon = DateTime.fromISO(`${date}T12:00`, { zone });
  const short = noon.setLocale(locale).toFormat('ZZZZ');
  // The night the clocks change, the day's first times are on the other clock: both are named, and when
  // the clocks change ("GMT, then BST once the clocks go forward at 01:00"), not noon's alone.
  const change = clockChangeOn(date, zone);
  const clocks = change
    ? `${nameAt(change.at - 1, zone, locale)}, then ${nameAt(change.at, zone, locale)} once the clocks go ${change.forward ? 'forward' : 'back'} at ${change.wallTime(locale)}`
    : short;
  if (zoneWordsLanguage(locale) === 'en') {
    return `Times are ${zoneTimeWords(noon.toMillis(), zone, locale)} (${clocks}), where ${location.name} is.`;
  }
  // As after each time (clockAfterTime, zoneClockName): the locale's abbreviation where it has one
  // ("(MEZ)"), else its place in words with the short name ("(hora de Nueva York, GMT-5)").
  const abbreviation = zoneAbbreviation(noon.toMillis(), zone, locale);
  if (change) {
    const place = abbreviation === null ? `${zoneTimeWords(noon.toMillis(), zone, locale)}, ` : '';
    return `Times are local time where ${location.name} is (${place}${clocks}).`;
  }
  const clock = abbreviation ?? zoneTimeWords(noon.toMillis(), zone, locale);
  return `Times are local time where ${location.name} is (${clock === short ? short : `${clock}, ${short}`}).`;
}

/** The zone's short name at `epochMs` as the header names it: the locale's abbreviation, else the offset. */
function nameAt(epochMs: number, zone: string, locale: string): string {
  return DateTime.fromMillis(epochMs, { zone }).setLocale(locale).toFormat('ZZZZ');
}

/**
 * When the clocks of `zone` change within local `date` with times of the day on each clock, if they do:
 * the instant, whether they go forward, and the wall time they show as they change ("01:00" in London
 * in March, "02:00" in October; Havana's back at 01:00 to midnight), read on the clock before the
 * change. A change at the day's first instant (Havana forward at midnight) leaves all its times on one
 * clock: not named.
 */
function clockChangeOn(
  date: string,
  zone: string,
): { at: number; forward: boolean; wallTime: (locale: string) => string } | null {
  if (!isCalendarDate(date)) return null;
  const calendar = calendarFor(zone);
  const day = calendar.day(date);
  const change = calendar.clockChangeNear(day);
  if (change === null || change.at <= day.start || change.at >= day.end) return null;
  return {
    at: change.at,
    forward: change.toMinute > change.fromMinute,
    wallTime: (locale) =>
      // At the day's end (Santiago's clocks go back at 24:00): not "00:00", read as the day's start.
      change.fromMinute >= 1440
        ? 'midnight'
        : DateTime.fromMillis(day.wallMidnight + change.fromMinute * 60_000, { zone: 'UTC' })
            .setLocale(locale)
            .toLocaleString(DateTime.TIME_SIMPLE),
  };
}

/**
 * The chosen day's times as radio buttons (name starts_at), grouped morning / afternoon / evening,
 * each labelled with its time alone ("14:30"; a time the clocks show twice that day says its zone).
 * `checked` is the time kept from a form sent back; `refusedBy`, the id of the words refusing the time
 * chosen, marks the kept (or first) time invalid, described by them, and focused.
 */
export function timeGroups(
  starts: number[],
  location: Location,
  locale: string,
  checked?: number | undefined,
  refusedBy?: string | undefined,
): string {
  const focused = starts.includes(checked ?? Number.NaN) ? checked : starts[0];
  const zone = location.timezone;
  const clock = new Intl.DateTimeFormat(locale, { timeStyle: 'short', timeZone: zone });
  const groups = new Map<string, string[]>();
  starts.forEach((at, i) => {
    const local = DateTime.fromMillis(at, { zone });
    const part = timeOfDay(local.hour * 60 + local.minute);
    const label = esc(withRepeatedLabel(clock.format(at), at, zone, locale));
    // Short markup (a busy day has 40 times and the page stays under 10 KB): the instant to the
    // minute, in UTC, as Date.parse reads it back.
    const refused =
      refusedBy !== undefined && at === focused
        ? ` aria-invalid="true" aria-describedby="${esc(refusedBy)}" autofocus`
        : '';
    const input = `<input type="radio" name="starts_at" value="${esc(toTheMinute(at))}"${i === 0 ? ' required' : ''}${at === checked ? ' checked' : ''}${refused}>`;
    const list = groups.get(part) ?? [];
    list.push(`<label>${input}${label}</label>`);
    groups.set(part, list);
  });
  return [...groups]
    .map(
      ([part, labels]) =>
        `<fieldset class="times"><legend>${PART_WORDS[part] ?? part}</legend>\n${labels.join('\n')}\n</fieldset>`,
    )
    .join('\n');
}

/** '2026-11-24T10:00Z': an instant to the minute (the slots' grain), in UTC. */
export function toTheMinute(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16)}Z`;
}

const PART_WORDS: Record<string, string> = {
  morning: 'Morning',
  afternoon: 'Afternoon',
  evening: 'Evening',
};

/** The chosen day in words ("Wednesday 25 November"), with its year when not this year's. */
export function dayWords(date: string, window: DayWindow, locale: string): string {
  const day = DateTime.fromISO(date, { zone: 'UTC' }).setLocale(locale);
  const sameYear = date.slice(0, 4) === window.today.slice(0, 4);
  return day.toLocaleString({
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    ...(sameYear ? {} : { year: 'numeric' }),
  });
}

/** The stylists who do every chosen service here (all who do any, before a choice), by name. */
export function stylistsFor(services: ServiceWithStaff[], chosen: string[]): StaffRef[] {
  const wanted = services.filter((s) => chosen.length === 0 || chosen.includes(s.id));
  const byId = new Map<string, StaffRef>();
  for (const service of wanted) for (const member of service.staff) byId.set(member.id, member);
  return [...byId.values()]
    .filter((member) => chosen.length === 0 || wanted.every((s) => s.staff.some((m) => m.id === member.id)))
    .sort((a, b) => a.name.localeCompare(b.name));
}

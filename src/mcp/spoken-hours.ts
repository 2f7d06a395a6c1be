import { counted } from '../domain/counted.ts';
import type { LocationInfo } from './booking-api.ts';
import { type SpeechLocale, speakClock } from './speech.ts';
import { listed } from './word-lists.ts';

/**
 * Weekly hours and a location's booking policy in words a receptionist reads out: "Monday to Friday
 * 9 am to 6 pm, Saturday 10 am to 2 pm; closed on Sunday". Pure; the hours come as the REST
 * LocationInfo gives them (local "HH:MM" intervals per weekday from Monday).
 */

type DayHours = LocationInfo['opening_hours'][number];

const DAY_NAMES: Record<DayHours['weekday'], string> = {
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

/** A wall-clock "HH:MM" as said: "9 am", "5:30 pm", "noon", "midnight" ("24:00" is the day's end). */
export function speakClockTime(time: string, locale: SpeechLocale): string {
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  return speakClock(hours * 60 + minutes, locale);
}

/** One day's intervals: "9 am to 1 pm and 2 pm to 6 pm". */
function speakIntervals(day: DayHours, locale: SpeechLocale): string {
  return day.intervals
    .map((i) => `${speakClockTime(i.start, locale)} to ${speakClockTime(i.end, locale)}`)
    .join(' and ');
}

/**
 * Whether the location opens on a local date ("YYYY-MM-DD"): someone works there that weekday, as its
 * opening hours (its staff's weekly hours) say; closures and time off aside.
 */
export function opensOn(hours: readonly DayHours[], date: string): boolean {
  const weekday = (['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const)[
    new Date(`${date}T00:00:00Z`).getUTCDay()
  ];
  return hours.some((day) => day.weekday === weekday && day.intervals.length > 0);
}

/** Monday first, as the week is said. */
const WEEK_ORDER: readonly DayHours['weekday'][] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/**
 * The week, days that follow each other on the calendar with the same hours run together, and runs
 * with the same hours said together: "Monday to Friday 9 am to 6 pm, Saturday 10 am to 2 pm; closed
 * on Sunday", "Monday, Wednesday and Friday 9 am to 5 pm". Days without hours are named as closed at
 * the end, unless `closedDays` is false (the hours alone, as a refusal gives them). `week` may list only
 * some days (a staff member's working days): days are next to each other by the calendar, not by
 * their place in the list.
 */
export function speakWeeklyHours(
  week: readonly DayHours[],
  locale: SpeechLocale,
  options: { closedDays?: boolean } = {},
): string {
  const days = [...week].sort((a, b) => WEEK_ORDER.indexOf(a.weekday) - WEEK_ORDER.indexOf(b.weekday));
  const runs: { from: DayHours; to: DayHours; hours: string }[] = [];
  for (const day of days) {
    if (day.intervals.length === 0) continue;
    const hours = speakIntervals(day, locale);
    const last = runs[runs.length - 1];
    const follows = last && WEEK_ORDER.indexOf(last.to.weekday) === WEEK_ORDER.indexOf(day.weekday) - 1;
    if (last && follows && last.hours === hours) last.to = day;
    else runs.push({ from: day, to: day, hours });
  }
  const spans = (run: (typeof runs)[number]) => {
    const length = WEEK_ORDER.indexOf(run.to.weekday) - WEEK_ORDER.indexOf(run.from.weekday);
    if (length === 0) return [DAY_NAMES[run.from.weekday]];
    if (length === 1) return [DAY_NAMES[run.from.weekday], DAY_NAMES[run.to.weekday]];
    return [`${DAY_NAMES[run.from.weekday]} to ${DAY_NAMES[run.to.weekday]}`];
  };
  // Runs next to each other in the list with the same hours have a day off between them.
  const said: { names: string[]; hours: string }[] = [];
  for (const run of runs) {
    const last = said[said.length - 1];
    if (last && last.hours === run.hours) last.names.push(...spans(run));
    else said.push({ names: spans(run), hours: run.hours });
  }
  const open = said.map(({ names, hours }) => `${listed(names)} ${hours}`);
  const closed = days.filter((day) => day.intervals.length === 0).map((day) => DAY_NAMES[day.weekday]);
  if (open.length === 0) return 'no opening hours at the moment';
  const saysClosed = closed.length > 0 && options.closedDays !== false;
  return saysClosed ? `${open.join(', ')}; closed on ${listed(closed)}` : open.join(', ');
}

/** "24 hours", "2 days" (whole days said as days, as people count a cancellation window). */
export function speakWindow(hours: number): string {
  if (hours >= 48 && hours % 24 === 0) return `${hours / 24} days`;
  return counted(hours, 'hour');
}

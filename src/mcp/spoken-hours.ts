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
 * The week, consecutive days with the same hours run together: "Monday to Friday 9 am to 6 pm,
 * Saturday 10 am to 2 pm; closed on Sunday". Days without hours are named as closed at the end.
 */
export function speakWeeklyHours(week: readonly DayHours[], locale: SpeechLocale): string {
  const runs: { from: DayHours; to: DayHours; hours: string }[] = [];
  for (const day of week) {
    if (day.intervals.length === 0) continue;
    const hours = speakIntervals(day, locale);
    const last = runs[runs.length - 1];
    const follows = last && week.indexOf(last.to) === week.indexOf(day) - 1;
    if (last && follows && last.hours === hours) last.to = day;
    else runs.push({ from: day, to: day, hours });
  }
  const open = runs.map((run) => {
    const days =
      run.from === run.to
        ? DAY_NAMES[run.from.weekday]
        : `${DAY_NAMES[run.from.weekday]} ${week.indexOf(run.to) - week.indexOf(run.from) === 1 ? 'and' : 'to'} ${DAY_NAMES[run.to.weekday]}`;
    return `${days} ${run.hours}`;
  });
  const closed = week.filter((day) => day.intervals.length === 0).map((day) => DAY_NAMES[day.weekday]);
  if (open.length === 0) return 'no opening hours at the moment';
  return closed.length === 0 ? open.join(', ') : `${open.join(', ')}; closed on ${listed(closed)}`;
}

/** "24 hours", "2 days" (whole days said as days, as people count a cancellation window). */
export function speakWindow(hours: number): string {
  if (hours >= 48 && hours % 24 === 0) return `${hours / 24} days`;
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

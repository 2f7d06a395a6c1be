import { DateTime, IANAZone } from 'luxon';
import type { Diary, DiaryBooking, DiaryDay } from '../../app/console-service.ts';
import { zoneNamesApart } from '../../domain/repeated-wall-times.ts';
import { esc, type Formats, STATUS_LABELS } from './page.ts';

/**
 * The diary of a location: for a day, a column per staff member with their working hours, time off and
 * bookings as blocks coloured by status, and a line at the current time, all placed by the wall clock
 * (see "Placing the day's blocks" below); for a week, a table of days by staff. The page carries the
 * bookings' stamp; the console script asks for it every few seconds and swaps the diary in place when
 * it changes (another desk or the AI booked).
 */
const PX_PER_MINUTE = 1.1;

export function diaryBody(diary: Diary, view: 'day' | 'week', f: Formats, now: number): string {
  const first = diary.days[0]!;
  const zone = diary.location.timezone;
  // Dates in the organisation's locale, as every console page writes them (en-GB: "Thursday, 22 October
  // 2026", never the US "Thursday, October 22, 2026" of the process's default locale).
  const date = DateTime.fromISO(first.date, { zone, locale: f.locale });
  const step = view === 'week' ? 7 : 1;
  const link = (d: DateTime, v: string) =>
    `/console/diary?location=${encodeURIComponent(diary.location.slug)}&date=${d.toISODate()}&view=${v}`;
  const today = DateTime.fromMillis(now, { zone });
  const title =
    view === 'week'
      ? `Week of ${date.toLocaleString(DateTime.DATE_MED_WITH_WEEKDAY)}`
      : date.toLocaleString(DateTime.DATE_HUGE);
  const locations = diary.locations
    .map(
      (l) =>
        `<option value="${esc(l.slug)}"${l.slug === diary.location.slug ? ' selected' : ''}>${esc(l.name)}</option>`,
    )
    .join('');
  return `<h1>${esc(diary.location.name)}: ${esc(title)}</h1>
<form method="get" action="/console/diary" class="toolbar">
<div><label for="location">Location</label><select id="location" name="location">${locations}</select></div>
<div><label for="date">Date</label><input id="date" type="date" name="date" value="${esc(first.date)}"></div>
<div><label for="view">View</label><select id="view" name="view"><option value="day"${view === 'day' ? ' selected' : ''}>Day</option><option value="week"${view === 'week' ? ' selected' : ''}>Week</option></select></div>
<button type="submit" class="secondary">Show</button>
</form>
<nav class="toolbar" aria-label="Move between days">
<a href="${esc(link(date.minus({ days: step }), view))}">← Previous ${view}</a>
<a href="${esc(link(today, view))}">Today</a>
<a href="${esc(link(date.plus({ days: step }), view))}">Next ${view} →</a>
<a href="${esc(`/console/book?location=${encodeURIComponent(diary.location.slug)}&date=${first.date}`)}">Book an appointment</a>
</nav>
<div id="diary" data-stamp="${esc(diary.stamp)}" data-location="${esc(diary.location.slug)}" aria-live="polite">
${view === 'week' ? weekTable(diary, f) : dayGrid(first, zone, f, now)}
</div>
${legend()}`;
}

function legend(): string {
  const shown = [
    'confirmed',
    'pending_payment',
    'pending_confirmation',
    'needs_checkout',
    'completed',
    'no_show',
    'cancelled',
  ];
  return `<p class="legend" aria-label="Colours">${shown.map((s) => `<span class="s-${s}">${STATUS_LABELS[s]}</span>`).join('')}</p>`;
}

function dayGrid(day: DiaryDay, zone: string, f: Formats, now: number): string {
  if (day.columns.length === 0) return '<p>Nobody works at this location.</p>';
  const closure = day.closure
    ? `<p class="closed" role="note">Closed${day.closure.reason ? `: ${esc(day.closure.reason)}` : ''}.</p>\n`
    : '';
  // Everything is placed by the wall clock, as the axis and the working hours read (see wallMinute).
  const wallOf = (start: number, end: number) => wallSpan(start, end, day, zone);
  const bookingSpans = day.columns.map((c) => c.bookings.map((b) => wallOf(b.starts_at, b.ends_at)));
  // The hours shown: 08:00 to 20:00, widened to every working hour and booking of the day, and now.
  let from = 8 * 60;
  let to = 20 * 60;
  day.columns.forEach((c, i) => {
    for (const h of c.hours) {
      from = Math.min(from, h.startMinute);
      to = Math.max(to, h.endMinute);
    }
    for (const s of bookingSpans[i]!) {
      from = Math.min(from, s.start);
      to = Math.max(to, s.end);
    }
  });
  // Today's diary shows the current time too: its line is never pinned to an edge it is not at (at
  // 07:30, a line at the 08:00 the diary would otherwise start at).
  const nowMinute = now >= day.start && now < day.end ? wallMinute(now, day, zone) : null;
  if (nowMinute !== null) {
    from = Math.min(from, nowMinute);
    to = Math.max(to, nowMinute + 1);
  }
  from = Math.floor(from / 60) * 60;
  to = Math.min(MINUTES_PER_DAY, Math.ceil(to / 60) * 60);
  const top = (minute: number) =>
    `${((Math.max(from, Math.min(to, minute)) - from) * PX_PER_MINUTE).toFixed(0)}px`;
  const height = `${((to - from) * PX_PER_MINUTE).toFixed(0)}px`;
  const span = (start: number, end: number) =>
    `top:calc(2rem + ${top(start)});height:${(Math.max(0, Math.min(to, end) - Math.max(from, start)) * PX_PER_MINUTE).toFixed(0)}px`;
  const changes = clockChanges(day, zone);
  const notices = changes.map((c) => changeNotice(c, zone, f.locale)).join('');
  // The wall time the clocks skip (forward) is no time at all: hatched, so nobody reads it as free.
  const skipped = changes
    .filter((c) => c.after > c.before && c.after > from && c.before < to)
    .map(
      (c) =>
        `<div class="skipped" style="${span(c.before, c.after)}" aria-hidden="true">${esc(`${clock(c.before)}–${clock(c.after)}`)}: clocks go forward</div>`,
    )
    .join('');
  const axis = [];
  for (let m = from; m < to; m += 60) {
    axis.push(`<span style="top:calc(2rem + ${top(m)})">${clock(m)}</span>`);
  }
  const nowLine =
    nowMinute !== null
      ? `<div class="now" style="top:calc(2rem + ${top(nowMinute)})" role="img" aria-label="Now, ${esc(f.time(now))}"></div>`
      : '';
  const columns = day.columns.map((c, i) => {
    const hours = c.hours
      .map((h) => `<div class="hours" style="${span(h.startMinute, h.endMinute)}"></div>`)
      .join('');
    const off = c.timeOff
      .map((t) => {
        const s = wallOf(t.start, t.end);
        return `<div class="off" style="${span(s.start, s.end)}">${esc(timeOffOnDay(t, day, f))}</div>`;
      })
      .join('');
    const spans = bookingSpans[i]!;
    const places = lanes(spans);
    const blocks = c.bookings
      .map((b, j) =>
        block(b, c.staff.name, `${span(spans[j]!.start, spans[j]!.end)}${laneStyle(places[j]!)}`, f),
      )
      .join('');
    const working = c.hours.length === 0 ? ' (not working)' : '';
    return `<section class="col" style="height:calc(2rem + ${height})" aria-label="${esc(c.staff.name)}${working}"><h2>${esc(c.staff.name)}${working}</h2>${hours}${skipped}${off}${blocks}${nowLine}</section>`;
  });
  return `${closure}${notices}<div class="scroll"><div class="diary" style="grid-template-columns:3.2rem repeat(${day.columns.length}, minmax(9rem, 1fr))">
<div class="axis" style="height:calc(2rem + ${height})" aria-hidden="true">${axis.join('')}</div>
${columns.join('\n')}
</div></div>`;
}

/**
 * Time off as it falls on the day shown: its hours when it starts and ends that day, else from or
 * until the hour it starts or ends, or all day (a holiday's 00:00 to 00:00 said nothing).
 */
function timeOffOnDay(off: { start: number; end: number }, day: DiaryDay, f: Formats): string {
  const startsToday = off.start > day.start;
  const endsToday = off.end < day.end;
  if (startsToday && endsToday) return `Time off ${f.time(off.start)}–${f.time(off.end)}`;
  if (startsToday) return `Time off from ${f.time(off.start)}`;
  return endsToday ? `Time off until ${f.time(off.end)}` : 'Time off all day';
}

/**
 * A booking's block. Its accessible name is its visible text (no aria-label that says something else:
 * speech users say what they see, axe's label-content-name-mismatch), so the text carries the end too,
 * and then the staff member, for a screen reader only (the column shows it to the eye): the same
 * client's same service at the same time with two stylists would otherwise be two links of one name.
 */
function block(b: DiaryBooking, staffName: string, style: string, f: Formats): string {
  return `<a class="block s-${esc(b.status)}" style="${style}" href="/console/bookings/${esc(encodeURIComponent(b.reference))}" data-reference="${esc(b.reference)}"><strong>${esc(f.time(b.starts_at))}–${esc(f.time(b.ends_at))}</strong> ${esc(b.first_name)} ${esc(b.last_name)}<br>${esc(b.services)}<br><em>${esc(STATUS_LABELS[b.status] ?? b.status)}</em>${b.source === 'mcp' ? ' · phone agent' : ''}<span class="visually-hidden">, with ${esc(staffName)}</span></a>`;
}

function weekTable(diary: Diary, f: Formats): string {
  const staff = diary.days[0]!.columns.map((c) => c.staff);
  const head = diary.days
    .map((d) => {
      const label = DateTime.fromISO(d.date, { locale: f.locale }).toLocaleString({
        weekday: 'short',
        day: 'numeric',
        month: 'short',
      });
      const link = `/console/diary?location=${encodeURIComponent(diary.location.slug)}&date=${d.date}&view=day`;
      return `<th scope="col"><a href="${esc(link)}">${esc(label)}</a>${d.closure ? '<br><small>Closed</small>' : ''}</th>`;
    })
    .join('');
  const rows = staff.map((member, i) => {
    const cells = diary.days.map((d) => {
      const c = d.columns[i]!;
      if (d.closure) return '<td>Closed</td>';
      const hours =
        c.hours.map((h) => `${clock(h.startMinute)}–${clock(h.endMinute)}`).join(', ') || 'Not working';
      const items = c.bookings
        .map(
          (b) =>
            `<li><a href="/console/bookings/${esc(encodeURIComponent(b.reference))}" class="s-${esc(b.status)}">${esc(f.time(b.starts_at))} ${esc(b.first_name)} ${esc(b.last_name)}</a> <small>${esc(STATUS_LABELS[b.status] ?? b.status)}</small></li>`,
        )
        .join('');
      return `<td><small>${esc(hours)}${c.timeOff.length > 0 ? ', time off' : ''}</small>${items ? `<ul>${items}</ul>` : ''}</td>`;
    });
    return `<tr><th scope="row">${esc(member.name)}</th>${cells.join('')}</tr>`;
  });
  return `<div class="scroll"><table class="week"><caption class="visually-hidden">Bookings by staff and day</caption><thead><tr><th scope="col">Staff</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function clock(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

// ---------------------------------------------------------------------------------------------------
// Placing the day's blocks. The axis of a day is its wall clock, 00:00 to 24:00 as a clock in the
// location shows them, on the days the clocks change too: working hours are wall minutes, and a 10:00
// booking belongs on the 10:00 line whatever the day. On the day the clocks go forward the skipped
// stretch is hatched (nothing happens in it); on the day they go back the repeated stretch holds the
// times of both passes, each at its wall time, side by side when they overlap (lanes), their times
// marked with the zone (BST, then GMT), and a note above the diary says what happens when.

const MINUTES_PER_DAY = 24 * 60;
const HOUR_MS = 3_600_000;

/** A day as the diary places it: its local date and the instants of its midnight and the next. */
export type DayFrame = Pick<DiaryDay, 'date' | 'start' | 'end'>;

/**
 * Where an instant falls on a day's axis: the minutes since midnight that a clock in `zone` shows
 * (10:00 is 600 on every day), with fractions for seconds; 0 before the day, 1440 from its end. In the
 * stretch the clocks go back over, two instants (an hour apart in London) fall on the same minute.
 */
export function wallMinute(epochMs: number, day: DayFrame, zone: string): number {
  if (epochMs < day.start) return 0;
  if (epochMs >= day.end) return MINUTES_PER_DAY;
  const local = DateTime.fromMillis(epochMs, { zone });
  const date = local.toISODate()!;
  if (date !== day.date) return date < day.date ? 0 : MINUTES_PER_DAY;
  return local.hour * 60 + local.minute + local.second / 60 + local.millisecond / 60_000;
}

/**
 * The stretch of a day's axis that the interval [start, end) covers, in wall minutes. Each part of it
 * between two clock changes lies at its wall time; the stretch runs from the earliest part's start to
 * the latest part's end. So an hour over the skipped stretch covers it (00:30 to 02:30 in London on
 * 28 March 2027), and 01:30 BST to 01:15 GMT covers 01:00 to 02:00, all the clock showed meanwhile.
 */
export function wallSpan(
  start: number,
  end: number,
  day: DayFrame,
  zone: string,
): { start: number; end: number } {
  const from = Math.max(start, day.start);
  const to = Math.min(end, day.end);
  if (to <= from) {
    const at = wallMinute(from, day, zone);
    return { start: at, end: at };
  }
  const cuts = [from, ...offsetChanges(zone, from, to), to];
  let first = MINUTES_PER_DAY;
  let last = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const at = wallMinute(cuts[i]!, day, zone);
    first = Math.min(first, at);
    last = Math.max(last, at + (cuts[i + 1]! - cuts[i]!) / 60_000);
  }
  return {
    start: start < day.start ? 0 : first,
    end: end > day.end ? MINUTES_PER_DAY : Math.min(MINUTES_PER_DAY, last),
  };
}

/**
 * The instants in (from, to) at which the zone's offset changes, in order. The offset is sampled
 * hourly (no zone changes it twice within an hour) and a change between two samples found by halving.
 */
export function offsetChanges(zone: string, from: number, to: number): number[] {
  const z = IANAZone.create(zone);
  const changes: number[] = [];
  let a = from;
  let offsetA = z.offset(a);
  while (a < to - 1) {
    const b = Math.min(a + HOUR_MS, to - 1);
    const offsetB = z.offset(b);
    if (offsetB !== offsetA) {
      let lo = a;
      let hi = b;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (z.offset(mid) === offsetA) lo = mid;
        else hi = mid;
      }
      changes.push(hi);
    }
    a = b;
    offsetA = offsetB;
  }
  return changes;
}

/**
 * A change of the clocks within a day: its instant, the wall minute the clock had reached (`before`)
 * and the one it shows instead (`after`). Forward, [before, after) is skipped; back, [after, before)
 * happens twice.
 */
export interface ClockChange {
  at: number;
  before: number;
  after: number;
}

export function clockChanges(day: DayFrame, zone: string): ClockChange[] {
  const z = IANAZone.create(zone);
  // From just before midnight: a change at midnight itself (00:00 skipped) belongs to this day.
  return offsetChanges(zone, day.start - 1, day.end).map((at) => {
    const after = wallMinute(at, day, zone);
    return { at, before: after - (z.offset(at) - z.offset(at - 1)), after };
  });
}

function changeNotice(change: ClockChange, zone: string, locale: string): string {
  const [was, is] = zoneNamesApart(change.at - 1, change.at, zone, locale);
  const from = clock(change.before);
  const to = clock(change.after);
  const text =
    change.after > change.before
      ? `The clocks go forward at ${from} ${was} to ${to} ${is}: there is no ${from}–${to} today.`
      : `The clocks go back at ${from} ${was} to ${to} ${is}: ${to}–${from} happens twice, first ${was} then ${is}, and the times in it say which.`;
  return `<p class="notice" role="note">${esc(text)}</p>\n`;
}

/** A block's place across its column: lane `lane` of `of` side by side. */
export interface Lane {
  lane: number;
  of: number;
}

/**
 * Lanes for blocks that overlap on the axis, so none hides another: two bookings in the stretch the
 * clocks go back over (01:00 BST and 01:00 GMT), or a cancelled booking and the one that took its
 * place. Blocks that overlap, directly or through others, form a group; each takes the first lane free
 * at its start, and every block of a group shares the width by the group's number of lanes.
 */
export function lanes(spans: readonly { start: number; end: number }[]): Lane[] {
  const placed = spans.map(() => ({ lane: 0, of: 1 }));
  const order = spans
    .map((_, i) => i)
    .sort((a, b) => spans[a]!.start - spans[b]!.start || spans[a]!.end - spans[b]!.end || a - b);
  let group: number[] = [];
  let laneEnds: number[] = [];
  let groupEnd = Number.NEGATIVE_INFINITY;
  const close = () => {
    for (const i of group) placed[i]!.of = laneEnds.length;
    group = [];
    laneEnds = [];
  };
  for (const i of order) {
    const { start, end } = spans[i]!;
    if (start >= groupEnd) close();
    let lane = laneEnds.findIndex((laneEnd) => laneEnd <= start);
    if (lane === -1) lane = laneEnds.push(end) - 1;
    else laneEnds[lane] = end;
    placed[i]!.lane = lane;
    group.push(i);
    groupEnd = group.length === 1 ? end : Math.max(groupEnd, end);
  }
  close();
  return placed;
}

function laneStyle(place: Lane): string {
  if (place.of <= 1) return '';
  const width = 100 / place.of;
  return `;left:calc(${(place.lane * width).toFixed(2)}% + 3px);right:auto;width:calc(${width.toFixed(2)}% - 6px)`;
}

import { DateTime } from 'luxon';
import type { Diary, DiaryBooking, DiaryDay } from '../../app/console-service.ts';
import { esc, type Formats, STATUS_LABELS } from './page.ts';

/**
 * The diary of a location: for a day, a column per staff member with their working hours, time off and
 * bookings as blocks coloured by status, and a line at the current time; for a week, a table of days
 * by staff. The page carries the bookings' stamp; the console script asks for it every few seconds and
 * swaps the diary in place when it changes (another desk or the AI booked).
 */
const PX_PER_MINUTE = 1.1;

export function diaryBody(diary: Diary, view: 'day' | 'week', f: Formats, now: number): string {
  const first = diary.days[0]!;
  const zone = diary.location.timezone;
  const date = DateTime.fromISO(first.date, { zone });
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
${view === 'week' ? weekTable(diary, f) : dayGrid(first, f, now)}
</div>
${legend()}`;
}

function legend(): string {
  const shown = ['confirmed', 'pending_payment', 'needs_checkout', 'completed', 'no_show', 'cancelled'];
  return `<p class="legend" aria-label="Colours">${shown.map((s) => `<span class="s-${s}">${STATUS_LABELS[s]}</span>`).join('')}</p>`;
}

function dayGrid(day: DiaryDay, f: Formats, now: number): string {
  if (day.columns.length === 0) return '<p>Nobody works at this location.</p>';
  const closure = day.closure
    ? `<p class="closed" role="note">Closed${day.closure.reason ? `: ${esc(day.closure.reason)}` : ''}.</p>\n`
    : '';
  const minuteOf = (ms: number) => Math.round((ms - day.start) / 60_000);
  // The hours shown: 08:00 to 20:00, widened to every working hour and booking of the day.
  let from = 8 * 60;
  let to = 20 * 60;
  for (const c of day.columns) {
    for (const h of c.hours) {
      from = Math.min(from, h.startMinute);
      to = Math.max(to, h.endMinute);
    }
    for (const b of c.bookings) {
      from = Math.min(from, Math.max(0, minuteOf(b.starts_at)));
      to = Math.max(to, Math.min(24 * 60, minuteOf(b.ends_at)));
    }
  }
  from = Math.floor(from / 60) * 60;
  to = Math.ceil(to / 60) * 60;
  const top = (minute: number) =>
    `${((Math.max(from, Math.min(to, minute)) - from) * PX_PER_MINUTE).toFixed(0)}px`;
  const height = `${((to - from) * PX_PER_MINUTE).toFixed(0)}px`;
  const span = (start: number, end: number) =>
    `top:calc(2rem + ${top(start)});height:${((Math.min(to, end) - Math.max(from, start)) * PX_PER_MINUTE).toFixed(0)}px`;
  const axis = [];
  for (let m = from; m < to; m += 60) {
    axis.push(`<span style="top:calc(2rem + ${top(m)})">${String(m / 60).padStart(2, '0')}:00</span>`);
  }
  const nowLine =
    now >= day.start && now < day.end
      ? `<div class="now" style="top:calc(2rem + ${top(minuteOf(now))})" role="img" aria-label="Now, ${esc(f.time(now))}"></div>`
      : '';
  const columns = day.columns.map((c) => {
    const hours = c.hours
      .map((h) => `<div class="hours" style="${span(h.startMinute, h.endMinute)}"></div>`)
      .join('');
    const off = c.timeOff
      .map(
        (t) =>
          `<div class="off" style="${span(minuteOf(t.start), minuteOf(t.end))}">Time off ${esc(f.time(t.start))}–${esc(f.time(t.end))}</div>`,
      )
      .join('');
    const blocks = c.bookings
      .map((b) => block(b, span(minuteOf(b.starts_at), minuteOf(b.ends_at)), f))
      .join('');
    const working = c.hours.length === 0 ? ' (not working)' : '';
    return `<section class="col" style="height:calc(2rem + ${height})" aria-label="${esc(c.staff.name)}${working}"><h2>${esc(c.staff.name)}${working}</h2>${hours}${off}${blocks}${nowLine}</section>`;
  });
  return `${closure}<div class="scroll"><div class="diary" style="grid-template-columns:3.2rem repeat(${day.columns.length}, minmax(9rem, 1fr))">
<div class="axis" style="height:calc(2rem + ${height})" aria-hidden="true">${axis.join('')}</div>
${columns.join('\n')}
</div></div>`;
}

function block(b: DiaryBooking, style: string, f: Formats): string {
  const label = `${f.time(b.starts_at)}–${f.time(b.ends_at)} ${b.first_name} ${b.last_name}, ${b.services}, ${STATUS_LABELS[b.status] ?? b.status}`;
  return `<a class="block s-${esc(b.status)}" style="${style}" href="/console/bookings/${esc(encodeURIComponent(b.reference))}" aria-label="${esc(label)}" data-reference="${esc(b.reference)}"><strong>${esc(f.time(b.starts_at))}</strong> ${esc(b.first_name)} ${esc(b.last_name)}<br>${esc(b.services)}<br><em>${esc(STATUS_LABELS[b.status] ?? b.status)}</em>${b.source === 'mcp' ? ' · phone agent' : ''}</a>`;
}

function weekTable(diary: Diary, f: Formats): string {
  const staff = diary.days[0]!.columns.map((c) => c.staff);
  const head = diary.days
    .map((d) => {
      const label = DateTime.fromISO(d.date).toLocaleString({
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

import type { BusyCalendarStatus, FeedSummary } from '../../app/calendars/feeds.ts';
import { actionForm, csrfField, esc, type Formats } from './page.ts';

/**
 * The console's Calendars page (design.md 9.6, owners and admins): each staff member's private
 * calendar feeds (make one, whose address is shown once; revoke one), and the external busy calendars
 * of the catalogue with how their background refreshes go (the last good copy, the last error).
 */
export interface CalendarsView {
  staff: readonly { id: string; name: string }[];
  feeds: readonly FeedSummary[];
  busy: readonly BusyCalendarStatus[];
  /** The address of a feed just made: in this one answer only. */
  created?: { staffName: string; url: string } | undefined;
  /** Said above the rest (the form was already sent). */
  notice?: string | undefined;
  /** The one-time id of the page's form: sent again, it makes no second feed. */
  formId: string;
  f: Formats;
  csrf: string;
}

export function calendarsBody(view: CalendarsView): string {
  const { f, csrf } = view;
  const feeds = view.feeds
    .map((feed) => {
      const state =
        feed.revokedAt === null
          ? actionForm(
              `/console/calendars/feeds/${encodeURIComponent(feed.id)}/revoke`,
              csrf,
              `Revoke the feed of ${feed.staffName} made ${f.dateTime(feed.createdAt)}`,
              {},
              'danger',
            )
          : `Revoked ${f.when(feed.revokedAt)}`;
      return `<tr><td>${esc(feed.staffName)}</td><td>${f.when(feed.createdAt)}</td><td>${feed.lastUsedAt === null ? 'Never' : f.when(feed.lastUsedAt)}</td><td>${state}</td></tr>`;
    })
    .join('');
  const options = view.staff.map((s) => `<option value="${esc(s.id)}">${esc(s.name)}</option>`).join('');
  const busy = view.busy
    .map((c) => {
      const good = c.lastSuccessAt === null ? 'Not yet' : f.when(c.lastSuccessAt);
      const error =
        c.lastError === null
          ? 'None'
          : `${esc(c.lastError)}${c.lastErrorAt === null ? '' : ` (${f.when(c.lastErrorAt)})`}`;
      return `<tr><td>${esc(c.staffName)}</td><td><code>${esc(c.address)}</code></td><td>${c.busyCount}</td><td>${good}</td><td>${error}</td></tr>`;
    })
    .join('');
  return `<h1>Calendars</h1>
${view.notice ? `<p class="notice" role="status">${esc(view.notice)}</p>` : ''}${
  view.created
    ? `<div class="ok" role="status"><p>Calendar feed of ${esc(view.created.staffName)} made. Copy its address now: it is shown only once. Anyone with the address sees this staff member's bookings (times, services, clients' first names).</p><p class="key" aria-label="Address of the new calendar feed">${esc(view.created.url)}</p></div>`
    : ''
}
<h2>Staff calendar feeds</h2>
<p>A feed puts a staff member's bookings (60 days back, a year ahead) in Google Calendar, Apple Calendar or Outlook: subscribe to its address ("From URL" / "New calendar subscription"). Calendar apps refresh it on their own schedule, from every few minutes to about a day.</p>
${
  view.staff.length === 0
    ? '<p>This organisation has no staff.</p>'
    : `<div class="card"><form method="post" action="/console/calendars/feeds" class="toolbar">${csrfField(csrf)}<input type="hidden" name="form_id" value="${esc(view.formId)}">
<div><label for="staff_id">Staff member</label><select id="staff_id" name="staff_id" required>${options}</select></div>
<button type="submit" class="primary">Make a feed</button></form></div>`
}
${
  view.feeds.length === 0
    ? '<p>No feed has been made.</p>'
    : `<div class="scroll"><table><thead><tr><th>Staff member</th><th>Made</th><th>Last read</th><th>State</th></tr></thead><tbody>${feeds}</tbody></table></div>`
}
<h2>Busy calendars</h2>
<p>External calendars listed in the catalogue (<code>busy_calendars</code> of a staff member) block the times they are busy, like time off. They are fetched in the background; when a fetch fails, the last good copy keeps blocking.</p>
${
  view.busy.length === 0
    ? '<p>No busy calendar is listed in the catalogue.</p>'
    : `<div class="scroll"><table><thead><tr><th>Staff member</th><th>Calendar</th><th>Busy times kept</th><th>Last fetched</th><th>Last error</th></tr></thead><tbody>${busy}</tbody></table></div>`
}`;
}

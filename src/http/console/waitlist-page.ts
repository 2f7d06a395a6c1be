import type { ClientMatch } from '../../app/console-service.ts';
import type { DeskWaitlist } from '../../app/waitlist/desk.ts';
import type { Location } from '../../domain/catalogue.ts';
import { TIMES_OF_DAY, type TimeOfDay, type WaitlistStatus } from '../../domain/waitlist.ts';
import { csrfField, esc, type Formats } from './page.ts';

/**
 * The console's Waitlist page (design.md 9.4), per location: the entries in joining order with who
 * waits, for what, and the offer each holds now (its time, until when, and its booking); a Remove
 * button per waiting entry; the form adding one, for a client found by search or a new client's
 * details. A refusal is said on the form, with what was typed kept.
 */

const STATUS_WORDS: Record<WaitlistStatus, string> = {
  waiting: 'Waiting',
  booked: 'Booked',
  left: 'Left',
  ended: 'Ended (past its dates)',
};

const TIME_WORDS: Record<TimeOfDay, string> = {
  morning: 'Morning (before 12:00)',
  afternoon: 'Afternoon (12:00–17:00)',
  evening: 'Evening (from 17:00)',
};

/** What the page says was just done, by the key its redirect carries; any other text shows nothing. */
export const WAITLIST_DONE_TEXTS = {
  added: 'Added to the waitlist. A free time that suits is offered within seconds.',
  removed: 'Removed from the waitlist. Any time held for the entry was released.',
} as const;

export type WaitlistDone = keyof typeof WAITLIST_DONE_TEXTS;

/** What the add form shows again: what was typed, and why it was refused. */
export interface WaitlistForm {
  clientId: string;
  firstName: string;
  lastName: string;
  phone: string;
  email: string;
  serviceIds: readonly string[];
  staffId: string;
  fromDate: string;
  toDate: string;
  times: readonly string[];
  error?: { message: string; param: string | undefined };
}

export function emptyWaitlistForm(today: string): WaitlistForm {
  return {
    clientId: '',
    firstName: '',
    lastName: '',
    phone: '',
    email: '',
    serviceIds: [],
    staffId: '',
    fromDate: today,
    toDate: today,
    times: [],
  };
}

export function waitlistPath(slug: string, extra: Record<string, string> = {}): string {
  return `/console/waitlist?${new URLSearchParams({ location: slug, ...extra }).toString()}`;
}

export function waitlistBody(options: {
  locations: readonly Location[];
  waitlist: DeskWaitlist;
  status: WaitlistStatus | 'all';
  /** The client search typed, and what it found. */
  query: string;
  matches: readonly ClientMatch[];
  form: WaitlistForm;
  f: Formats;
  csrf: string;
  done?: string | undefined;
  /** A refusal of Remove, said above the list. */
  listError?: string | undefined;
}): string {
  const { waitlist, f } = options;
  const { location } = waitlist;
  const flash =
    options.done !== undefined && Object.hasOwn(WAITLIST_DONE_TEXTS, options.done)
      ? `<p class="ok" role="status">${esc(WAITLIST_DONE_TEXTS[options.done as WaitlistDone])}</p>`
      : '';
  const listError = options.listError ? `<p class="error" role="alert">${esc(options.listError)}</p>` : '';
  const locations = options.locations
    .map(
      (l) =>
        `<option value="${esc(l.slug)}"${l.id === location.id ? ' selected' : ''}>${esc(l.name)}</option>`,
    )
    .join('');
  const statuses = (['waiting', 'all', 'booked', 'left', 'ended'] as const)
    .map(
      (s) =>
        `<option value="${s}"${s === options.status ? ' selected' : ''}>${s === 'all' ? 'All' : esc(STATUS_WORDS[s])}</option>`,
    )
    .join('');
  const toolbar = `<form method="get" action="/console/waitlist" class="toolbar">
<div><label for="wl-location">Location</label><select id="wl-location" name="location">${locations}</select></div>
<div><label for="wl-status">Status</label><select id="wl-status" name="status">${statuses}</select></div>
<button type="submit" class="secondary">Show</button></form>`;
  const next = waitlist.next
    ? `<p><a href="${esc(waitlistPath(location.slug, { status: options.status, after: `${waitlist.next.createdAt}:${waitlist.next.id}` }))}">Later entries</a></p>`
    : '';
  return `${flash}<h1>Waitlist – ${esc(location.name)}</h1>
<p>Entries in joining order: when a time that suits an entry frees up, the first entry without an offer is sent one and the time is held for it for ${location.policy.waitlistOfferMinutes} minutes, then offered to the next.</p>
${toolbar}
${listError}${entriesTable(waitlist, options.status, f, options.csrf)}
${next}
${addForm(options)}`;
}

function entriesTable(
  waitlist: DeskWaitlist,
  status: WaitlistStatus | 'all',
  f: Formats,
  csrf: string,
): string {
  if (waitlist.entries.length === 0) {
    return `<p>${status === 'waiting' ? 'Nobody is waiting here.' : 'No entries.'}</p>`;
  }
  const serviceName = (id: string) => waitlist.services.find((s) => s.id === id)?.name ?? 'A former service';
  const rows = waitlist.entries
    .map(({ entry, client }) => {
      const contact = [client.phone, client.email]
        .filter(Boolean)
        .map((c) => esc(c!))
        .join('<br>');
      const unproven = client.proven
        ? ''
        : '<br><small>Joined on the public page; contact not confirmed</small>';
      const dates =
        entry.fromDate === entry.toDate
          ? f.day(entry.fromDate)
          : `${f.day(entry.fromDate)} to ${f.day(entry.toDate)}`;
      const times =
        entry.times === null ? 'Any time' : entry.times.map((t) => esc(TIME_WORDS[t])).join('<br>');
      const staff =
        entry.staffId === null
          ? 'Anyone'
          : esc(waitlist.staffNames.get(entry.staffId) ?? 'A former staff member');
      const offer = entry.offer
        ? `${f.when(entry.offer.startsAt)} with ${esc(waitlist.staffNames.get(entry.offer.staffId) ?? '?')}<br>held until ${f.when(entry.offer.expiresAt)}<br>${bookingLink(entry.offer.bookingReference)}`
        : '–';
      const remove =
        entry.status === 'waiting'
          ? `<form method="post" action="/console/waitlist/${esc(encodeURIComponent(entry.id))}/remove" class="inline">${csrfField(csrf)}<input type="hidden" name="location" value="${esc(waitlist.location.slug)}"><button type="submit" class="danger">Remove<span class="visually-hidden"> ${esc(client.name)} from the waitlist</span></button></form>`
          : '';
      return `<tr><td>${f.when(entry.createdAt)}</td><td>${esc(client.name)}${contact ? `<br>${contact}` : ''}${unproven}</td><td>${entry.serviceIds.map((id) => esc(serviceName(id))).join('<br>')}</td><td>${staff}</td><td>${dates}</td><td>${times}</td><td>${esc(STATUS_WORDS[entry.status])}${entry.bookingReference ? `<br>${bookingLink(entry.bookingReference)}` : ''}</td><td>${offer}</td><td>${remove}</td></tr>`;
    })
    .join('');
  return `<div class="scroll"><table><thead><tr><th>Joined</th><th>Client</th><th>Services</th><th>Staff</th><th>Dates</th><th>Times</th><th>Status</th><th>Offer held now</th><th>Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The console's page of a booking, named by its reference. */
function bookingLink(reference: string): string {
  return `<a href="/console/bookings/${esc(encodeURIComponent(reference))}">${esc(reference)}</a>`;
}

function addForm(options: {
  waitlist: DeskWaitlist;
  query: string;
  matches: readonly ClientMatch[];
  form: WaitlistForm;
  csrf: string;
  status: WaitlistStatus | 'all';
}): string {
  const { waitlist, form } = options;
  const { location } = waitlist;
  const error = form.error;
  const invalid = (...params: string[]) =>
    error && params.includes(error.param ?? '')
      ? ' aria-invalid="true" aria-describedby="waitlist-error"'
      : '';
  const search = `<form method="get" action="/console/waitlist" class="toolbar" role="search">
<input type="hidden" name="location" value="${esc(location.slug)}">
<input type="hidden" name="status" value="${esc(options.status)}">
<div><label for="wl-q">Find a client (name, phone or e-mail)</label><input id="wl-q" name="q" type="search" value="${esc(options.query)}"></div>
<button type="submit" class="secondary">Search clients</button></form>`;
  const chosen = form.clientId;
  const found = options.matches
    .map(
      (c, i) =>
        `<label class="check"><input type="radio" name="client_id" id="wl-client-${i}" value="${esc(c.id)}"${chosen === c.id ? ' checked' : ''}> ${esc(c.name)}${c.phone ? ` · ${esc(c.phone)}` : ''}${c.email ? ` · ${esc(c.email)}` : ''}</label>`,
    )
    .join('\n');
  const searched =
    options.query.trim() === '' ? '' : found === '' ? '<p>No client matches the search.</p>' : found;
  const clientChoice = `<fieldset${invalid('client_id')}><legend>Client</legend>
${searched}
<label class="check"><input type="radio" name="client_id" value="new"${chosen === '' || chosen === 'new' || !options.matches.some((c) => c.id === chosen) ? ' checked' : ''}> A new client (or one on file with this phone or e-mail):</label>
<label for="wl-first-name">First name</label><input id="wl-first-name" name="first_name" maxlength="60" value="${esc(form.firstName)}"${invalid('first_name')}>
<label for="wl-last-name">Last name</label><input id="wl-last-name" name="last_name" maxlength="60" value="${esc(form.lastName)}"${invalid('last_name')}>
<label for="wl-phone">Phone</label><input id="wl-phone" name="phone" type="tel" maxlength="30" value="${esc(form.phone)}"${invalid('phone')}>
<label for="wl-email">E-mail</label><input id="wl-email" name="email" type="email" maxlength="254" value="${esc(form.email)}"${invalid('email')}>
</fieldset>`;
  const services = waitlist.services
    .filter((s) => s.onlineBookable !== false)
    .map(
      (s) =>
        `<option value="${esc(s.id)}"${form.serviceIds.includes(s.id) ? ' selected' : ''}>${esc(s.name)} (${s.durationMinutes} min)</option>`,
    )
    .join('');
  const staff = [...waitlist.staffNames]
    .map(
      ([id, name]) =>
        `<option value="${esc(id)}"${form.staffId === id ? ' selected' : ''}>${esc(name)}</option>`,
    )
    .join('');
  const times = TIMES_OF_DAY.map(
    (t) =>
      `<label class="check"><input type="checkbox" name="times" value="${t}"${form.times.includes(t) ? ' checked' : ''}> ${esc(TIME_WORDS[t])}</label>`,
  ).join('\n');
  return `<div class="card"><h2 id="add-waitlist">Add to the waitlist</h2>
${search}
${error ? `<p class="error" role="alert" id="waitlist-error">${esc(error.message)}</p>` : ''}<form method="post" action="/console/waitlist" aria-labelledby="add-waitlist">${csrfField(options.csrf)}
<input type="hidden" name="location" value="${esc(location.slug)}">
${clientChoice}
<label for="wl-services">Services</label><select id="wl-services" name="service_id" multiple required size="5"${invalid('service_ids', 'service_id')}>${services}</select>
<label for="wl-staff">Staff</label><select id="wl-staff" name="staff_id"${invalid('staff_id')}><option value="">Anyone who does them</option>${staff}</select>
<label for="wl-from">From</label><input id="wl-from" name="from_date" type="date" required value="${esc(form.fromDate)}"${invalid('from_date')}>
<label for="wl-to">Until</label><input id="wl-to" name="to_date" type="date" required value="${esc(form.toDate)}"${invalid('to_date')}>
<fieldset${invalid('times')}><legend>Times of day (none ticked: any time)</legend>
${times}
</fieldset>
<button type="submit" class="primary">Add to the waitlist</button></form></div>`;
}

import type { ApiKeySummary } from '../../app/api-key-service.ts';
import type { ClientMatch } from '../../app/console-service.ts';
import type { Slot } from '../../domain/availability/types.ts';
import type { Location, OfferedService } from '../../domain/catalogue.ts';
import type { StaffMessage } from '../../domain/message.ts';
import type { FieldRefusal } from '../pages/page-shell.ts';
import { repeatFieldset } from '../repeat-fields.ts';
import { actionForm, csrfField, esc, type Formats, STATUS_LABELS } from './page.ts';

/** The pages of the front desk besides the diary and a booking: sign-in, clients, messages, keys, booking. */
export function signInBody(options: {
  error?: string;
  notice?: string;
  next: string;
  organisation?: string;
  email?: string;
}): string {
  return `<div class="card" style="max-width:24rem;margin:2rem auto">
<h1>Sign in to the console</h1>
${options.notice ? `<p class="notice" role="status">${esc(options.notice)}</p>` : ''}${options.error ? `<p class="error" role="alert">${esc(options.error)}</p>` : ''}
<form method="post" action="/console/sign-in">
<input type="hidden" name="next" value="${esc(options.next)}">
<label for="organisation">Organisation</label><input id="organisation" name="organisation" required autocomplete="organization" value="${esc(options.organisation ?? '')}">
<label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="username" value="${esc(options.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password">
<p><button type="submit" class="primary">Sign in</button></p>
</form>
</div>`;
}

export function clientsBody(
  query: string,
  matches: readonly ClientMatch[],
  f: (zone: string) => Formats,
): string {
  const rows = matches
    .map((c) => {
      const list = (bookings: ClientMatch['bookings']) =>
        `<ul>${bookings
          .map(
            (b) =>
              `<li><a href="/console/bookings/${esc(encodeURIComponent(b.reference))}">${esc(b.reference)}</a> ${f(b.timezone).when(b.startsAt)} ${esc(b.locationName)} – ${esc(STATUS_LABELS[b.status] ?? b.status)}</li>`,
          )
          .join('')}</ul>`;
      const next = c.bookings.length > 0 ? `<h3>Next</h3>${list(c.bookings)}` : '';
      const before = c.pastBookings.length > 0 ? `<h3>Before</h3>${list(c.pastBookings)}` : '';
      return `<div class="card"><h2>${esc(c.name)}</h2><p>${esc(c.phone ?? '')} ${esc(c.email ?? '')}</p>${next || before ? `${next}${before}` : '<p>No bookings.</p>'}</div>`;
    })
    .join('');
  return `<h1>Clients</h1>
<form method="get" action="/console/clients" class="toolbar" role="search"><div><label for="q">Name, phone or e-mail</label><input id="q" name="q" type="search" value="${esc(query)}"></div><button type="submit" class="primary">Search</button></form>
${query.trim() === '' ? '' : rows || '<p>No client matches.</p>'}`;
}

/**
 * The messages taken; `places`, the organisation's locations by id: a message about one says which,
 * its time in that location's zone (others in `f`'s).
 */
export function messagesBody(
  messages: readonly StaffMessage[],
  f: Formats,
  csrf: string,
  places: ReadonlyMap<string, { name: string; f: Formats }>,
): string {
  const open = messages.filter((m) => m.status === 'open');
  const done = messages.filter((m) => m.status === 'done');
  const placeOf = (m: StaffMessage) => (m.locationId === null ? undefined : places.get(m.locationId));
  const item = (m: StaffMessage) =>
    `<div class="card"><p><strong>${esc(m.callerName)}</strong>${m.phone ? ` · ${esc(m.phone)}` : ''}${placeOf(m) ? ` · for ${esc(placeOf(m)!.name)}` : ''}${m.reference ? ` · about <a href="/console/bookings/${esc(encodeURIComponent(m.reference))}">${esc(m.reference)}</a>` : ''} · ${(placeOf(m)?.f ?? f).when(m.createdAt)}</p><p>${esc(m.message).replace(/\n/g, '<br>')}</p>${m.status === 'open' ? actionForm(`/console/messages/${encodeURIComponent(m.id)}/done`, csrf, `Mark done: message from ${m.callerName}`) : '<p><em>Done</em></p>'}</div>`;
  return `<h1>Messages</h1>
<h2>Open (${open.length})</h2>${open.map(item).join('') || '<p>No open messages.</p>'}
<h2>Done</h2>${done.slice(-DONE_MESSAGES_SHOWN).reverse().map(item).join('') || '<p>None yet.</p>'}`;
}

/** A key form the console refused: what was typed, and the reason. */
export interface KeyForm {
  label: string;
  scope: string;
  error: string;
  /** The field the reason is about. */
  field: 'label' | 'scope';
}

export function keysBody(view: {
  keys: readonly ApiKeySummary[];
  f: Formats;
  csrf: string;
  /** The one-time id of the page's form: sent again, it issues no second key. */
  formId: string;
  /** The key just issued: in this one answer only. */
  created?: { key: string; label: string } | undefined;
  notice?: string | undefined;
  /** What was typed in a form just refused, and why: said beside the label, the values kept. */
  refused?: KeyForm | undefined;
}): string {
  const { keys, f, csrf, created } = view;
  const typed = view.refused ?? { label: '', scope: 'read_write' };
  const invalid = (field: KeyForm['field']) =>
    view.refused?.field === field ? ' aria-invalid="true" aria-describedby="key-error"' : '';
  const scopeOption = (scope: string, words: string) =>
    `<option value="${scope}"${typed.scope === scope ? ' selected' : ''}>${words}</option>`;
  const rows = keys
    .map(
      (k) =>
        `<tr><td>${esc(k.label)}</td><td><code>${esc(k.hint)}</code></td><td>${esc(k.scope)}</td><td>${f.when(k.created_at)}</td><td>${k.last_used_at === null ? 'Never' : f.when(k.last_used_at)}</td><td>${
          k.revoked_at === null
            ? `<a href="/console/keys/${esc(encodeURIComponent(k.id))}/revoke">Revoke…<span class="visually-hidden"> ${esc(k.label)}</span></a>`
            : `Revoked ${f.when(k.revoked_at)}`
        }</td></tr>`,
    )
    .join('');
  return `<h1>API keys</h1>
${view.notice ? `<p class="notice" role="status">${esc(view.notice)}</p>` : ''}${created ? `<div class="ok" role="status"><p>Key "${esc(created.label)}" created. Copy it now: it is shown only once.</p><p class="key" aria-label="New API key">${esc(created.key)}</p></div>` : ''}
<div class="card"><h2>Issue a key</h2>${view.refused ? `<p class="error" role="alert" id="key-error">${esc(view.refused.error)}</p>` : ''}<form method="post" action="/console/keys" class="toolbar">${csrfField(csrf)}<input type="hidden" name="form_id" value="${esc(view.formId)}">
<div><label for="label">Label</label><input id="label" name="label" required maxlength="100" value="${esc(typed.label)}"${invalid('label')}></div>
<div><label for="scope">Scope</label><select id="scope" name="scope"${invalid('scope')}>${scopeOption('read_write', 'Read and write')}${scopeOption('read', 'Read only')}</select></div>
<button type="submit" class="primary">Create key</button></form></div>
${
  rows === ''
    ? '<p>No API keys yet.</p>'
    : `<div class="scroll"><table><thead><tr><th>Label</th><th>Key</th><th>Scope</th><th>Created</th><th>Last used</th><th>State</th></tr></thead><tbody>${rows}</tbody></table></div>`
}`;
}

/** The question before a key is revoked (its list links here): what revoking does, and the way back. */
export function revokeKeyBody(key: ApiKeySummary, csrf: string): string {
  return `<h1>Revoke the key "${esc(key.label)}"?</h1>
<p><code>${esc(key.hint)}</code> · ${key.scope === 'read_write' ? 'Read and write' : 'Read only'}</p>
<div class="notice" role="note"><ul><li>Whatever uses this key (an agent, an app, a script) is refused from its next request.</li><li>This cannot be undone: to give access again, issue a new key.</li></ul></div>
${actionForm(`/console/keys/${encodeURIComponent(key.id)}/revoke`, csrf, 'Revoke the key', {}, 'danger')}
<p><a href="/console/keys">Keep it</a></p>`;
}

/**
 * A booking form refused (a phone that does not read, a time taken meanwhile): the fields as typed,
 * the refusal's words, and the field they are about (said beside it, focused), if it is one shown.
 */
export interface KeptBooking {
  fields: Record<string, string | undefined>;
  refusal: string;
  field?:
    | 'slot'
    | 'first_name'
    | 'last_name'
    | 'phone'
    | 'email'
    | 'notes'
    | 'repeat_every_weeks'
    | 'repeat_count'
    | undefined;
}

/** A refusal of the repeat fields, for repeatFieldset to say beside the field it names. */
function repeatRefusal(kept: KeptBooking | undefined): FieldRefusal | undefined {
  if (kept?.field !== 'repeat_every_weeks' && kept?.field !== 'repeat_count') return undefined;
  return { field: kept.field, words: kept.refusal };
}

/** Booking for a caller or a walk-in: a location, services and a day give the free times; a time and the client's details book. */
export function bookBody(options: {
  locations: readonly Location[];
  location: Location;
  services: readonly OfferedService[];
  chosen: readonly string[];
  date: string;
  slots: readonly Slot[] | null;
  staffNames: ReadonlyMap<string, string>;
  f: Formats;
  csrf: string;
  currency: string;
  /** A form sent back refused: what was typed, and why (beside its field when it names one). */
  kept?: KeptBooking;
}): string {
  const { location, f, kept } = options;
  const typed = (name: string) => kept?.fields[name] ?? '';
  const beside = (field: string) =>
    kept?.field === field ? `<p id="${field}-error" class="error" role="alert">${esc(kept.refusal)}</p>` : '';
  const state = (field: string) =>
    kept?.field === field ? ` aria-invalid="true" aria-describedby="${field}-error" autofocus` : '';
  const input = (name: string, label: string, attributes: string) =>
    `<label for="${name}">${label}</label>${beside(name)}<input id="${name}" name="${name}"${attributes}${typed(name) ? ` value="${esc(typed(name))}"` : ''}${state(name)}>`;
  const locations = options.locations
    .map(
      (l) =>
        `<option value="${esc(l.slug)}"${l.id === location.id ? ' selected' : ''}>${esc(l.name)}</option>`,
    )
    .join('');
  const services = options.services
    .map(
      (s) =>
        `<option value="${esc(s.id)}"${options.chosen.includes(s.id) ? ' selected' : ''}>${esc(s.name)} (${s.durationMinutes} min, ${esc(f.money(s.priceMinor, options.currency))})</option>`,
    )
    .join('');
  const slots = options.slots;
  const slotPicker =
    slots === null
      ? ''
      : slots.length === 0
        ? '<p>No free times that day.</p>'
        : `<form method="post" action="/console/book" class="card">${csrfField(options.csrf)}
${kept && kept.field === undefined ? `<p class="error" role="alert">${esc(kept.refusal)}</p>\n` : ''}<input type="hidden" name="location" value="${esc(location.slug)}">
${options.chosen.map((id) => `<input type="hidden" name="service_id" value="${esc(id)}">`).join('')}
<fieldset><legend>Time</legend>
<label for="slot">Free time</label>${beside('slot')}<select id="slot" name="slot" required${state('slot')}>${slots
            .map((s) => {
              const value = `${new Date(s.startsAt).toISOString()}|${s.staffId}`;
              return `<option value="${esc(value)}"${value === typed('slot') ? ' selected' : ''}>${esc(f.time(s.startsAt))} with ${esc(options.staffNames.get(s.staffId) ?? '?')}</option>`;
            })
            .join('')}</select></fieldset>
<fieldset><legend>Client</legend>
${input('first_name', 'First name', ' required maxlength="60"')}
${input('last_name', 'Last name', ' required maxlength="60"')}
${input('phone', 'Phone', ' type="tel"')}
${input('email', 'E-mail', ' type="email"')}
<label for="notes">Notes</label>${beside('notes')}<textarea id="notes" name="notes" maxlength="1000"${state('notes')}>${esc(typed('notes'))}</textarea></fieldset>
${repeatFieldset({ kept: kept?.fields, refused: repeatRefusal(kept), refusalStyle: 'error' })}
<button type="submit" class="primary">Book</button></form>`;
  return `<h1>Book an appointment</h1>
<form method="get" action="/console/book" class="card">
<label for="location">Location</label><select id="location" name="location">${locations}</select>
<label for="service_id">Services</label><select id="service_id" name="service_id" multiple required size="5">${services}</select>
<label for="date">Day</label><input id="date" name="date" type="date" value="${esc(options.date)}" required>
<p><button type="submit" class="secondary">Show free times</button></p>
</form>
${slotPicker}`;
}

/** How many done messages the Messages page shows, latest first. */
export const DONE_MESSAGES_SHOWN = 20;

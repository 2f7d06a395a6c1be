import type { WebhookDelivery, WebhookEndpoint } from '../../contract/webhook.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhooks.ts';
import { csrfField, esc, type Formats } from './page.ts';

/**
 * The webhooks pages of the console (design.md 9.2, owners and admins): the organisation's endpoints
 * with their state, the form that adds one (its signing secret shown in that one answer), a delete
 * stated before it is done, and an endpoint's deliveries, the latest first.
 */

/** What each event is, beside its name on the form (the name is what an integrator's code matches). */
const EVENT_MEANINGS: Record<WebhookEventType, string> = {
  'booking.created': 'a booking is made',
  'booking.confirmed': 'a booking waiting for a deposit or confirmation is confirmed',
  'booking.rescheduled': 'a booking moves to another time',
  'booking.cancelled': 'a booking is cancelled',
  'booking.expired': 'a booking waiting for a deposit or confirmation lapses',
  'booking.completed': 'a booking is completed',
  'booking.no_show': 'a client did not come',
  'client.created': 'a new client is added',
  'message.created': 'a message is taken for the staff',
  'waitlist.offered': 'a freed time is offered to a waitlist entry',
  'waitlist.claimed': 'a waitlist offer is booked',
};

const DISABLED_REASONS: Record<string, string> = {
  gone: 'it answered 410 Gone',
  failing: 'every attempt failed for 3 days',
};

const DELIVERY_STATES: Record<WebhookDelivery['status'], string> = {
  pending: 'Pending',
  succeeded: 'Succeeded',
  failed: 'Failed (given up)',
};

/**
 * What a webhooks page says was just done, by the key its redirect carries; any other text in `done`
 * shows nothing (as booking-pages.ts DONE_TEXTS: no one else's words on the console's pages).
 */
export const WEBHOOK_DONE_TEXTS = {
  deleted: 'Endpoint deleted: nothing more is sent to it.',
  already_sent:
    'That form was already sent, and added its endpoint then: it is in the list below. Its signing secret was shown only once; if it was not copied, delete the endpoint and add it again.',
  test_sent: 'Test event queued: it is sent within a few seconds, and its delivery shows below.',
} as const;

export type WebhookDone = keyof typeof WEBHOOK_DONE_TEXTS;

function flash(done: string | undefined): string {
  if (done === undefined || !Object.hasOwn(WEBHOOK_DONE_TEXTS, done)) return '';
  return `<p class="ok" role="status">${esc(WEBHOOK_DONE_TEXTS[done as WebhookDone])}</p>`;
}

/** What the add form shows again after a refusal: what was typed, and why it was refused. */
export interface EndpointForm {
  url: string;
  description: string;
  events: readonly string[];
  error?: { message: string; param: string | undefined };
}

const EMPTY_FORM: EndpointForm = { url: '', description: '', events: [] };

export function webhookBase(id: string): string {
  return `/console/webhooks/${encodeURIComponent(id)}`;
}

/** An endpoint's state in words: enabled, or disabled with why and since when. */
function stateOf(endpoint: WebhookEndpoint, f: Formats): string {
  if (endpoint.status === 'enabled') return 'Enabled';
  const why = DISABLED_REASONS[endpoint.disabledReason ?? ''] ?? 'no reason recorded';
  const since = endpoint.disabledAt === null ? '' : ` on ${f.when(endpoint.disabledAt)}`;
  return `<strong>Disabled</strong>${since}: ${esc(why)} (${esc(endpoint.disabledReason ?? '–')})`;
}

/** A one-button form whose button names the endpoint for a screen reader (several rows, one label). */
function endpointButton(action: string, csrf: string, label: string, url: string, cls: string): string {
  return `<form method="post" action="${esc(action)}" class="inline">${csrfField(csrf)}<button type="submit" class="${cls}">${esc(label)}<span class="visually-hidden"> to ${esc(url)}</span></button></form>`;
}

function endpointLink(href: string, label: string, url: string): string {
  return `<a href="${esc(href)}">${esc(label)}<span class="visually-hidden"> of ${esc(url)}</span></a>`;
}

/** The list of endpoints and the form adding one; `created` is the secret of the one just added. */
export function webhooksBody(options: {
  endpoints: readonly WebhookEndpoint[];
  f: Formats;
  csrf: string;
  form?: EndpointForm;
  created?: { url: string; secret: string };
  done?: string | undefined;
  /** The add form's one-time id (once-forms.ts). */
  formId: string;
}): string {
  const { f, csrf, created } = options;
  const rows = options.endpoints
    .map((e) => {
      const base = webhookBase(e.id);
      const controls = [
        endpointLink(`${base}/deliveries`, 'Deliveries', e.url),
        e.status === 'enabled'
          ? endpointButton(`${base}/test`, csrf, 'Send test event', e.url, 'secondary')
          : '',
        `<a href="${esc(`${base}/delete`)}">Delete…<span class="visually-hidden"> ${esc(e.url)}</span></a>`,
      ]
        .filter(Boolean)
        .join(' ');
      return `<tr><td><code>${esc(e.url)}</code></td><td>${e.description === null ? '–' : esc(e.description)}</td><td>${e.events.map((event) => `<code>${esc(event)}</code>`).join('<br>')}</td><td>${stateOf(e, f)}</td><td>${e.failingSince === null ? '–' : f.when(e.failingSince)}</td><td>${controls}</td></tr>`;
    })
    .join('');
  const list =
    rows === ''
      ? '<p>No endpoints yet.</p>'
      : `<div class="scroll"><table><thead><tr><th>URL</th><th>Description</th><th>Events</th><th>State</th><th>Failing since</th><th>Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  const secret = created
    ? `<div class="ok" role="status"><p>Endpoint <code>${esc(created.url)}</code> added. Copy its signing secret now: it is shown only once and cannot be shown again. Your receiver checks each delivery's Booking-Signature with it.</p><p class="key" aria-label="Signing secret">${esc(created.secret)}</p></div>`
    : '';
  return `${flash(options.done)}<h1>Webhooks</h1>
<p>Endpoints receive a signed POST for each event they subscribe to; a failed delivery is tried again for 72 hours. An endpoint that answers 410 Gone, or fails every attempt for 3 days, is disabled.</p>
${secret}
${list}
${addForm(options.form ?? EMPTY_FORM, csrf, options.formId)}`;
}

function addForm(form: EndpointForm, csrf: string, formId: string): string {
  const error = form.error;
  const invalid = (param: string) =>
    error?.param === param ? ' aria-invalid="true" aria-describedby="endpoint-error"' : '';
  const boxes = WEBHOOK_EVENT_TYPES.map(
    (type) =>
      `<label class="check"><input type="checkbox" name="events" value="${esc(type)}"${form.events.includes(type) ? ' checked' : ''}> <code>${esc(type)}</code> – ${esc(EVENT_MEANINGS[type])}</label>`,
  ).join('\n');
  return `<div class="card"><h2 id="add-endpoint">Add an endpoint</h2>
${error ? `<p class="error" role="alert" id="endpoint-error">${esc(error.message)}</p>` : ''}<form method="post" action="/console/webhooks" aria-labelledby="add-endpoint">${csrfField(csrf)}<input type="hidden" name="form_id" value="${esc(formId)}">
<label for="url">URL (https)</label><input id="url" name="url" type="url" required maxlength="2000" size="60" value="${esc(form.url)}"${invalid('url')}>
<label for="description">Description (optional)</label><input id="description" name="description" maxlength="200" size="60" value="${esc(form.description)}"${invalid('description')}>
<fieldset${invalid('events')}><legend>Events to receive</legend>
${boxes}
</fieldset>
<button type="submit" class="primary">Add endpoint</button></form></div>`;
}

/** Deleting, stated before the button that does it (as cancelling a booking is). */
export function deleteWebhookBody(endpoint: WebhookEndpoint, csrf: string): string {
  const base = webhookBase(endpoint.id);
  return `<h1>Delete this webhook endpoint?</h1>
<p><code>${esc(endpoint.url)}</code>${endpoint.description === null ? '' : ` – ${esc(endpoint.description)}`}</p>
<div class="notice" role="note"><ul><li>Nothing more is sent to it, including deliveries still waiting to be tried again.</li><li>Its delivery log is deleted with it.</li><li>This cannot be undone: to receive events there again, add it again (it gets a new secret).</li></ul></div>
<form method="post" action="${esc(`${base}/delete`)}">${csrfField(csrf)}<p><button type="submit" class="danger">Delete the endpoint</button></p></form>
<p><a href="/console/webhooks">Keep it</a></p>`;
}

/** One page of an endpoint's deliveries, the latest first; `older` is the next page's `before` (a cursor). */
export function deliveriesBody(options: {
  endpoint: WebhookEndpoint;
  deliveries: readonly WebhookDelivery[];
  older: string | null;
  paged: boolean;
  f: Formats;
  csrf: string;
  done?: string | undefined;
}): string {
  const { endpoint, f } = options;
  const base = webhookBase(endpoint.id);
  const when = (ms: number | null) => (ms === null ? '–' : f.when(ms));
  const rows = options.deliveries
    .map(
      (d) =>
        `<tr class="d-${esc(d.status)}"><td><code>${esc(d.eventType)}</code></td><td><code>${esc(d.eventId)}</code></td><td>${esc(DELIVERY_STATES[d.status])}</td><td>${d.attempts}</td><td>${d.responseCode ?? '–'}</td><td>${d.lastError === null ? '–' : esc(d.lastError)}</td><td>${when(d.lastAttemptAt)}</td><td>${d.status === 'pending' ? f.when(d.nextAttemptAt) : '–'}</td></tr>`,
    )
    .join('');
  const table =
    rows === ''
      ? `<p>${options.paged ? 'No older deliveries.' : 'No deliveries yet.'}</p>`
      : `<div class="scroll"><table><thead><tr><th>Event</th><th>Event id</th><th>Status</th><th>Attempts</th><th>Response</th><th>Error</th><th>Last attempt</th><th>Next attempt</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  const pages = [
    options.paged ? `<a href="${esc(`${base}/deliveries`)}">Latest deliveries</a>` : '',
    options.older === null
      ? ''
      : `<a href="${esc(`${base}/deliveries?before=${encodeURIComponent(options.older)}`)}">Older deliveries</a>`,
  ]
    .filter(Boolean)
    .join(' · ');
  return `${flash(options.done)}<h1>Deliveries</h1>
<p>To <code>${esc(endpoint.url)}</code>${endpoint.description === null ? '' : ` – ${esc(endpoint.description)}`} · ${stateOf(endpoint, f)}</p>
${endpoint.status === 'enabled' ? `<div>${endpointButton(`${base}/test`, options.csrf, 'Send test event', endpoint.url, 'secondary')}</div>` : ''}
${table}
${pages ? `<nav aria-label="Pages of deliveries"><p>${pages}</p></nav>` : ''}
<p><a href="/console/webhooks">Back to webhooks</a></p>`;
}

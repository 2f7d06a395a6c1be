import {
  OUTBOX_STATUSES,
  type OutboxKind,
  type OutboxMessage,
  type OutboxStatus,
} from '../../domain/outbox.ts';
import { esc, type Formats } from './page.ts';

/**
 * What customers were told: the organisation's outbox (newest first, by status) and one booking's
 * messages on its page. Each row says what, to whom, how it went (the provider's reason when it
 * failed) and, once rendered, the words themselves.
 */

const KIND_LABELS: Record<OutboxKind, string> = {
  confirmed: 'Confirmation',
  payment_link: 'Payment link',
  booking_page_link: 'Booking-page link',
  rescheduled: 'New time',
  cancelled: 'Cancellation',
  reminder: 'Reminder',
  verification_code: 'Verification code',
};

const STATUS_LABELS: Record<OutboxStatus, string> = {
  pending: 'To send',
  sent: 'Sent',
  failed: 'Failed',
  logged: 'Logged (no provider set up)',
};

/**
 * The table of messages; `withBooking` adds a column linking each to its booking (the outbox page).
 * Times are said by `f`, or by `f` of the message (the outbox: its booking's location's zone).
 */
export function messagesTable(
  messages: readonly OutboxMessage[],
  formatsOf: Formats | ((message: OutboxMessage) => Formats),
  now: number,
  options: { withBooking: boolean },
): string {
  const rows = messages
    .map((m) => {
      const f = typeof formatsOf === 'function' ? formatsOf(m) : formatsOf;
      // A retry waiting says why the last try failed (credentials refused, a provider down).
      const lastTry = m.status === 'pending' && m.lastError ? ` (last try: ${esc(m.lastError)})` : '';
      const state =
        m.status === 'pending' && m.dueAt > now
          ? `Scheduled for ${f.when(m.dueAt)}${lastTry}`
          : m.status === 'failed'
            ? `Failed: ${esc(m.lastError ?? 'no reason given')}`
            : `${esc(STATUS_LABELS[m.status])}${m.sentAt === null ? '' : ` ${f.when(m.sentAt)}`}`;
      const booking = options.withBooking
        ? `<td><a href="/console/bookings/${esc(encodeURIComponent(m.reference))}">${esc(m.reference)}</a></td>`
        : '';
      return `<tr class="m-${esc(m.status)}"><td>${f.when(m.createdAt)}</td>${booking}<td>${esc(KIND_LABELS[m.kind])}</td><td>${m.channel === 'sms' ? 'SMS' : 'E-mail'} to ${esc(m.to)}</td><td>${state}</td><td>${m.attempts}</td><td>${wordsOf(m.body)}</td></tr>`;
    })
    .join('');
  return `<div class="scroll"><table><thead><tr><th>Written</th>${options.withBooking ? '<th>Booking</th>' : ''}<th>Message</th><th>To</th><th>State</th><th>Tries</th><th>Text</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The outbox page: a status filter and the newest messages. */
export function outboxBody(
  messages: readonly OutboxMessage[],
  status: OutboxStatus | undefined,
  limit: number,
  f: Formats | ((message: OutboxMessage) => Formats),
  now: number,
): string {
  const options = [['', 'All'], ...OUTBOX_STATUSES.map((s) => [s, STATUS_LABELS[s]])]
    .map(
      ([value, label]) =>
        `<option value="${esc(value!)}"${(status ?? '') === value ? ' selected' : ''}>${esc(label!)}</option>`,
    )
    .join('');
  const list =
    messages.length === 0
      ? '<p>No messages.</p>'
      : `${messages.length === limit ? `<p>The newest ${limit} are shown.</p>` : ''}${messagesTable(messages, f, now, { withBooking: true })}`;
  return `<h1>Outbox</h1>
<p>Confirmations, links, reminders and notes of changes sent to customers. A failed message can be sent again from its booking.</p>
<form method="get" action="/console/outbox" class="toolbar"><div><label for="status">Show</label><select id="status" name="status">${options}</select></div><button type="submit" class="secondary">Filter</button></form>
${list}`;
}

/** The words a rendered message said (SMS text, or an e-mail's subject and text), folded away. */
function wordsOf(body: string | null): string {
  if (body === null) return '–';
  let words: string;
  try {
    const parsed = JSON.parse(body) as { subject?: string; text?: string };
    words = [parsed.subject, parsed.text].filter(Boolean).join('\n\n');
  } catch {
    words = body;
  }
  return `<details><summary>Show</summary><pre class="words">${esc(words)}</pre></details>`;
}

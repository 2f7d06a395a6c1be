import { type BookingDetail, refusedRefundWords } from '../../app/console-service.ts';
import type { Slot } from '../../domain/availability/types.ts';
import { CANCEL_REASON_MAX_LENGTH } from '../../domain/booking/booking.ts';
import { type ChangeDisclosure, changeTerms } from '../../domain/booking/change-policy.ts';
import { effectiveStatus } from '../../domain/booking/state-machine.ts';
import { messagesTable } from './outbox-page.ts';
import { actionForm, csrfField, esc, type Formats, STATUS_LABELS } from './page.ts';

/** The send-again button's words, for the statuses whose message can be sent again (as MCP send_link). */
const SEND_AGAIN: Record<string, string> = {
  confirmed: 'Send the confirmation again',
  pending_payment: 'Send the payment link again',
  pending_confirmation: 'Send the booking-page link again',
};

/**
 * What a booking's page says was just done, by the key the redirect after the change carries
 * (`?done=cancelled`). Only these words are ever shown: a link with any other text in `done` (someone
 * else's words on the console's own page, a phishing lure) shows nothing.
 */
export const DONE_TEXTS = {
  completed: 'Completed.',
  needs_checkout: 'Marked as needing checkout.',
  no_show: 'Marked as a no-show.',
  deposit_paid: 'Deposit recorded as paid.',
  fee_charged: 'Fee processed.',
  fee_waived: 'Fee waived; the reason is in the event log.',
  sent_sms: 'Sent again by SMS (see the messages below).',
  sent_email: 'Sent again by e-mail (see the messages below).',
  sent_sms_email: 'Sent again by SMS and by e-mail (see the messages below).',
  cancelled: 'Cancelled.',
  cancelled_following: 'Cancelled, with the later visits of its series.',
  rescheduled: 'Rescheduled.',
  rescheduled_following: 'Rescheduled, with the later visits of its series.',
  booked: 'Booked.',
  booked_client_on_file:
    'Booked for the client already on file with that phone or e-mail, under their name on file (below), not the name typed.',
  already_booked: 'Already booked at that time: this is that booking, nothing new was booked.',
} as const;

export type Done = keyof typeof DONE_TEXTS;

/** The words of a `done` key, or undefined for anything else. */
export function doneText(key: string | undefined): string | undefined {
  return key !== undefined && Object.hasOwn(DONE_TEXTS, key) ? DONE_TEXTS[key as Done] : undefined;
}

/**
 * A booking's page: everything about it, the actions its status allows, its messages and event log;
 * `refusal`, a change just refused, is said at its top.
 */
export function bookingBody(
  d: BookingDetail,
  f: Formats,
  csrf: string,
  done: string | undefined,
  now: number,
  mayWaive = true,
  refusal?: string,
): string {
  const flash = doneText(done);
  const b = d.booking;
  const base = `/console/bookings/${encodeURIComponent(b.reference)}`;
  const money = (minor: number) => f.money(minor, b.currency);
  const act = (action: string, label: string, cls = 'secondary') =>
    actionForm(`${base}/action`, csrf, label, { action }, cls);
  const actions: string[] = [];
  // Completing, checking out and a no-show are for an appointment that has started: before, the
  // state machine refuses them, so they are not offered (a note says when they will be).
  const started = now >= b.startsAt;
  // A hold whose time ran out is expired, whether or not the sweeper has written it so yet.
  const status = effectiveStatus(b, now);
  if (status === 'confirmed' && started) {
    actions.push(
      act('complete', 'Complete', 'primary'),
      act('check_out', 'Needs checkout'),
      act('no_show', 'Mark no-show', 'danger'),
    );
  }
  if (status === 'needs_checkout') actions.push(act('complete', 'Complete', 'primary'));
  if (status === 'pending_payment') actions.push(act('deposit_paid', 'Deposit paid at the desk', 'primary'));
  for (const fee of Object.values(b.fees)) {
    if (fee.status === null) {
      const what = fee.kind === 'no_show' ? 'no-show' : 'late-cancellation';
      actions.push(
        actionForm(
          `${base}/action`,
          csrf,
          `Charge ${what} fee (${money(fee.chargeAmountMinor)})`,
          { action: 'charge_fee', fee: fee.kind },
          'primary',
        ),
        mayWaive
          ? `<a href="${esc(`${base}/waive?fee=${fee.kind}`)}">Waive ${what} fee…</a>`
          : `<span>Only an owner or admin may waive the ${what} fee here.</span>`,
      );
    }
  }
  const live = ['confirmed', 'pending_payment', 'pending_confirmation'].includes(status);
  if (live) {
    actions.push(
      `<a href="${esc(`${base}/reschedule`)}">Reschedule</a>`,
      `<a href="${esc(`${base}/cancel`)}">Cancel…</a>`,
    );
  }
  const sendAgain = SEND_AGAIN[status];
  if (sendAgain && b.startsAt > now && (d.client.phone || d.client.email)) {
    actions.push(act('send_link', sendAgain));
  }
  const fees = Object.values(b.fees)
    .map(
      (fee) =>
        `<tr><td>${fee.kind === 'no_show' ? 'No-show' : 'Late cancellation'} (${fee.feePercentage}%)</td><td>${esc(money(fee.amountMinor))}</td><td>${esc(money(fee.depositCreditMinor))}</td><td>${esc(money(fee.chargeAmountMinor))}</td><td>${esc(fee.status ?? 'pending')}${fee.failureReason ? `: ${esc(fee.failureReason)}` : ''}</td></tr>`,
    )
    .join('');
  const services = d.services.map((s) => `<li>${esc(s.name)} – ${esc(money(s.priceMinor))}</li>`).join('');
  const events = d.events
    .map(
      (e) =>
        `<tr><td>${f.when(e.at)}</td><td>${esc(e.from && e.from !== e.to ? `${STATUS_LABELS[e.from] ?? e.from} → ` : '')}${esc(STATUS_LABELS[e.to] ?? e.to)}</td><td>${esc(e.by)}</td><td>${e.details ? detailsInWords(e.details, f, b.currency, ['paid', 'refunded', 'retained'].includes(b.depositStatus)) : ''}</td></tr>`,
    )
    .join('');
  const protection = b.protection.applies
    ? `Applies: late cancellation ${b.protection.lateCancellationFeePercentage ?? 0}%, no-show ${b.protection.noShowFeePercentage ?? 0}%; card ${b.protection.paymentMethodSaved ? 'saved' : 'not saved'}`
    : 'Does not apply';
  // A hold (a deposit or a card to come, a code, a waitlist claim) keeps its time until then: the desk
  // can tell the caller how long they have.
  const held =
    (status === 'pending_payment' || status === 'pending_confirmation') && b.holdExpiresAt !== null
      ? b.holdExpiresAt
      : null;
  // A change refused (another desk changed the booking first): said above the booking as it now is.
  const said = refusal
    ? `<p class="error" role="alert">Not done. ${esc(refusal)}</p>`
    : flash
      ? `<p class="ok" role="status">${esc(flash)}</p>`
      : '';
  return `${said}<h1>Booking ${esc(b.reference)}: ${esc(STATUS_LABELS[status] ?? status)}</h1>
<div class="card">
<dl>
<dt>When</dt><dd>${f.when(b.startsAt)} – ${esc(f.time(b.endsAt))}</dd>
<dt>Where</dt><dd>${esc(d.location.name)}, with ${esc(d.staffName)}</dd>
<dt>Client</dt><dd><a href="/console/clients?q=${esc(encodeURIComponent(d.client.phone ?? d.client.email ?? d.client.name))}">${esc(d.client.name)}</a>${d.client.phone ? ` · ${esc(d.client.phone)}` : ''}${d.client.email ? ` · ${esc(d.client.email)}` : ''}</dd>
<dt>Services</dt><dd><ul>${services}</ul>Total ${esc(money(b.totalPriceMinor))}</dd>
<dt>Notes</dt><dd>${b.notes ? esc(b.notes) : '–'}</dd>
${held ? `<dt>Held until</dt><dd>${f.when(held)}</dd>\n` : ''}<dt>Deposit</dt><dd>${b.depositMinor === null ? 'None' : `${esc(money(b.depositMinor))} (${esc(b.depositStatus)})`}</dd>
<dt>Protection</dt><dd>${esc(protection)}</dd>
</dl>
</div>
${d.refusedRefund ? `<div class="notice" role="note"><p><strong>Refund refused.</strong> ${esc(refusedRefundWords(d.refusedRefund, f.dateTime(d.refusedRefund.at)))}</p></div>` : ''}
${actions.length > 0 ? `<div class="card toolbar" role="group" aria-label="Actions">${actions.join('\n')}</div>` : ''}
${status === 'confirmed' && !started ? '<p>Complete, needs checkout and no-show are offered once the appointment has started.</p>' : ''}
${fees ? `<div class="card"><h2>Fees</h2><div class="scroll"><table><thead><tr><th>Fee</th><th>Amount</th><th>Deposit credit</th><th>To charge</th><th>Status</th></tr></thead><tbody>${fees}</tbody></table></div></div>` : ''}
<div class="card"><h2>Messages to the client</h2>${d.messages.length === 0 ? '<p>None.</p>' : messagesTable(d.messages, f, now, { withBooking: false })}</div>
<div class="card"><h2>Event log</h2><div class="scroll"><table><thead><tr><th>When</th><th>Change</th><th>By</th><th>Details</th></tr></thead><tbody>${events}</tbody></table></div></div>
<p><a href="/console/diary?location=${esc(encodeURIComponent(b.locationSlug))}&date=${esc(f.isoDate(b.startsAt))}">Back to the diary</a></p>`;
}

/** Said above the terms when those the desk confirmed are no longer the booking's. */
export const CANCEL_TERMS_CHANGED =
  'Nothing was cancelled: what cancelling means changed since this page was opened (the cancellation window passed, or the booking was changed meanwhile). Here is what it means now.';

/** What cancelling would mean, stated before the button that does it. */
export function cancelBody(
  d: BookingDetail,
  disclosure: ChangeDisclosure,
  refusal: string | null,
  f: Formats,
  csrf: string,
  laterVisits: readonly number[] = [],
  alert: string | null = null,
  reason = '',
): string {
  const b = d.booking;
  const base = `/console/bookings/${encodeURIComponent(b.reference)}`;
  const lines = [
    disclosure.late
      ? 'This is a late cancellation (inside the cancellation window).'
      : 'This cancellation is on time.',
  ];
  if (disclosure.depositRefunded === true) lines.push('The paid deposit will be refunded.');
  if (disclosure.depositRefunded === false) lines.push('The paid deposit will be retained.');
  lines.push(
    disclosure.fee
      ? `A late-cancellation fee of ${f.money(disclosure.fee.amountMinor, disclosure.fee.currency)} (${disclosure.fee.feePercentage}%) will be recorded; ${f.money(disclosure.fee.chargeAmountMinor, disclosure.fee.currency)} to charge after the deposit credit.`
      : 'No fee applies.',
  );
  const form = refusal
    ? `<p class="error" role="alert">${esc(refusal)}</p>`
    : `<form method="post" action="${esc(`${base}/cancel`)}">${csrfField(csrf)}
<input type="hidden" name="terms" value="${esc(changeTerms(b.startsAt, disclosure))}">
${seriesScopeField(laterVisits, f, 'cancelled, each under its own cancellation window')}<label for="reason">Reason (optional)</label><input id="reason" name="reason" maxlength="${CANCEL_REASON_MAX_LENGTH}"${reason ? ` value="${esc(reason)}"` : ''}>
<p><button type="submit" class="danger">Cancel the booking</button></p></form>`;
  // Refused (cancelled already, past, a late cancellation the location forbids): only why, not what a
  // cancellation that cannot happen would cost.
  const heading = refusal
    ? `Booking ${esc(b.reference)} cannot be cancelled`
    : `Cancel booking ${esc(b.reference)}?`;
  const notice = refusal
    ? ''
    : `<div class="notice" role="note"><ul>${lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul></div>\n`;
  const changed = alert && !refusal ? `<p class="error" role="alert">${esc(alert)}</p>\n` : '';
  return `<h1>${heading}</h1>
<p>${esc(d.client.name)}, ${f.when(b.startsAt)}</p>
${changed}${notice}${form}
<p><a href="${esc(base)}">${refusal ? 'Back to the booking' : 'Keep the booking'}</a></p>`;
}

/**
 * For a visit of a series with later visits: whether the change is of this visit only (the default)
 * or of it and every later one (`scope` following, as REST and MCP offer), the later visits listed.
 */
function seriesScopeField(laterVisits: readonly number[], f: Formats, what: string): string {
  if (laterVisits.length === 0) return '';
  const count = laterVisits.length === 1 ? 'the later visit' : `the ${laterVisits.length} later visits`;
  const dates = laterVisits.map((at) => f.when(at)).join('; ');
  return `<fieldset><legend>Which visits?</legend>
<label><input type="radio" name="scope" value="one" checked> This visit only</label>
<label><input type="radio" name="scope" value="following"> This visit and ${count} (${dates}), ${esc(what)}</label>
</fieldset>
`;
}

/** The series' later visits a move takes along, and whether this page moves them (`following`). */
export interface SeriesMove {
  laterVisits: readonly number[];
  following: boolean;
}

/** The slots availability offers for the booking's services on a day, each a button that moves it there. */
export function rescheduleBody(
  d: BookingDetail,
  date: string,
  slots: readonly Slot[],
  staffNames: ReadonlyMap<string, string>,
  f: Formats,
  csrf: string,
  refusal: string | null = null,
  series: SeriesMove = { laterVisits: [], following: false },
): string {
  const b = d.booking;
  const base = `/console/bookings/${encodeURIComponent(b.reference)}`;
  if (refusal) {
    return `<h1>Reschedule ${esc(b.reference)}</h1>
<p>${esc(d.client.name)}, now ${f.when(b.startsAt)} with ${esc(d.staffName)}.</p>
<p class="error" role="alert">${esc(refusal)}</p>
<p><a href="${esc(base)}">Back to the booking</a></p>`;
  }
  // Its own time with its own stylist is where it is, not a move.
  const buttons = slots
    .filter((s) => s.startsAt !== b.startsAt || s.staffId !== b.staffId)
    .map((s) =>
      actionForm(
        `${base}/reschedule`,
        csrf,
        `${f.time(s.startsAt)} with ${staffNames.get(s.staffId) ?? '?'}`,
        {
          starts_at: new Date(s.startsAt).toISOString(),
          staff_id: s.staffId,
          from: whereItIs(b),
          ...(series.following && { scope: 'following' }),
        },
      ),
    )
    .join('\n');
  return `<h1>Reschedule ${esc(b.reference)}</h1>
<p>${esc(d.client.name)}, now ${f.when(b.startsAt)} with ${esc(d.staffName)}.</p>
${seriesMoveChoice(series, `${base}/reschedule?date=${encodeURIComponent(date)}`, f)}<form method="get" action="${esc(`${base}/reschedule`)}" class="toolbar"><div><label for="date">Day</label><input id="date" type="date" name="date" value="${esc(date)}"></div>${series.following ? '<input type="hidden" name="scope" value="following">' : ''}<button type="submit" class="secondary">Show free times</button></form>
${buttons === '' ? '<p>No free times that day.</p>' : `<div class="toolbar" role="group" aria-label="Free times">${buttons}</div>`}
<p><a href="${esc(base)}">Back to the booking</a></p>`;
}

/**
 * Where a booking is (its start and stylist), as a reschedule form carries it: a time picked on a page
 * opened before another desk moved the booking moves nothing (console-routes.ts).
 */
export function whereItIs(booking: { startsAt: number; staffId: string }): string {
  return `${booking.startsAt}.${booking.staffId}`;
}

/** Which visits a picked time moves, and the link to the other choice. */
function seriesMoveChoice(series: SeriesMove, here: string, f: Formats): string {
  const { laterVisits, following } = series;
  if (laterVisits.length === 0) return '';
  const count = laterVisits.length === 1 ? 'the later visit' : `the ${laterVisits.length} later visits`;
  if (!following) {
    return `<p class="notice" role="note">A visit of a series: a time picked moves this visit only. <a href="${esc(`${here}&scope=following`)}">Move this visit and ${count} instead</a></p>
`;
  }
  return `<p class="notice" role="note">A time picked moves this visit and ${count} (${laterVisits.map((at) => f.when(at)).join('; ')}), each by as many days, to the time picked; if any of them is not free, none moves. <a href="${esc(here)}">Move this visit only</a></p>
`;
}

const REQUIREMENTS: Record<string, string> = {
  deposit: 'Deposit paid',
  protection_setup: 'Card set up for Booking Protection',
};

/**
 * An event's details as a sentence (times in the location's zone, money in the booking's currency),
 * escaped. `depositPaid`: the booking had a deposit paid, so its cancellation says
 * what became of it (a cancellation records deposit_refunded false for a booking with none).
 */
function detailsInWords(
  details: Record<string, unknown>,
  f: Formats,
  currency: string,
  depositPaid: boolean,
): string {
  const num = (value: unknown) => (typeof value === 'number' ? value : null);
  const moved = details.rescheduled as { from?: unknown; to?: unknown } | undefined;
  if (moved && num(moved.from) !== null && num(moved.to) !== null) {
    return `Moved from ${f.when(num(moved.from)!)} to ${f.when(num(moved.to)!)}`;
  }
  if (typeof details.completed === 'string') {
    return esc(REQUIREMENTS[details.completed] ?? details.completed);
  }
  if (num(details.deposit_minor) !== null) {
    return esc(`Deposit of ${f.money(num(details.deposit_minor)!, currency)} paid`);
  }
  if (typeof details.fee === 'string') {
    const what = details.fee === 'no_show' ? 'No-show' : 'Late-cancellation';
    const amount = num(details.charge_amount_minor);
    const reason = typeof details.reason === 'string' ? `: ${details.reason}` : '';
    return esc(
      `${what} fee ${String(details.outcome ?? '')}${amount === null ? '' : ` (${f.money(amount, currency)})`}${reason}`,
    );
  }
  if (typeof details.late === 'boolean') {
    const deposit = !depositPaid
      ? ''
      : details.deposit_refunded === true
        ? '; deposit refunded'
        : details.deposit_refunded === false
          ? '; deposit retained'
          : '';
    return esc(`${details.late ? 'Late cancellation' : 'Cancelled in time'}${deposit}`);
  }
  return esc(
    Object.entries(details)
      .map(
        ([key, value]) =>
          `${key.replace(/_/g, ' ')}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
      )
      .join('; '),
  );
}

/**
 * Waiving a fee, asked before it is done: the fee, what letting it go means, and a reason (kept in
 * the event log) the form requires.
 */
export function waiveBody(
  d: BookingDetail,
  kind: 'late_cancellation' | 'no_show',
  f: Formats,
  csrf: string,
  refusal?: string,
): string {
  const b = d.booking;
  const base = `/console/bookings/${encodeURIComponent(b.reference)}`;
  const fee = b.fees[kind];
  const what = kind === 'no_show' ? 'no-show' : 'late-cancellation';
  if (!fee || fee.status !== null) {
    return `<h1>Waive a fee on ${esc(b.reference)}</h1>
<p class="error" role="alert">This booking has no ${what} fee waiting to be processed.</p>
<p><a href="${esc(base)}">Back to the booking</a></p>`;
  }
  const amount = f.money(fee.chargeAmountMinor, b.currency);
  return `<h1>Waive the ${what} fee on ${esc(b.reference)}?</h1>
<p>${esc(d.client.name)}, ${f.when(b.startsAt)}</p>
<div class="notice" role="note"><p>${esc(`The ${what} fee of ${f.money(fee.amountMinor, b.currency)} (${amount} to charge after the deposit credit) will not be charged. This cannot be undone.`)}</p></div>
${refusal ? `<p class="error" role="alert">${esc(refusal)}</p>` : ''}<form method="post" action="${esc(`${base}/waive`)}">${csrfField(csrf)}
<input type="hidden" name="fee" value="${esc(kind)}">
<label for="reason">Reason (kept in the event log)</label><input id="reason" name="reason" required maxlength="500">
<p><button type="submit" class="danger">Waive the ${esc(amount)} fee</button></p></form>
<p><a href="${esc(base)}">Keep the fee</a></p>`;
}

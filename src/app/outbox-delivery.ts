import { randomUUID } from 'node:crypto';
import type { Db } from '../data/database.ts';
import {
  type ClaimedMessageKey,
  claimDueMessages,
  countDueMessages,
  dropClaimedMessage,
  type MessageFactsRow,
  type MessageOutcome,
  messageFactsOf,
  type OutboxRow,
  settleMessages,
  supersededMessages,
} from '../data/outbox-repository.ts';
import { REDONE_IF_LOST, writeStatement } from '../data/write-transaction.ts';
import { isLate } from '../domain/booking/change-policy.ts';
import { effectiveStatus } from '../domain/booking/state-machine.ts';
import { type MessageFacts, type RenderedMessage, renderMessage } from '../domain/message-templates.ts';
import {
  DEFAULT_LEASE_MS,
  MAX_ATTEMPTS,
  type OutboxChannel,
  retryDelayMs,
  seriesNoteOf,
  stillDue,
} from '../domain/outbox.ts';
import { CODE_VALID_MS } from '../domain/public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../domain/waitlist.ts';
import type { Clock } from './clock.ts';
import { proofSecretsOf } from './contact-proof.ts';
import type { CustomerLinks } from './customer-links.ts';
import { DeliveryError, type MessageSender, type TwilioSettings } from './message-sender.ts';
import { allEnded, startPeriodicWork } from './periodic-work.ts';
import { isTextable } from './phone-destinations.ts';
import { textedCountriesOf } from './texted-countries.ts';

/** Why a text was not sent: the number is not one texts go to (phone-destinations.ts). */
const NOT_TEXTABLE =
  'Not sent: texts go only to personal numbers in the countries the organisation texts (its locations’ and policies.sms_countries).';

/**
 * Delivering the outbox: at least once, never twice once a provider accepted a message.
 *
 * A worker claims a few due messages in one write (a lease, and one attempt counted),
 * sends each outside any transaction, and records the outcome only while its claim holds. A worker
 * killed at any point leaves its claims to lapse; the next worker (this instance restarted, or
 * another) takes them over after the lease and sends again with the same message id, which is the
 * provider's idempotency key (the e-mail's Message-ID, the SMS request's idempotency token): a message
 * accepted just before the crash is recognised as the same one. Once `sent` is recorded it is never
 * claimed again. On PostgreSQL each message is claimed by one instance (FOR UPDATE SKIP LOCKED).
 *
 * A refusal is tried again with exponential backoff (retryDelayMs) up to MAX_ATTEMPTS, or failed at
 * once when the provider says it is final; either way the provider's reason is kept, without the
 * recipient. A channel without a provider records its messages `logged`, with what they say.
 */
export interface OutboxDelivery {
  db: Db;
  clock: Clock;
  /** The provider of each channel; null: none configured, messages are logged. */
  senders: Record<OutboxChannel, MessageSender | null>;
  links: CustomerLinks;
  /**
   * How long a claim lasts: longer than any one send may take (the providers time out at 20 s). A
   * send that waited for its turn (sendTurns) goes only while its lease still has the provider's
   * timeout left; otherwise the message is given back unsent, for the next batch.
   */
  leaseMs?: number;
  /** Messages claimed at once (and sent concurrently). */
  batchSize?: number;
  /** Told of each failed attempt, with no personal data (for the log). */
  onAttemptFailed?: (event: {
    id: string;
    channel: OutboxChannel;
    attempts: number;
    reason: string;
    final: boolean;
  }) => void;
}

export interface DeliveryCounts {
  sent: number;
  logged: number;
  retried: number;
  failed: number;
  dropped: number;
}

const DEFAULT_BATCH = 16;

/**
 * Claims and delivers one batch of due messages; what became of them. The batch costs the database
 * a fixed number of statements (the claim, the facts of its bookings) plus one for each turn of the
 * event loop in which outcomes became known (outcomeRecorder), none of them inside BEGIN and COMMIT
 * on PostgreSQL (writeStatement).
 */
export async function deliverDueMessages(delivery: OutboxDelivery): Promise<DeliveryCounts> {
  const counts: DeliveryCounts = { sent: 0, logged: 0, retried: 0, failed: 0, dropped: 0 };
  const token = randomUUID();
  const now = delivery.clock.nowMs();
  const claimed = await writeStatement(
    delivery.db,
    (trx) =>
      claimDueMessages(
        trx,
        token,
        now,
        now + (delivery.leaseMs ?? DEFAULT_LEASE_MS),
        delivery.batchSize ?? DEFAULT_BATCH,
      ),
    REDONE_IF_LOST,
  );
  if (claimed.length === 0) return counts;
  const facts = await messageFactsOf(
    delivery.db,
    claimed.map((row) => ({ organisationId: row.organisation_id, bookingId: row.booking_id })),
    { withCheckouts: claimed.some((row) => row.kind === 'payment_link') },
  );
  // Only a message tried before can have been replaced while it was out (dropPendingMessages).
  const superseded = await supersededMessages(
    delivery.db,
    claimed.filter((row) => row.attempts > 1),
  );
  const texted = await textedCountriesOfBatch(delivery.db, claimed, facts);
  const settle = outcomeRecorder(delivery.db, token);
  const turns = {
    sms: sendTurns(delivery.senders.sms),
    email: sendTurns(delivery.senders.email),
  };
  await allEnded(
    claimed.map(async (row) => {
      const rowFacts = superseded.has(row.seq) ? undefined : facts.get(row.booking_id);
      const countries = texted.get(row.organisation_id) ?? NO_COUNTRIES;
      const outcome = await deliverOne(delivery, row, rowFacts, countries, token, settle, turns[row.channel]);
      // A message given back unsent is none of these: the next batch delivers it.
      if (outcome) counts[outcome]++;
    }),
  );
  return counts;
}

/** A send's turn with its provider: `waited` says whether it had to wait for another send to end. */
interface SendTurns {
  take(): Promise<{ waited: boolean }>;
  done(): void;
}

/**
 * The turns of one provider's sends in a batch: at most its `concurrency` at once, the others in claim
 * order as each one ends. Handed to the provider all at once, the rest would wait in its own queue
 * (nodemailer's pool) with their leases running, and could still be out when another worker takes
 * them over and sends them again; waiting here, each is looked at again when its turn comes.
 */
function sendTurns(sender: MessageSender | null): SendTurns {
  const limit = sender?.concurrency ?? Number.POSITIVE_INFINITY;
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async take() {
      if (running < limit) {
        running += 1;
        return { waited: false };
      }
      // The ending send hands its place over (done), so `running` stays as it is.
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { waited: true };
    },
    done() {
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    },
  };
}

type Settle = (message: ClaimedMessageKey, outcome: MessageOutcome) => Promise<void>;

const NO_COUNTRIES: ReadonlySet<string> = new Set();

/** The countries texted by each organisation with a text in the batch (texted-countries.ts keeps them). */
async function textedCountriesOfBatch(
  db: Db,
  claimed: readonly OutboxRow[],
  facts: ReadonlyMap<string, MessageFactsRow>,
): Promise<Map<string, ReadonlySet<string>>> {
  const texted = new Map<string, ReadonlySet<string>>();
  for (const row of claimed) {
    const version = facts.get(row.booking_id)?.catalogue_version;
    if (row.channel !== 'sms' || texted.has(row.organisation_id) || version === undefined) continue;
    texted.set(row.organisation_id, await textedCountriesOf(db, row.organisation_id, version));
  }
  return texted;
}

/**
 * Records the outcomes of one claimed batch as they come, each once it is known: those that come in
 * the same turn of the event loop (every message of a channel without a provider, sends answered
 * together) share one write (settleMessages), as SQLite's group commit shares a transaction. Nobody
 * waits for anybody else's send: a turn's outcomes are written at the end of that turn.
 */
function outcomeRecorder(db: Db, token: string): Settle {
  let pending: { message: ClaimedMessageKey; outcome: MessageOutcome }[] = [];
  let written: Promise<void> | null = null;
  return (message, outcome) => {
    pending.push({ message, outcome });
    if (!written) {
      written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        const settled = pending;
        pending = [];
        written = null;
        return settleMessages(db, token, settled);
      });
    }
    return written;
  };
}

/** Delivers batches until nothing is due (the operator's `booking outbox deliver`). */
export async function deliverAllDue(delivery: OutboxDelivery): Promise<DeliveryCounts> {
  const total: DeliveryCounts = { sent: 0, logged: 0, retried: 0, failed: 0, dropped: 0 };
  for (;;) {
    const counts = await deliverDueMessages(delivery);
    const handled = Object.values(counts).reduce((a, b) => a + b, 0);
    for (const key of Object.keys(total) as (keyof DeliveryCounts)[]) total[key] += counts[key];
    // Messages retried in this run are due later; stop when a batch found nothing to claim.
    if (handled === 0 || (await countDueMessages(delivery.db, delivery.clock.nowMs())) === 0) return total;
  }
}

async function deliverOne(
  delivery: OutboxDelivery,
  row: OutboxRow,
  facts: MessageFactsRow | undefined,
  textedCountries: ReadonlySet<string>,
  token: string,
  settle: Settle,
  turns: SendTurns,
): Promise<keyof DeliveryCounts | null> {
  const message = { seq: row.seq, organisationId: row.organisation_id };
  const now = delivery.clock.nowMs();
  // Claimed more often than it may be tried: its earlier attempts ended without an outcome (a worker
  // that crashed or failed on it every time). It is given up, not tried for ever.
  if (row.attempts > MAX_ATTEMPTS) {
    const reason = `no outcome was recorded in ${MAX_ATTEMPTS} attempts`;
    delivery.onAttemptFailed?.({
      id: row.id,
      channel: row.channel,
      attempts: row.attempts,
      reason,
      final: true,
    });
    await settle(message, { status: 'failed', last_error: reason });
    return 'failed';
  }
  // A reminder goes as many hours before as the location's policy says now: none once it sends none,
  // later once it asks fewer hours (given back unsent, due then, its attempt not counted).
  if (row.kind === 'reminder' && facts) {
    const hours = facts.reminder_hours_before;
    if (hours <= 0) {
      await writeStatement(delivery.db, (trx) => dropClaimedMessage(trx, message, token), REDONE_IF_LOST);
      return 'dropped';
    }
    const due = facts.starts_at - hours * 3_600_000;
    if (due > now) {
      await settle(message, { due_at: due, attempts: row.attempts - 1 });
      return null;
    }
  }
  let rendered: RenderedMessage | null | undefined;
  try {
    rendered = facts && render(delivery, row, facts, now);
  } catch {
    // A message its booking's facts cannot be written from: tried again later (the facts may be
    // mended meanwhile), failed once its attempts are spent; the rest of the batch goes on.
    return failedAttempt(delivery, row, message, settle, 'the message could not be written', false);
  }
  // To the client's phone or e-mail as it is now, not as it was when the message was written (a
  // re-import corrected it meanwhile): the old one may be somebody else's by now, and the message
  // names the client, the appointment and the link that cancels it. A code goes to the contact it
  // proves. A client with no contact on this channel any more is sent nothing on it.
  const to =
    !rendered || row.kind === 'verification_code' ? row.recipient : currentContact(row.channel, facts!);
  if (!rendered || to === null) {
    await writeStatement(delivery.db, (trx) => dropClaimedMessage(trx, message, token), REDONE_IF_LOST);
    return 'dropped';
  }
  const readdressed: MessageOutcome = to === row.recipient ? {} : { recipient: to };
  // Whatever wrote it (an old client record, an import): a text goes only where texts may go.
  if (row.channel === 'sms' && !isTextable(to, textedCountries)) {
    await settle(message, { ...readdressed, status: 'failed', last_error: NOT_TEXTABLE });
    return 'failed';
  }
  const body = JSON.stringify(
    row.channel === 'sms'
      ? { text: rendered.sms }
      : { subject: rendered.subject, text: rendered.text, html: rendered.html },
  );
  const sender = delivery.senders[row.channel];
  if (!sender) {
    await settle(message, { ...readdressed, status: 'logged', body, sent_at: now });
    return 'logged';
  }
  const { waited } = await turns.take();
  // A send that starts at once has the whole lease (kept above the providers' timeouts). One whose turn
  // came late, with less than the provider's timeout left, could outlast its claim, and another worker
  // would send the message again: it is given back unsent, still due (first in the next claim), its
  // claim released and its attempt not counted, since nothing was tried.
  if (waited && (row.lease_until ?? 0) - delivery.clock.nowMs() < (sender.timeoutMs ?? 0)) {
    turns.done();
    await settle(message, { attempts: row.attempts - 1 });
    return null;
  }
  let providerId: string;
  try {
    ({ providerId } = await sender.send({ id: row.id, to, rendered }).finally(() => turns.done()));
  } catch (error) {
    const reason = error instanceof DeliveryError ? error.message : 'the provider could not be reached';
    return failedAttempt(
      delivery,
      row,
      message,
      settle,
      reason,
      error instanceof DeliveryError && error.permanent,
    );
  }
  await settle(message, {
    ...readdressed,
    status: 'sent',
    // The provider accepted it, whatever it answered besides (an id missing from its answer included).
    provider_id: typeof providerId === 'string' ? providerId.slice(0, 200) : null,
    // Once it went, a code's secrets are the customer's alone: the record keeps the words without them.
    body: row.kind === 'verification_code' ? withoutSecrets(body, proofSecretsOf(row.body)) : body,
    sent_at: delivery.clock.nowMs(),
    last_error: null,
  });
  return 'sent';
}

/** The client's phone (for a text) or e-mail as the booking's facts read it now; null when it has none. */
function currentContact(channel: OutboxChannel, facts: MessageFactsRow): string | null {
  return channel === 'sms' ? facts.client_phone : facts.client_email;
}

/** Records a failed attempt: tried again after its backoff, or failed when final or out of attempts. */
async function failedAttempt(
  delivery: OutboxDelivery,
  row: OutboxRow,
  message: ClaimedMessageKey,
  settle: Settle,
  reason: string,
  permanent: boolean,
): Promise<keyof DeliveryCounts> {
  const final = permanent || row.attempts >= MAX_ATTEMPTS;
  delivery.onAttemptFailed?.({ id: row.id, channel: row.channel, attempts: row.attempts, reason, final });
  const later = delivery.clock.nowMs();
  await settle(message, {
    status: final ? 'failed' : 'pending',
    due_at: final ? row.due_at : later + retryDelayMs(row.attempts),
    last_error: reason,
  });
  return final ? 'failed' : 'retried';
}

/** How long after it is sent a message's words should still hold: it is read a while later. */
const CHANGE_OFFER_MARGIN_MS = 3_600_000;

/**
 * What the booking's page will let the customer do under the location's policy when they read the
 * message: a move or a cancellation the policy forbids once late is not offered where it is late, or
 * will be within CHANGE_OFFER_MARGIN_MS (its words would promise what the page refuses: a reminder
 * sent 24 hours before, as it is by default, at a location that forbids late moves said "See, move or
 * cancel it", and the move was refused a minute later).
 */
function changesOffered(facts: MessageFactsRow, now: number): { move: boolean; cancel: boolean } {
  const rules = { cancellationWindowHours: facts.cancellation_window_hours };
  if (!isLate(facts.starts_at, rules, now + CHANGE_OFFER_MARGIN_MS)) return { move: true, cancel: true };
  return { move: facts.late_reschedule === 'allow', cancel: facts.late_cancellation === 'allow' };
}

/**
 * The message's words from its booking as the batch read it (just after the claim); null when the
 * booking no longer warrants it.
 */
function render(
  delivery: OutboxDelivery,
  row: OutboxRow,
  facts: MessageFactsRow,
  now: number,
): RenderedMessage | null {
  const status = effectiveStatus(
    { status: facts.status, startsAt: facts.starts_at, holdExpiresAt: facts.hold_expires_at },
    now,
  );
  if (!stillDue(row.kind, status, { startsAt: facts.starts_at, endsAt: facts.ends_at }, now)) return null;
  let link: string | null = null;
  let code: string | null = null;
  if (row.kind === 'payment_link' && facts.checkout_session_id) {
    link = delivery.links.paymentUrl(facts.checkout_session_id);
  } else if (row.kind !== 'payment_link' && row.kind !== 'verification_code' && facts.page_token) {
    // Every other message leads back to the booking's own page (a link request, a confirmation, a
    // move, a reminder, a cancellation): a customer who closed the tab needs no phone call.
    link = delivery.links.bookingPageUrl(facts.page_token);
  } else if (row.kind === 'verification_code') {
    const secrets = proofSecretsOf(row.body);
    // A code sent after its ten minutes would only be refused: a new one is asked on the page.
    if (!secrets || now >= row.created_at + CODE_VALID_MS) return null;
    code = secrets.code;
    link = delivery.links.verifyUrl(secrets.token);
  }
  const messageFacts: MessageFacts = {
    kind: row.kind,
    organisationName: facts.organisation_name,
    locale: facts.locale,
    locationName: facts.location_name,
    locationPhone: facts.location_phone,
    timezone: facts.timezone,
    serviceNames: facts.service_names,
    staffName: facts.staff_name,
    // A name typed on the public page goes nowhere until its contact is proven (design.md 9.1).
    clientFirstName: facts.contact_proven === 1 ? facts.first_name : null,
    startsAt: facts.starts_at,
    reference: facts.reference,
    link,
    holdExpiresAt: facts.hold_expires_at,
    depositDue:
      row.kind === 'payment_link' && facts.deposit_minor !== null
        ? money(facts.deposit_minor, facts.currency, facts.locale)
        : null,
    code,
    cancellation: row.kind === 'cancelled' ? cancellationMoney(facts) : null,
    series: seriesNoteOf(row.body),
    now,
    stillHeld: status === 'pending_payment' || status === 'pending_confirmation',
    changes: changesOffered(facts, now),
    waitlistOffer:
      row.kind === 'booking_page_link' &&
      (JSON.parse(facts.pending_requirements ?? '[]') as string[]).includes(WAITLIST_CLAIM),
  };
  return renderMessage(messageFacts);
}

/** What a cancellation did with the customer's money: a paid deposit refunded or kept, a late fee. */
function cancellationMoney(facts: MessageFactsRow): MessageFacts['cancellation'] {
  const paid = facts.deposit_status === 'refunded' || facts.deposit_status === 'retained';
  const fee = facts.late_fee_minor !== null && facts.late_fee_minor > 0 ? facts.late_fee_minor : null;
  if (!paid && fee === null) return null;
  return {
    deposit:
      paid && facts.deposit_minor !== null ? money(facts.deposit_minor, facts.currency, facts.locale) : null,
    depositRefunded: facts.deposit_status === 'refunded',
    fee: fee === null ? null : money(fee, facts.currency, facts.locale),
  };
}

/** The words of a sent verification message with its code and link token blanked. */
function withoutSecrets(body: string, secrets: { code: string; token: string } | null): string {
  if (!secrets) return body;
  return body.split(secrets.token).join('…').split(secrets.code).join('••••••');
}

function money(minor: number, currency: string, locale: string): string {
  const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/**
 * Runs deliverDueMessages every `intervalMs` (at once again after a full batch) until stopped; a
 * failure is reported, never fatal. The returned stop waits for the batch in progress, so a shutdown
 * does not cut a delivery's record short (a cut one would only be sent again, never lost).
 */
export function startOutboxWorker(
  delivery: OutboxDelivery,
  onError: (error: unknown) => void,
  intervalMs = 1_000,
): () => Promise<void> {
  const stop = startPeriodicWork(
    async (stopping) => {
      for (;;) {
        const counts = await deliverDueMessages(delivery);
        const handled = Object.values(counts).reduce((a, b) => a + b, 0);
        if (stopping() || handled < (delivery.batchSize ?? DEFAULT_BATCH)) return;
      }
    },
    onError,
    intervalMs,
  );
  return async () => {
    await stop();
    for (const sender of Object.values(delivery.senders)) sender?.close?.();
  };
}

/**
 * The provider of each channel the configuration names; null where none is configured. The provider
 * packages are loaded only when configured, so commands that send nothing start without them.
 */
export async function sendersFor(settings: {
  email: { smtpUrl: string; mailFrom: string } | null;
  sms: TwilioSettings | null;
}): Promise<Record<OutboxChannel, MessageSender | null>> {
  const { email, sms } = settings;
  return {
    email: email ? (await import('./email-sender.ts')).smtpSender(email) : null,
    sms: sms ? (await import('./sms-sender.ts')).twilioSender(sms) : null,
  };
}

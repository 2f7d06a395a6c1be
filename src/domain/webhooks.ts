/**
 * Webhooks (design.md 9.2): which events there are, which booking change is which event, and when a
 * failed delivery is tried again. Pure: the service layer writes, signs and sends.
 */
import type { BookingStatus } from './booking/state-machine.ts';

export const WEBHOOK_EVENT_TYPES = [
  'booking.created',
  'booking.confirmed',
  'booking.rescheduled',
  'booking.cancelled',
  'booking.expired',
  'booking.completed',
  'booking.no_show',
  'client.created',
  'message.created',
  'waitlist.offered',
  'waitlist.claimed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event "send a test event" sends: to one endpoint, whatever it subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** What a delivery's events are: a subscribable type, or the test event. */
export type DeliveredEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * The event a booking's logged change is (its booking_events row): null for a change no event
 * names (an edit of notes by an import, say).
 */
export function bookingEventType(change: {
  from: BookingStatus | null;
  to: BookingStatus;
  details?: Record<string, unknown> | undefined;
}): WebhookEventType | null {
  const { from, to } = change;
  if (from === null) return 'booking.created';
  if (from === to) return change.details && 'rescheduled' in change.details ? 'booking.rescheduled' : null;
  switch (to) {
    case 'confirmed':
      return from === 'pending_payment' || from === 'pending_confirmation' ? 'booking.confirmed' : null;
    case 'cancelled':
      return 'booking.cancelled';
    case 'expired':
      return 'booking.expired';
    case 'completed':
      return 'booking.completed';
    case 'no_show':
      return 'booking.no_show';
    default:
      return null;
  }
}

/**
 * The schedule's unit: a minute. Retries come about 1, 2, 4, 8, 16 and 32 minutes after each failure,
 * then hourly, for 72 hours after the event; an endpoint failing for 3 days is disabled.
 * WEBHOOK_RETRY_UNIT_MS shortens the unit for tests; production keeps the minute.
 */
export const RETRY_UNIT_MS = 60_000;
const DOUBLING_RETRIES = 6;
const HOURLY = 60;
/** How long an event is tried for, in units. */
export const RETRY_WINDOW_UNITS = 72 * 60;
/** How long an endpoint may fail without a success before it is disabled, in units. */
export const DISABLE_AFTER_UNITS = 3 * 24 * 60;

/** The wait after the `attempts`th failed attempt, in units: 1, 2, 4, 8, 16, 32, then 60. */
export function retryDelayUnits(attempts: number): number {
  return attempts <= DOUBLING_RETRIES ? 2 ** Math.max(0, attempts - 1) : HOURLY;
}

/**
 * When a delivery that failed its `attempts`th attempt at `now` is tried next; null when that falls
 * after the retry window of its event (created at `createdAt`): it has failed for good.
 */
export function nextAttemptAt(
  createdAt: number,
  attempts: number,
  now: number,
  unitMs: number,
): number | null {
  const next = now + retryDelayUnits(attempts) * unitMs;
  return next > createdAt + RETRY_WINDOW_UNITS * unitMs ? null : next;
}

/**
 * Whether an endpoint failing since `failingSince` is disabled by a failure at `now`: failing for 3
 * days, or failing since before the first try of an event given up now (`givenUpFirstTry`: its every
 * try failed) and for half of the 3 days at least. The tries of an event fit in its 72 hours however
 * late the first came (the worker down, a backlog), so the 3 days cannot be counted at its last try:
 * it is failing as long as the schedule can tell. But an event that waited behind another of its
 * booking until that one was given up is tried only for what is left of its 72 hours, maybe moments:
 * failing that long says nothing of the endpoint, which may have answered every other event since.
 */
export function failedTooLong(
  failingSince: number,
  now: number,
  unitMs: number,
  givenUpFirstTry?: number,
): boolean {
  const failingFor = now - failingSince;
  if (failingFor >= DISABLE_AFTER_UNITS * unitMs) return true;
  return (
    givenUpFirstTry !== undefined &&
    failingSince <= givenUpFirstTry &&
    failingFor >= (DISABLE_AFTER_UNITS / 2) * unitMs
  );
}

/**
 * When the first try of a delivery whose `attempts`th try failed at `now` failed at the latest: each
 * retry came at least its delay after the failure before it.
 */
export function firstTryBy(attempts: number, now: number, unitMs: number): number {
  let first = now;
  for (let tried = 1; tried < attempts; tried++) first -= retryDelayUnits(tried) * unitMs;
  return first;
}

/** How long one attempt may take before it counts as failed (the contract's 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Whether the receiver's answer is a success: any 2xx. */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The answer that unsubscribes: the endpoint is disabled at once. */
export const GONE = 410;

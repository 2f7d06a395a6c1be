import type { RateLimitCounter, RateLimitStore } from '../data/rate-limit-counters.ts';
import { counted } from '../domain/counted.ts';
import { AppError } from '../domain/errors.ts';
import { PAGE_MOVES_PER_HOUR, RESEND_WINDOW_MS, RESENDS_PER_HOUR } from '../domain/public-booking-policy.ts';
import { FixedWindowRateLimiter } from './rate-limiter.ts';

/**
 * How often a booking's customer may be sent its link or code again (MCP send_link, REST send-link,
 * the console's "send again", the booking page's "send a new code"): RESENDS_PER_HOUR a clock hour per
 * booking, all of them together; and how often its own page may move it (each move is told to its
 * contact): PAGE_MOVES_PER_HOUR. So nobody can make the salon text or mail one person without end.
 * Counted in the rate-limit store every process shares (deps.rateLimitStore).
 */
export interface ResendLimiter {
  store: RateLimitStore;
}

/**
 * Sends again through `send` after taking one re-send of the booking's hour, or refuses with 429
 * rate_limited saying when to try again. A send that is refused (nothing to send) gives its re-send back.
 */
export function withResend<T>(
  limiter: ResendLimiter,
  booking: { organisationId: string; bookingId: string },
  now: number,
  send: () => Promise<T>,
): Promise<T> {
  return withinHour(
    limiter,
    { organisationId: booking.organisationId, name: `resends:${booking.bookingId}` },
    { limit: RESENDS_PER_HOUR, details: { resendsPerHour: RESENDS_PER_HOUR } },
    now,
    (minutes) =>
      `This booking's messages were sent again ${RESENDS_PER_HOUR} times this hour already; try again in ${minutes}.`,
    send,
  );
}

/**
 * Moves a booking from its own page through `move` after taking one of the booking's PAGE_MOVES_PER_HOUR
 * moves of the hour, or refuses with 429 rate_limited. Each move tells the booking's contact (SMS or
 * e-mail), which on the public page is whatever a stranger typed (policy none keeps it unproven): moving
 * a booking back and forth would otherwise text or mail that person without end, at the salon's cost.
 * A move that is refused (taken meanwhile, too late) gives its place back.
 */
export function withPageMove<T>(
  limiter: ResendLimiter,
  booking: { organisationId: string; bookingId: string },
  now: number,
  move: () => Promise<T>,
): Promise<T> {
  return withinHour(
    limiter,
    { organisationId: booking.organisationId, name: `page-moves:${booking.bookingId}` },
    { limit: PAGE_MOVES_PER_HOUR, details: {} },
    now,
    (minutes) =>
      `This booking was moved ${PAGE_MOVES_PER_HOUR} times this hour already; try again in ${minutes}, or call the salon.`,
    move,
  );
}

/**
 * Runs `act` after taking one of `limit` places in the counter's clock hour; past them, 429 with the
 * seconds to wait and `details`.
 */
async function withinHour<T>(
  limiter: ResendLimiter,
  counter: RateLimitCounter,
  { limit, details }: { limit: number; details: Record<string, unknown> },
  now: number,
  refusal: (minutes: string) => string,
  act: () => Promise<T>,
): Promise<T> {
  const hours = new FixedWindowRateLimiter(limiter.store, RESEND_WINDOW_MS);
  const windowEnd = hours.windowEnd(now);
  if ((await limiter.store.incrementBelow(counter, limit, windowEnd)) === null) {
    const minutes = Math.max(1, Math.ceil((windowEnd - now) / 60_000));
    throw new AppError('rate_limited', refusal(counted(minutes, 'minute')), undefined, {
      retryAfterSeconds: (windowEnd - now) / 1000,
      ...details,
    });
  }
  try {
    return await act();
  } catch (error) {
    await limiter.store.decrement(counter, windowEnd);
    throw error;
  }
}

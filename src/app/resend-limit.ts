import type { RateLimitStore } from '../data/rate-limit-counters.ts';
import { AppError } from '../domain/errors.ts';
import { RESEND_WINDOW_MS, RESENDS_PER_HOUR } from '../domain/public-booking-policy.ts';
import { FixedWindowRateLimiter } from './rate-limiter.ts';

/**
 * How often a booking's customer may be sent its link or code again (MCP send_link, REST send-link,
 * the console's "send again", the booking page's "send a new code"): RESENDS_PER_HOUR a clock hour per
 * booking, all of them together, so nobody can make the salon text or mail one person without end.
 * Counted in the rate-limit store every process shares (deps.rateLimitStore).
 */
export interface ResendLimiter {
  store: RateLimitStore;
}

/**
 * Sends again through `send` after taking one re-send of the booking's hour, or refuses with 429
 * rate_limited saying when to try again. A send that is refused (nothing to send) gives its re-send back.
 */
export async function withResend<T>(
  limiter: ResendLimiter,
  booking: { organisationId: string; bookingId: string },
  now: number,
  send: () => Promise<T>,
): Promise<T> {
  const hours = new FixedWindowRateLimiter(limiter.store, RESEND_WINDOW_MS);
  const windowEnd = hours.windowEnd(now);
  const counter = { organisationId: booking.organisationId, name: `resends:${booking.bookingId}` };
  if ((await limiter.store.incrementBelow(counter, RESENDS_PER_HOUR, windowEnd)) === null) {
    const minutes = Math.max(1, Math.ceil((windowEnd - now) / 60_000));
    throw new AppError(
      'rate_limited',
      `This booking's messages were sent again ${RESENDS_PER_HOUR} times this hour already; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
      undefined,
      { retryAfterSeconds: (windowEnd - now) / 1000, resendsPerHour: RESENDS_PER_HOUR },
    );
  }
  try {
    return await send();
  } catch (error) {
    await limiter.store.decrement(counter, windowEnd);
    throw error;
  }
}

import type { RateLimitCounter, RateLimitStore } from '../data/rate-limit-counters.ts';
import { counted } from '../domain/counted.ts';
import { AppError } from '../domain/errors.ts';
import { PAGE_MOVES_PER_HOUR, RESEND_WINDOW_MS, RESENDS_PER_HOUR } from '../domain/public-booking-policy.ts';

/**
 * How often a booking's customer may be sent its link or code again (MCP send_link, REST send-link,
 * the console's "send again", the booking page's "send a new code"): RESENDS_PER_HOUR within 60 minutes per
 * booking, all of them together; and how often its own page may move it (each move is told to its
 * contact): PAGE_MOVES_PER_HOUR. So nobody can make the salon text or mail one person without end.
 * Counted in the rate-limit store every process shares (deps.rateLimitStore), over the last hour, not
 * the clock's: a clock hour let twice as many through either side of its end (3 at 17:59, 3 at 18:00).
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
  return withinLastHour(
    limiter,
    { organisationId: booking.organisationId, name: `resends:${booking.bookingId}` },
    { limit: RESENDS_PER_HOUR, details: { resendsPerHour: RESENDS_PER_HOUR } },
    now,
    (minutes) =>
      `This booking's messages were sent again ${RESENDS_PER_HOUR} times in the last hour already; try again in ${minutes}.`,
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
  return withinLastHour(
    limiter,
    { organisationId: booking.organisationId, name: `page-moves:${booking.bookingId}` },
    { limit: PAGE_MOVES_PER_HOUR, details: {} },
    now,
    (minutes) =>
      `This booking was moved ${PAGE_MOVES_PER_HOUR} times in the last hour already; try again in ${minutes}, or call the salon.`,
    move,
  );
}

/** The last hour is counted in minutes: each minute's count is a counter of its own. */
const MINUTE_MS = 60_000;
const MINUTES = RESEND_WINDOW_MS / MINUTE_MS;

/**
 * The counter of the minute numbered `minute` (since the epoch) and when it stops counting: a minute
 * counts while it is one of the hour's last MINUTES (this one and the MINUTES - 1 before it), so what
 * was done at 17:59:30 counts until 18:59. Its window ends then, so every store keeps it that long.
 */
function minuteOf(counter: RateLimitCounter, minute: number): { counter: RateLimitCounter; until: number } {
  return {
    counter: { ...counter, name: `${counter.name}@${minute}` },
    until: (minute + MINUTES) * MINUTE_MS,
  };
}

/**
 * Runs `act` after taking one of `limit` places of the last hour, counted by the minute (what the
 * counter counted in its last MINUTES minutes, this one included, and any taken in the next meanwhile),
 * or refuses with 429, the seconds until enough of them have left the hour, and `details`. A refused
 * `act` gives its place back.
 */
async function withinLastHour<T>(
  limiter: ResendLimiter,
  counter: RateLimitCounter,
  { limit, details }: { limit: number; details: Record<string, unknown> },
  now: number,
  refusal: (minutes: string) => string,
  act: () => Promise<T>,
): Promise<T> {
  const { store } = limiter;
  const thisMinute = Math.floor(now / MINUTE_MS);
  const own = minuteOf(counter, thisMinute);
  // Taken first, then counted with the rest of the hour: two attempts either side of a minute's end,
  // each counting the other's minute before the other had taken its place, would both find room.
  const taken = await store.incrementBelow(own.counter, limit, own.until);
  // The hour's minutes oldest first, and the next one (an attempt stamped a moment later).
  const first = thisMinute - MINUTES + 1;
  const counts = await Promise.all(
    Array.from({ length: MINUTES + 1 }, (_, i) => {
      const minute = first + i;
      if (minute === thisMinute) return taken === null ? limit : taken - 1;
      const { counter: ofMinute, until } = minuteOf(counter, minute);
      return store.get(ofMinute, until);
    }),
  );
  const before = counts.reduce((sum, count) => sum + count, 0);
  if (taken === null || before >= limit) {
    if (taken !== null) await store.decrement(own.counter, own.until);
    // The oldest minutes leave the hour first: free once what is left is below the limit.
    let left = before;
    let leaving = first;
    while (left >= limit && leaving - first < counts.length) {
      left -= counts[leaving - first]!;
      leaving += 1;
    }
    const freeAt = (leaving - 1 + MINUTES) * MINUTE_MS;
    const minutes = Math.max(1, Math.ceil((freeAt - now) / 60_000));
    throw new AppError('rate_limited', refusal(counted(minutes, 'minute')), undefined, {
      retryAfterSeconds: Math.max(1, (freeAt - now) / 1000),
      ...details,
    });
  }
  try {
    return await act();
  } catch (error) {
    await store.decrement(own.counter, own.until);
    throw error;
  }
}

import { type Db, dialectOf } from '../data/database.ts';
import { PostgresRateLimitStore, type RateLimitStore } from '../data/rate-limit-counters.ts';
import type { Clock } from './clock.ts';
import type { PaymentProvider } from './payments.ts';
import { MemoryRateLimitStore } from './rate-limiter.ts';

/** Limits of the platform, with the contract's values as defaults. */
export interface Limits {
  /** Requests per key per 60-second window, unless the key has its own. */
  requestsPerMinute: number;
  /** Failed authentications per client address per window before that address is refused. */
  failedAuthPerMinute: number;
}

export const DEFAULT_LIMITS: Limits = { requestsPerMinute: 120, failedAuthPerMinute: 30 };

/** What every face of the engine (REST, MCP, CLI) is built from. */
export interface AppDeps {
  db: Db;
  clock: Clock;
  /** BOOKING_SECRET: signs every organisation's pagination cursors; null, each has its own (CursorSecrets). */
  secret: string | null;
  limits: Limits;
  rateLimitStore: RateLimitStore;
  /** Who takes deposits (PAYMENT_PROVIDER); null: nobody, and bookings that need one are refused. */
  payments: PaymentProvider | null;
}

/**
 * The dependencies with the production defaults (contract limits, rate-limit windows in process memory
 * on SQLite and in the shared database on PostgreSQL, no payment provider until one is chosen);
 * callers override only what differs, so a new default lands everywhere at once.
 */
export function createAppDeps(
  base: Pick<AppDeps, 'db' | 'clock' | 'secret'> & Partial<Omit<AppDeps, 'db' | 'clock' | 'secret'>>,
): AppDeps {
  return {
    limits: DEFAULT_LIMITS,
    rateLimitStore:
      dialectOf(base.db) === 'postgres' ? new PostgresRateLimitStore(base.db) : new MemoryRateLimitStore(),
    payments: null,
    ...base,
  };
}

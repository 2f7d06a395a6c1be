import { type Db, dialectOf } from '../data/database.ts';
import { PostgresRateLimitStore, type RateLimitStore } from '../data/rate-limit-counters.ts';
import { rateLimitFileOf, SqliteRateLimitStore } from '../data/sqlite-rate-limits.ts';
import type { OutboxChannel } from '../domain/outbox.ts';
import type { Clock } from './clock.ts';
import type { PaymentProvider } from './payments.ts';
import { MemoryRateLimitStore } from './rate-limiter.ts';
import { type DestinationPolicy, STRICT_POLICY } from './webhooks/destinations.ts';

/** Limits of the platform, with the contract's values as defaults. */
export interface Limits {
  /** Requests per key per 60-second window, unless the key has its own. */
  requestsPerMinute: number;
  /** Failed authentications per client address per window before that address is refused. */
  failedAuthPerMinute: number;
  /**
   * ORGANISATION_REQUESTS_PER_MINUTE: requests per organisation per window, across all its keys, or
   * the limit of the key making the request where that is higher (src/app/request-budgets.ts).
   */
  organisationRequestsPerMinute: number;
  /** ORGANISATION_SSE_STREAMS: legacy SSE streams an organisation holds open at once in one process. */
  organisationSseStreams: number;
}

export const DEFAULT_LIMITS: Limits = {
  requestsPerMinute: 120,
  failedAuthPerMinute: 30,
  organisationRequestsPerMinute: 600,
  organisationSseStreams: 10,
};

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
  /**
   * Where webhook endpoints may point (WEBHOOK_ALLOW_INSECURE, WEBHOOK_ALLOW_PRIVATE_NETWORKS): by
   * default https to public addresses only.
   */
  webhookDestinations: DestinationPolicy;
  /**
   * The channels a provider sends on (SMTP_URL: email; TWILIO_*: sms); the others' messages are only
   * logged in the outbox. The public pages ask for a contact a message can reach (reachable-contacts.ts).
   */
  messageProviders: ReadonlySet<OutboxChannel>;
}

/**
 * Where the rate-limit windows of a database live, shared by every process on it: PostgreSQL's
 * unlogged table, or a file beside a SQLite database file (`sqliteFile`); process memory only for a
 * database no other process can open (in memory).
 */
export function rateLimitStoreFor(db: Db, sqliteFile: string | null): RateLimitStore {
  if (dialectOf(db) === 'postgres') return new PostgresRateLimitStore(db);
  return sqliteFile === null
    ? new MemoryRateLimitStore()
    : new SqliteRateLimitStore(rateLimitFileOf(sqliteFile));
}

/**
 * The dependencies with the production defaults (contract limits, rate-limit windows in the shared
 * database on PostgreSQL and in process memory otherwise, unless the caller passes the store of a
 * SQLite file: rateLimitStoreFor; no payment provider until one is chosen); callers override only what
 * differs, so a new default lands everywhere at once.
 */
export function createAppDeps(
  base: Pick<AppDeps, 'db' | 'clock' | 'secret'> & Partial<Omit<AppDeps, 'db' | 'clock' | 'secret'>>,
): AppDeps {
  return {
    limits: DEFAULT_LIMITS,
    rateLimitStore: rateLimitStoreFor(base.db, null),
    payments: null,
    webhookDestinations: STRICT_POLICY,
    messageProviders: new Set(),
    ...base,
  };
}

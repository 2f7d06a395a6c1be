import { isIP } from 'node:net';
import { DEFAULT_DATABASE_URL } from '../data/database.ts';
import { DEFAULT_LEASE_MS } from '../domain/outbox.ts';
import { RETRY_UNIT_MS } from '../domain/webhooks.ts';
import { DEFAULT_LIMITS } from './deps.ts';
import { TWILIO_DEFAULT_BASE, type TwilioSettings } from './message-sender.ts';
import { PAYMENT_PROVIDER_NAMES, type PaymentProviderName, type StripeSettings } from './payments.ts';
import type { DestinationPolicy } from './webhooks/destinations.ts';

/** The names of this machine, which the MCP endpoints always answer to. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Everything the service reads from the environment, parsed once at start-up. */
export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  tls: { certFile: string; keyFile: string } | null;
  /** Fastify's trustProxy: false, true (any), a hop count, or a list of addresses/CIDRs. */
  trustProxy: boolean | number | string;
  /** Signs pagination cursors; when unset a random one is generated and stored in the database. */
  secret: string | null;
  logLevel: string;
  /**
   * Host names the MCP endpoints answer to (ALLOWED_HOSTS, comma-separated), on top of the loopback
   * names; a public deployment lists its own name here.
   */
  allowedHosts: string[];
  /**
   * Where customers reach this service (PUBLIC_BASE_URL), for links made outside an HTTP request; by
   * default the address `booking serve` listens on. `booking mcp` over stdio uses it only when set
   * (publicBaseUrlSet): the default may be a port nobody serves.
   */
  publicBaseUrl: string;
  /**
   * Whether PUBLIC_BASE_URL was set: then every link the service makes starts with it, whatever the
   * request's Host says (`booking serve` otherwise makes links for the host names it serves).
   */
  publicBaseUrlSet: boolean;
  /** PAYMENT_PROVIDER: who takes deposits; null, nobody (bookings that need one are refused). */
  paymentProvider: PaymentProviderName | null;
  /** SMTP_URL and MAIL_FROM: e-mail to customers; null, e-mails are only logged in the outbox. */
  email: { smtpUrl: string; mailFrom: string } | null;
  /** TWILIO_*: SMS to customers; null, SMS are only logged in the outbox. */
  sms: TwilioSettings | null;
  /** OUTBOX_LEASE_SECONDS: how long a delivery worker's claim on a message lasts (default 60). */
  outboxLeaseMs: number;
  /** STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and STRIPE_API_BASE; null unless PAYMENT_PROVIDER=stripe. */
  stripe: StripeSettings | null;
  /** ORGANISATION_REQUESTS_PER_MINUTE: an organisation's requests per window across all its keys. */
  organisationRequestsPerMinute: number;
  /** ORGANISATION_SSE_STREAMS: legacy SSE streams an organisation holds open at once, per process. */
  organisationSseStreams: number;
  /** WEBHOOK_ALLOW_INSECURE=1 and WEBHOOK_ALLOW_PRIVATE_NETWORKS=1: where webhook endpoints may point. */
  webhookDestinations: DestinationPolicy;
  /**
   * WEBHOOK_RETRY_UNIT_MS: the webhook retry schedule's minute (default 60000). Tests shorten it to run
   * the schedule (1, 2, 4... minutes, 72 hours, 3 days to disable) in moments; production keeps it.
   */
  webhookRetryUnitMs: number;
  /**
   * OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK=1: the OAuth server fetches Client ID Metadata Documents from
   * this machine too (tests, local development); otherwise only from public addresses.
   */
  oauthClientMetadataAllowLoopback: boolean;
  /** CALENDAR_REFRESH_SECONDS: how often each external busy calendar is fetched again (default 300). */
  calendarRefreshMs: number;
  /**
   * CALENDAR_ALLOW_LOOPBACK=1: external calendars may be fetched from this machine and private
   * networks, over plain http to this machine too (tests, local development); otherwise https to
   * public addresses only.
   */
  calendarAllowLoopback: boolean;
}

/**
 * The highest organisation budget: a hundred keys at the highest limit a key may have
 * (MAX_KEY_RATE_LIMIT), and still a count the counters' integer columns hold with room to spare.
 */
export const MAX_ORGANISATION_REQUESTS_PER_MINUTE = 100_000_000;
const MAX_ORGANISATION_SSE_STREAMS = 100_000;

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const certFile = env.TLS_CERT?.trim();
  const keyFile = env.TLS_KEY?.trim();
  if (Boolean(certFile) !== Boolean(keyFile)) {
    throw new Error('TLS_CERT and TLS_KEY must be set together.');
  }
  const port = parsePort(env.PORT);
  const host = env.HOST?.trim() || '127.0.0.1';
  const tls = Boolean(certFile && keyFile);
  const publicBaseUrl = parsePublicBaseUrl(env.PUBLIC_BASE_URL);
  return {
    databaseUrl: env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL,
    port,
    host,
    tls: certFile && keyFile ? { certFile, keyFile } : null,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    secret: env.BOOKING_SECRET?.trim() || null,
    logLevel: parseLogLevel(env.LOG_LEVEL),
    allowedHosts: [...LOOPBACK_HOSTS, ...listOf(env.ALLOWED_HOSTS)],
    publicBaseUrl:
      publicBaseUrl ??
      `${tls ? 'https' : 'http'}://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`,
    publicBaseUrlSet: publicBaseUrl !== null,
    ...parsePayments(env),
    email: parseEmail(env),
    sms: parseSms(env),
    outboxLeaseMs: parseLease(env.OUTBOX_LEASE_SECONDS),
    // Never below one key's default limit: the budget never holds a key below its own limit
    // (src/app/request-budgets.ts), so a lower one would be a setting that does nothing.
    organisationRequestsPerMinute: parseCount(
      'ORGANISATION_REQUESTS_PER_MINUTE',
      env.ORGANISATION_REQUESTS_PER_MINUTE,
      DEFAULT_LIMITS.organisationRequestsPerMinute,
      { min: DEFAULT_LIMITS.requestsPerMinute, max: MAX_ORGANISATION_REQUESTS_PER_MINUTE },
    ),
    organisationSseStreams: parseCount(
      'ORGANISATION_SSE_STREAMS',
      env.ORGANISATION_SSE_STREAMS,
      DEFAULT_LIMITS.organisationSseStreams,
      { min: 1, max: MAX_ORGANISATION_SSE_STREAMS },
    ),
    webhookDestinations: {
      allowInsecure: parseFlag('WEBHOOK_ALLOW_INSECURE', env.WEBHOOK_ALLOW_INSECURE),
      allowPrivateNetworks: parseFlag('WEBHOOK_ALLOW_PRIVATE_NETWORKS', env.WEBHOOK_ALLOW_PRIVATE_NETWORKS),
    },
    webhookRetryUnitMs: parseCount('WEBHOOK_RETRY_UNIT_MS', env.WEBHOOK_RETRY_UNIT_MS, RETRY_UNIT_MS, {
      min: 1,
      max: RETRY_UNIT_MS,
    }),
    oauthClientMetadataAllowLoopback: parseFlag(
      'OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK',
      env.OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK,
    ),
    calendarRefreshMs:
      parseCount('CALENDAR_REFRESH_SECONDS', env.CALENDAR_REFRESH_SECONDS, 300, { min: 1, max: 86_400 }) *
      1000,
    calendarAllowLoopback: parseFlag('CALENDAR_ALLOW_LOOPBACK', env.CALENDAR_ALLOW_LOOPBACK),
  };
}

/** 1 or true: on; 0, false or unset: off; anything else is refused. */
function parseFlag(name: string, raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new Error(`${name} must be 1 or 0, got "${raw}".`);
}

/** A whole number within `bounds` written in digits (`1e3`, `0x10` and `12.5` are refused), or the default. */
function parseCount(
  name: string,
  raw: string | undefined,
  fallback: number,
  bounds: { min: number; max: number },
): number {
  const value = raw?.trim() ?? '';
  if (value === '') return fallback;
  const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= bounds.min && count <= bounds.max)) {
    throw new Error(`${name} must be a whole number from ${bounds.min} to ${bounds.max}, got "${raw}".`);
  }
  return count;
}

/** SMTP_URL (smtp:// or smtps://) with MAIL_FROM; neither: no e-mail provider. */
function parseEmail(env: NodeJS.ProcessEnv): Config['email'] {
  const smtpUrl = env.SMTP_URL?.trim() ?? '';
  const mailFrom = env.MAIL_FROM?.trim() ?? '';
  if (smtpUrl === '') return null;
  if (!/^smtps?:\/\/[^/]+/i.test(smtpUrl)) {
    throw new Error('SMTP_URL must be smtp://host:port or smtps://user:pass@host:port.');
  }
  // What nodemailer would refuse with a bare "Invalid URL" (and a warning that prints the password).
  if (!URL.canParse(smtpUrl)) {
    throw new Error(
      `SMTP_URL is not a valid URL, got "${withoutPassword(smtpUrl)}": smtp://host:port or smtps://user:pass@host:port, with a port of digits and the user name and password percent-encoded.`,
    );
  }
  if (mailFrom === '')
    throw new Error(
      'MAIL_FROM must be set with SMTP_URL (the sender address, e.g. "Salon <bookings@salon.example>").',
    );
  return { smtpUrl, mailFrom };
}

/** TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM together; TWILIO_API_BASE optional. */
function parseSms(env: NodeJS.ProcessEnv): Config['sms'] {
  const accountSid = env.TWILIO_ACCOUNT_SID?.trim() ?? '';
  const authToken = env.TWILIO_AUTH_TOKEN?.trim() ?? '';
  const from = env.TWILIO_FROM?.trim() ?? '';
  const given = [accountSid, authToken, from].filter((v) => v !== '').length;
  if (given === 0) return null;
  if (given < 3)
    throw new Error('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM must be set together.');
  const apiBase = env.TWILIO_API_BASE?.trim() || TWILIO_DEFAULT_BASE;
  const url = URL.canParse(apiBase) ? new URL(apiBase) : null;
  if (!/^https?:\/\/[^/]+/i.test(apiBase) || !url) throw new Error('TWILIO_API_BASE must be an http(s) URL.');
  assertSecureApiBase('TWILIO_API_BASE', url);
  return { accountSid, authToken, from, apiBase };
}

function parseLease(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_LEASE_MS;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    throw new Error(`OUTBOX_LEASE_SECONDS must be 1..3600, got "${raw}".`);
  }
  return seconds * 1000;
}

/** Stripe's own API; tests (and a proxy an operator runs) point STRIPE_API_BASE elsewhere. */
const STRIPE_API = 'https://api.stripe.com';

/**
 * PAYMENT_PROVIDER and what the chosen provider needs. Stripe needs both its keys: a server that could
 * open checkouts but never hear they were paid (or the reverse) must not start, so the missing
 * settings are named at start-up.
 */
function parsePayments(env: NodeJS.ProcessEnv): Pick<Config, 'paymentProvider' | 'stripe'> {
  const paymentProvider = parsePaymentProvider(env.PAYMENT_PROVIDER);
  if (paymentProvider !== 'stripe') return { paymentProvider, stripe: null };
  const secretKey = env.STRIPE_SECRET_KEY?.trim() ?? '';
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim() ?? '';
  const missing = [
    ...(secretKey === '' ? ['STRIPE_SECRET_KEY'] : []),
    ...(webhookSecret === '' ? ['STRIPE_WEBHOOK_SECRET'] : []),
  ];
  if (missing.length > 0) {
    throw new Error(
      `PAYMENT_PROVIDER=stripe needs ${missing.join(' and ')}: the secret key (sk_live_... or sk_test_...) from the Stripe dashboard's API keys, and the signing secret (whsec_...) of the webhook endpoint pointed at /webhooks/stripe.`,
    );
  }
  return {
    paymentProvider,
    stripe: { secretKey, webhookSecret, apiBase: parseApiBase(env.STRIPE_API_BASE) },
  };
}

function parseApiBase(raw: string | undefined): URL {
  const value = raw?.trim() || STRIPE_API;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`STRIPE_API_BASE must be an absolute http(s) URL, got "${withoutPassword(value)}".`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.username) {
    throw new Error(
      `STRIPE_API_BASE must be an http(s) origin without path, query or credentials, got "${withoutPassword(value)}".`,
    );
  }
  assertSecureApiBase('STRIPE_API_BASE', url);
  return url;
}

/**
 * A provider's API is reached over https: its requests carry the account's secret (Twilio's auth
 * token, Stripe's secret key) and customers' phones and payments. Plain http is allowed only to this
 * machine (127.0.0.0/8, ::1, localhost), where tests run their stand-ins.
 */
function assertSecureApiBase(name: string, url: URL): void {
  if (url.protocol === 'https:' || isLoopbackHost(url.hostname)) return;
  throw new Error(
    `${name} must be an https URL (plain http only to this machine: 127.0.0.1, [::1] or localhost), got "${url.origin}": its requests carry the provider's secret.`,
  );
}

/** A URL's hostname (as URL writes it: IPv4 normalised, IPv6 in brackets) that names this machine. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * A URL setting as an error message may show it: the password of `scheme://user:password@host` as
 * `***`, since the message goes to the terminal and the service's log.
 */
function withoutPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^/?#]*@/i, '$1:***@');
}

/** PUBLIC_BASE_URL: an http(s) origin, optionally with a path prefix; no query, no fragment, no user. */
function parsePublicBaseUrl(raw: string | undefined): string | null {
  const value = raw?.trim() ?? '';
  if (value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(
      `PUBLIC_BASE_URL must be an absolute URL such as https://book.example.com, got "${withoutPassword(value)}".`,
    );
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new Error(
      `PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials, got "${withoutPassword(value)}".`,
    );
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function parsePaymentProvider(raw: string | undefined): PaymentProviderName | null {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '') return null;
  if (!(PAYMENT_PROVIDER_NAMES as readonly string[]).includes(value)) {
    throw new Error(`PAYMENT_PROVIDER must be one of ${PAYMENT_PROVIDER_NAMES.join(', ')}, got "${raw}".`);
  }
  return value as PaymentProviderName;
}

function listOf(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');
}

/** pino's levels, `silent` included. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** LOG_LEVEL: one of pino's levels (any case); pino's own refusal names neither the setting nor them. */
function parseLogLevel(raw: string | undefined): string {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '') return 'info';
  if (!LOG_LEVELS.includes(value)) {
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}".`);
  }
  return value;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 8080;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be 0..65535, got "${raw}".`);
  return port;
}

/** TRUST_PROXY: unset/false, true, a hop count, or comma-separated addresses and CIDRs. */
export function parseTrustProxy(raw: string | undefined): boolean | number | string {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const wrong = value.split(',').find((item) => !isProxyAddress(item.trim()));
  if (wrong !== undefined) {
    throw new Error(
      `TRUST_PROXY must be true, a hop count, or comma-separated addresses and CIDRs (or loopback, linklocal, uniquelocal), got "${wrong.trim()}".`,
    );
  }
  return value;
}

/** The names proxy-addr (Fastify's trustProxy) knows for address ranges. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** What proxy-addr takes in a trust list: a range name, an address, address/prefix or IPv4/netmask. */
function isProxyAddress(item: string): boolean {
  if (PROXY_RANGE_NAMES.has(item)) return true;
  const [address = '', mask, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (mask === undefined) return true;
  if (/^\d+$/.test(mask)) return Number(mask) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(mask) === 4;
}

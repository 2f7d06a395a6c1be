/**
 * Row types of every table, as Kysely sees them.
 *
 * Storage conventions, chosen so the same queries run on SQLite and PostgreSQL:
 * - every `*_at` column is an instant in epoch milliseconds (UTC) stored as an integer;
 * - booleans are integers 0/1 guarded by CHECK constraints (better-sqlite3 cannot bind JS booleans);
 * - money is an integer amount in minor units, the currency is the organisation's;
 * - local calendar dates are 'YYYY-MM-DD' text, local times of day are minutes since local midnight;
 * - every organisation-owned row carries `organisation_id`, and references between such rows are
 *   composite foreign keys `(organisation_id, x_id)`, so no row can point into another organisation.
 */

import type { Generated } from 'kysely';
import type { DepositStatus, FeeKind, FeeStatus, ProtectionSetupStatus } from '../domain/booking/booking.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import type { OutboxChannel, OutboxKind, OutboxStatus } from '../domain/outbox.ts';
import type { PublicVerification } from '../domain/public-booking-policy.ts';

export type Flag = 0 | 1;
export type ApiKeyScope = 'read' | 'read_write';
export type { BookingStatus, DepositStatus, FeeKind, FeeStatus, ProtectionSetupStatus };
export type ChangePolicy = 'allow' | 'forbid';

/** Who may waive a late-cancellation or no-show fee (the catalogue's `policies.fee_waivers`). */
export type FeeWaivers = 'staff' | 'owner_admin';

export interface OrganisationsTable {
  id: string;
  slug: string;
  name: string;
  currency: string;
  booking_reference_prefix: string;
  locale: string;
  /** Bumped by triggers on every change to the catalogue tables; keys the listing caches. */
  catalogue_version: Generated<number>;
  /** Bumped by triggers on every change to a booking that availability can see; keys its cache. */
  bookings_version: Generated<number>;
  /** The public page's policies (the catalogue's `policies`; design.md 9.1), with their defaults. */
  public_verification: Generated<PublicVerification>;
  public_holds_per_contact: Generated<number>;
  public_bookings_per_contact_per_day: Generated<number>;
  public_attempts_per_address_per_hour: Generated<number>;
  public_bookings_per_organisation_per_hour: Generated<number>;
  /** ISO 3166-1 codes, comma-separated: countries texted besides those of the locations. */
  sms_countries: Generated<string>;
  /** Who may waive a fee in the console: any staff account, or owners and admins only. */
  fee_waivers: Generated<FeeWaivers>;
  created_at: number;
  updated_at: number;
}

/** The secret that signs an organisation's pagination cursors, generated on first use. */
export interface CursorSecretsTable {
  organisation_id: string;
  secret: string;
}

export interface ApiKeysTable {
  id: string;
  organisation_id: string;
  label: string;
  scope: ApiKeyScope;
  /** SHA-256 of the plaintext key, hex. The plaintext is never stored. */
  key_hash: string;
  /** The last four characters of the key, to tell keys apart in listings. */
  key_last4: string;
  rate_limit_per_minute: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** What the OAuth authorization server keeps (migration 0025), keyed by a SHA-256 of the record's id. */
export interface OauthRecordsTable {
  kind: string;
  id_hash: string;
  /** The organisation of a grant's records; '' (NO_ORGANISATION) before any is granted. */
  organisation_id: string;
  grant_id: string | null;
  uid: string | null;
  /**
   * The client the record belongs to (migration 0031): a registered client's own id, or the client of
   * a sign-in, code, grant or token; null for records of no client (sessions, the server's secrets).
   */
  client_id: string | null;
  /** The record as JSON, without its id (a token's id is the token). */
  payload: string;
  /** When the record ends; a registered client's, when it is removed unless in use (oauth-records.ts). */
  expires_at: number | null;
  consumed_at: number | null;
}

export type ConnectorScope = 'bookings:read' | 'bookings:write';

/** A grant made on the consent page: a client acting for an organisation (migration 0025). */
export interface OauthConnectorsTable {
  /** oidc-provider's grant id. */
  id: string;
  organisation_id: string;
  client_id: string;
  client_name: string | null;
  scope: ConnectorScope;
  /** The console account (user id) that granted it. */
  granted_by: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface LocationsTable {
  id: string;
  organisation_id: string;
  ref: string;
  slug: string;
  name: string;
  timezone: string;
  street_address: string | null;
  city: string | null;
  postal_code: string | null;
  country: string | null;
  phone: string | null;
  active: Flag;
  slot_interval_minutes: number;
  min_notice_minutes: number;
  max_advance_days: number;
  cancellation_window_hours: number;
  late_cancellation: ChangePolicy;
  late_reschedule: ChangePolicy;
  pending_confirmation_hold_minutes: number;
  pending_payment_hold_minutes: number;
  /** The reminder goes this many hours before the start; 0: no reminders. */
  reminder_hours_before: number;
  /** How long a freed time is held for the waitlist entry it is offered to. */
  waitlist_offer_minutes: number;
  protection_applies: Flag;
  late_cancellation_fee_percentage: number | null;
  no_show_fee_percentage: number | null;
  created_at: number;
  updated_at: number;
}

export interface LocationClosuresTable {
  organisation_id: string;
  location_id: string;
  date: string;
  reason: string | null;
}

export interface ServicesTable {
  id: string;
  organisation_id: string;
  ref: string;
  name: string;
  category: string | null;
  duration_minutes: number;
  buffer_after_minutes: number;
  price_minor: number;
  deposit_minor: number | null;
  online_bookable: Flag;
  created_at: number;
  updated_at: number;
}

/** Where a service is offered, with the location's overrides (null = the service's default). */
export interface ServiceLocationsTable {
  organisation_id: string;
  service_id: string;
  location_id: string;
  duration_minutes: number | null;
  price_minor: number | null;
  /** 1 when the override sets the deposit, so that "no deposit here" (null) differs from "inherit". */
  deposit_overridden: Flag;
  deposit_minor: number | null;
  online_bookable: Flag | null;
}

export interface StaffTable {
  id: string;
  organisation_id: string;
  ref: string;
  name: string;
  active: Flag;
  created_at: number;
  updated_at: number;
}

/** An everyday name of a service ("haircut"), in the catalogue file's order. */
export interface ServiceAliasesTable {
  organisation_id: string;
  service_id: string;
  /** 0-based place in the service's `aliases[]`. */
  position: number;
  alias: string;
}

/** A nickname of a staff member, in the catalogue file's order. */
export interface StaffAliasesTable {
  organisation_id: string;
  staff_id: string;
  position: number;
  alias: string;
}

export interface StaffServicesTable {
  organisation_id: string;
  staff_id: string;
  service_id: string;
}

export interface StaffLocationsTable {
  organisation_id: string;
  staff_id: string;
  location_id: string;
}

/** A weekly working interval in the location's local time. weekday: 1 = Monday .. 7 = Sunday. */
export interface StaffWorkingHoursTable {
  organisation_id: string;
  staff_id: string;
  location_id: string;
  weekday: number;
  start_minute: number;
  end_minute: number;
}

export interface StaffTimeOffTable {
  id: string;
  organisation_id: string;
  staff_id: string;
  starts_at: number;
  ends_at: number;
  reason: string | null;
}

export interface ClientsTable {
  id: string;
  organisation_id: string;
  ref: string | null;
  first_name: string;
  last_name: string;
  phone: string | null;
  email: string | null;
  marketing_consent: Flag;
  created_at: number;
  updated_at: number;
  /**
   * 1: on file, found by its phone and e-mail (which are unique among such clients). 0: the record of a
   * public-page booking whose customer has not proven the contact (migration 0023).
   */
  contact_proven: Flag;
}

export interface BookingsTable {
  id: string;
  organisation_id: string;
  reference: string;
  location_id: string;
  staff_id: string;
  client_id: string;
  status: BookingStatus;
  starts_at: number;
  ends_at: number;
  /** ends_at plus the last service's buffer: the staff member is busy until then. */
  blocked_until: number;
  currency: string;
  total_price_minor: number;
  deposit_minor: number | null;
  deposit_status: DepositStatus;
  notes: string | null;
  /** When a pending hold lapses; null for bookings that hold nothing. */
  hold_expires_at: number | null;
  /** JSON array of outstanding pending_confirmation steps (deposit, protection_setup). */
  pending_requirements: string | null;
  protection_applies: Flag;
  late_cancellation_fee_percentage: number | null;
  no_show_fee_percentage: number | null;
  protection_setup_status: ProtectionSetupStatus | null;
  payment_method_saved: Flag;
  protection_setup_completed_at: number | null;
  cancelled_at: number | null;
  cancel_reason: string | null;
  deposit_refunded: Flag | null;
  source: 'api' | 'mcp' | 'import' | 'staff';
  /** The series this booking is an occurrence of (booking_series), null for a single booking. */
  series_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A recurring series booked at once: its occurrences are bookings sharing series_id. */
export interface BookingSeriesTable {
  id: string;
  organisation_id: string;
  every_weeks: number;
  count: number;
  created_at: number;
}

/** One service of a booking, with the duration and price in force when it was booked. */
export interface BookingServicesTable {
  organisation_id: string;
  booking_id: string;
  position: number;
  service_id: string;
  starts_at: number;
  ends_at: number;
  duration_minutes: number;
  buffer_after_minutes: number;
  price_minor: number;
  deposit_minor: number | null;
}

export type CheckoutStatus = 'open' | 'paid' | 'abandoned' | 'expired';

/** The capability of one booking's page, /p/manage/{token} (see the 0019 migration). */
export interface BookingPagesTable {
  token: string;
  organisation_id: string;
  booking_id: string;
  created_at: number;
}

export interface CheckoutSessionsTable {
  id: string;
  organisation_id: string;
  booking_id: string;
  status: CheckoutStatus;
  amount_minor: number;
  currency: string;
  success_url: string | null;
  cancel_url: string | null;
  expires_at: number;
  created_at: number;
  completed_at: number | null;
  /** The provider's own id of this checkout (a Stripe Checkout Session), once opened there. */
  provider_ref?: string | null;
  /** Where the customer pays it at the provider. */
  provider_url?: string | null;
  /** The provider's payment once paid (a Stripe PaymentIntent): what a refund returns. */
  payment_ref?: string | null;
  /** The provider's refund of that payment, once it accepted one. */
  refund_ref?: string | null;
  /**
   * When the provider refused for good the refund of a payment nobody needed, and its reason (0037):
   * settled, not asked again; the money is returned by hand.
   */
  refund_refused_at?: number | null;
  refund_refusal?: string | null;
}

export type CardSetupStatus = 'open' | 'succeeded' | 'expired';

/** A hosted card setup for Booking Protection (a Stripe Checkout Session in setup mode). */
export interface CardSetupsTable {
  id: string;
  organisation_id: string;
  booking_id: string;
  status: CardSetupStatus;
  provider_ref: string | null;
  provider_url: string | null;
  /** Set when it succeeded: the provider's customer and the payment method fees are charged to. */
  customer_ref: string | null;
  payment_method_ref: string | null;
  expires_at: number;
  created_at: number;
  completed_at: number | null;
}

/** A provider event (webhook) applied, by its id: a redelivery finds it here and changes nothing. */
export interface PaymentEventsTable {
  organisation_id: string;
  provider: string;
  event_id: string;
  type: string;
  received_at: number;
}

/** What a payment call was asked for (see the 0033 migration). */
export type PaymentCallPurpose = 'cancellation' | 'unwanted_payment' | 'fee';

/**
 * A refund or fee charge asked of the payment provider whose outcome is not written yet: written before
 * the provider is called, removed with the outcome (src/app/payment-calls.ts).
 */
export interface PaymentCallsTable {
  organisation_id: string;
  kind: 'refund' | 'charge';
  /** Our id of the money movement, from which the provider's idempotency key is made. */
  key: string;
  booking_id: string;
  purpose: PaymentCallPurpose;
  amount_minor: number;
  currency: string;
  /** A refund: the provider's payment it returns. */
  payment_ref: string | null;
  /** A fee charge: the fee, the saved card it is charged to, and what the charge says. */
  fee_kind: FeeKind | null;
  customer_ref: string | null;
  payment_method_ref: string | null;
  description: string | null;
  /** A cancellation: the reference asked about, its scope and reason. */
  reference: string | null;
  scope: 'one' | 'following' | null;
  reason: string | null;
  actor: string;
  requested_at: number;
  /** When the sweeper last tried to complete it. */
  attempted_at: number | null;
  /** The provider it was asked of, the only one that completes it (null: written before 0035). */
  provider: string | null;
}

export interface BookingFeesTable {
  organisation_id: string;
  booking_id: string;
  kind: FeeKind;
  status: FeeStatus | null;
  currency: string;
  fee_percentage: number;
  amount_minor: number;
  deposit_credit_minor: number;
  charge_amount_minor: number;
  failure_reason: string | null;
  processed_at: number | null;
  created_at: number;
  /** The provider's payment that charged it to the saved card (a Stripe PaymentIntent). */
  payment_ref?: string | null;
}

export interface IdempotencyRecordsTable {
  organisation_id: string;
  idempotency_key: string;
  fingerprint: string;
  status_code: number;
  response_body: string;
  created_at: number;
  expires_at: number;
}

/** Append-only: triggers refuse UPDATE and DELETE. */
export interface BookingEventsTable {
  organisation_id: string;
  booking_id: string;
  seq: number;
  from_status: BookingStatus | null;
  to_status: BookingStatus;
  actor: string;
  occurred_at: number;
  details: string | null;
}

/** PostgreSQL only (unlogged): the shared rate-limit windows of every instance. */
export interface RateLimitCountersTable {
  /** The counted key's organisation; '' for counts made before the caller is known. */
  organisation_id: string;
  key: string;
  window_end: number;
  count: number;
}

export type MessageStatus = 'open' | 'done';

/** A message for staff a caller left with the receptionist (MCP take_message). */
export interface MessagesTable {
  id: string;
  organisation_id: string;
  /** The location the call was about, when known. */
  location_id: string | null;
  caller_name: string;
  /** E.164. */
  phone: string | null;
  message: string;
  /** The booking the message is about (its reference, as stored), when there is one. */
  reference: string | null;
  status: MessageStatus;
  created_at: number;
  done_at: number | null;
}

/** A message to a customer, written with the change it reports and delivered by the outbox worker. */
export interface OutboxTable {
  /**
   * The order the messages were written in, and the key the worker finds a claimed message by (on
   * SQLite the rowid: see migration 0022).
   */
  seq: Generated<number>;
  /** The provider's idempotency key too (the e-mail's Message-ID, the SMS request's token). */
  id: string;
  organisation_id: string;
  booking_id: string;
  reference: string;
  channel: OutboxChannel;
  /** E.164 phone or e-mail address, copied from the client when the message was written. */
  recipient: string;
  kind: OutboxKind;
  status: OutboxStatus;
  attempts: number;
  due_at: number;
  claimed_by: string | null;
  lease_until: number | null;
  provider_id: string | null;
  last_error: string | null;
  /** What was said (JSON {subject?, text, html?}), once sent or logged. */
  body: string | null;
  created_at: number;
  sent_at: number | null;
}

/** An integrator's endpoint (design.md 9.2; migration 0024). */
export interface WebhookEndpointsTable {
  id: string;
  organisation_id: string;
  url: string;
  description: string | null;
  /** JSON array of the event types it subscribes to. */
  events: string;
  /** The HMAC key its deliveries are signed with, shown once when it is created. */
  secret: string;
  status: 'enabled' | 'disabled';
  /** Why it was disabled: 'gone' (it answered 410) or 'failing' (3 days of failures). */
  disabled_reason: string | null;
  /** The first failure of the failures since its last success; null when its last delivery succeeded. */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  disabled_at: number | null;
}

/** An event as delivered, written in the transaction of its change. */
export interface WebhookEventsTable {
  seq: Generated<number>;
  organisation_id: string;
  /** The receiver's idempotency key. */
  id: string;
  type: string;
  /** The JSON body every delivery of the event sends (and signs) byte for byte. */
  payload: string;
  created_at: number;
}

/** One event to one endpoint: what is still to go, and what became of it. */
export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  organisation_id: string;
  endpoint_id: string;
  event_seq: number;
  event_id: string;
  event_type: string;
  /** Events of one key (a booking's id) go to an endpoint in the order they were written. */
  ordering_key: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  lease_until: number | null;
  response_code: number | null;
  last_error: string | null;
  last_attempt_at: number | null;
  created_at: number;
  delivered_at: number | null;
}

/** The contact a public-page booking gave, and its proof (design.md 9.1; migration 0023). */
export interface ContactProofsTable {
  organisation_id: string;
  booking_id: string;
  /** What the customer typed, normalised: E.164 phone and lower-cased e-mail, either or both. */
  phone: string | null;
  email: string | null;
  /** Where the proof went: sms to the phone, or the e-mail. */
  channel: OutboxChannel;
  /** SHA-256 (hex) of the code and of the link token sent; null when no proof was asked. */
  code_hash: string | null;
  token_hash: string | null;
  code_expires_at: number | null;
  /** Wrong codes entered against the current code. */
  tries: number;
  proven_at: number | null;
  created_at: number;
}

export type UserRole = 'owner' | 'admin' | 'staff';

/** A staff account of the console; the password is kept only as an argon2id hash. */
export interface UsersTable {
  id: string;
  organisation_id: string;
  /** Lower-cased. */
  email: string;
  password_hash: string;
  role: UserRole;
  created_at: number;
  disabled_at: number | null;
}

/** A signed-in console session; `id` is the SHA-256 of the token in the browser's cookie. */
export interface UserSessionsTable {
  id: string;
  organisation_id: string;
  user_id: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
}

/** A waitlist entry (migration 0026): who waits for what, in joining order. */
export interface WaitlistEntriesTable {
  id: string;
  organisation_id: string;
  location_id: string;
  client_id: string;
  /** JSON array of service ids, in booking order. */
  service_ids: string;
  staff_id: string | null;
  /** Local dates (YYYY-MM-DD) of the location, inclusive. */
  from_date: string;
  to_date: string;
  /** JSON array of parts of the day; null: any time. */
  times: string | null;
  status: 'waiting' | 'booked' | 'left' | 'ended';
  /** The offer (a booking) that booked the entry. */
  booking_id: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

/** An offer made to an entry: the pending_confirmation booking that holds the freed time for it. */
export interface WaitlistOffersTable {
  organisation_id: string;
  booking_id: string;
  entry_id: string;
  staff_id: string;
  starts_at: number;
  created_at: number;
}

/** A location whose time may have freed, for the waitlist worker. */
export interface WaitlistRescansTable {
  organisation_id: string;
  location_id: string;
  requested_at: number;
}

/** A staff member's private iCalendar feed (GET /ical/{token}.ics); only the token's SHA-256 is kept. */
export interface StaffCalendarFeedsTable {
  id: string;
  organisation_id: string;
  staff_id: string;
  token_hash: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** An external calendar whose busy times block a staff member (the catalogue's busy_calendars[]). */
export interface StaffBusyCalendarsTable {
  id: string;
  organisation_id: string;
  staff_id: string;
  url: string;
  /** When the refresher fetches it next. */
  next_fetch_at: number;
  /** The validators of the last good copy, sent back as If-None-Match / If-Modified-Since. */
  etag: string | null;
  last_modified: string | null;
  last_attempt_at: number | null;
  last_success_at: number | null;
  /**
   * Why the last attempt failed (no URL, no content), or what the last good copy says of itself (its
   * copy_note) once one succeeds.
   */
  last_error: string | null;
  last_error_at: number | null;
  /**
   * What the last good copy's read said of itself (busy times read only until a date), or null: a 304
   * after a failed fetch is that copy again, and shows this as its last_error once more.
   */
  copy_note: string | null;
  /** Busy intervals of the last good copy within the window kept. */
  busy_count: Generated<number>;
  /**
   * When the blocks were last worked out from a full copy: the window they cover slides with the
   * clock, so a copy older than a day is fetched again whole (no validators) and expanded anew.
   */
  parsed_at: number | null;
  /** The SHA-256 (hex) of the last good copy's text: the same text again is not read again. */
  copy_hash: string | null;
  created_at: number;
}

/** One busy interval of an external calendar's last good copy. */
export interface StaffBusyBlocksTable {
  calendar_id: string;
  organisation_id: string;
  staff_id: string;
  starts_at: number;
  ends_at: number;
}

export interface Database {
  organisations: OrganisationsTable;
  cursor_secrets: CursorSecretsTable;
  api_keys: ApiKeysTable;
  locations: LocationsTable;
  location_closures: LocationClosuresTable;
  services: ServicesTable;
  service_locations: ServiceLocationsTable;
  service_aliases: ServiceAliasesTable;
  staff: StaffTable;
  staff_aliases: StaffAliasesTable;
  staff_services: StaffServicesTable;
  staff_locations: StaffLocationsTable;
  staff_working_hours: StaffWorkingHoursTable;
  staff_time_off: StaffTimeOffTable;
  clients: ClientsTable;
  bookings: BookingsTable;
  booking_services: BookingServicesTable;
  checkout_sessions: CheckoutSessionsTable;
  booking_pages: BookingPagesTable;
  card_setups: CardSetupsTable;
  payment_events: PaymentEventsTable;
  booking_fees: BookingFeesTable;
  payment_calls: PaymentCallsTable;
  idempotency_records: IdempotencyRecordsTable;
  booking_events: BookingEventsTable;
  rate_limit_counters: RateLimitCountersTable;
  messages: MessagesTable;
  outbox: OutboxTable;
  contact_proofs: ContactProofsTable;
  users: UsersTable;
  user_sessions: UserSessionsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  oauth_records: OauthRecordsTable;
  oauth_connectors: OauthConnectorsTable;
  waitlist_entries: WaitlistEntriesTable;
  waitlist_offers: WaitlistOffersTable;
  booking_series: BookingSeriesTable;
  waitlist_rescans: WaitlistRescansTable;
  staff_calendar_feeds: StaffCalendarFeedsTable;
  staff_busy_calendars: StaffBusyCalendarsTable;
  staff_busy_blocks: StaffBusyBlocksTable;
}

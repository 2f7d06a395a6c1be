import type { Migration } from 'kysely';
import * as initial from './2026-11-22-0001-initial.ts';
import * as bookingSpan from './2026-11-23-0001-booking-span.ts';
import * as overlapExclusion from './2026-11-23-0002-overlap-exclusion.ts';
import * as rateLimitCounters from './2026-11-23-0003-rate-limit-counters.ts';
import * as organisationKeys from './2026-11-23-0004-organisation-keys.ts';
import * as messages from './2026-11-24-0001-messages.ts';
import * as catalogueAliases from './2026-11-24-0010-catalogue-aliases.ts';
import * as bookingsVersion from './2026-11-25-0016-bookings-version.ts';
import * as outbox from './2026-11-25-0018-outbox.ts';
import * as bookingPages from './2026-11-25-0019-booking-pages.ts';
import * as payments from './2026-11-25-0020-payments.ts';
import * as staffAccounts from './2026-11-25-0021-staff-accounts.ts';
import * as outboxSequence from './2026-11-27-0022-outbox-sequence.ts';
import * as publicContacts from './2026-11-28-0023-public-contacts.ts';
import * as webhooks from './2026-11-28-0024-webhooks.ts';
import * as mcpOauth from './2026-11-28-0025-mcp-oauth.ts';
import * as waitlist from './2026-11-28-0026-waitlist.ts';
import * as bookingSeries from './2026-11-28-0027-booking-series.ts';
import * as calendarFeeds from './2026-11-28-0028-calendar-feeds.ts';
import * as feeWaivers from './2026-11-29-0029-fee-waivers.ts';
import * as postgresOverlapGuard from './2026-11-29-0030-postgres-overlap-guard.ts';
import * as oauthClientLifetime from './2026-11-30-0031-oauth-client-lifetime.ts';
import * as holdsEndAtStart from './2026-11-30-0032-holds-end-at-start.ts';
import * as paymentCalls from './2026-11-30-0033-payment-calls.ts';
import * as busyCopyNote from './2026-11-30-0034-busy-copy-note.ts';
import * as paymentCallProvider from './2026-11-30-0035-payment-call-provider.ts';
import * as oneCheckoutPerBooking from './2026-11-30-0036-one-checkout-per-booking.ts';
import * as refundRefusals from './2026-12-01-0037-refund-refusals.ts';
import * as fewerPagesPerBooking from './2026-12-02-0038-fewer-pages-per-booking.ts';
import * as waitlistEntriesByClient from './2026-12-02-0039-waitlist-entries-by-client.ts';
import * as publicBookingsPerOrganisation from './2026-12-03-0040-public-bookings-per-organisation.ts';
import * as busyCopyHash from './2026-12-03-0041-busy-copy-hash.ts';
import * as messagesByStatus from './2026-12-07-0042-messages-by-status.ts';

/**
 * Every migration, in order. Listed statically (not read from the directory) so that the set that
 * runs is exactly the set that was reviewed, whatever files happen to lie beside this one.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-22-0001-initial': initial,
  '2026-11-23-0001-booking-span': bookingSpan,
  '2026-11-23-0002-overlap-exclusion': overlapExclusion,
  '2026-11-23-0003-rate-limit-counters': rateLimitCounters,
  '2026-11-23-0004-organisation-keys': organisationKeys,
  '2026-11-24-0001-messages': messages,
  '2026-11-24-0010-catalogue-aliases': catalogueAliases,
  '2026-11-25-0016-bookings-version': bookingsVersion,
  '2026-11-25-0018-outbox': outbox,
  '2026-11-25-0019-booking-pages': bookingPages,
  '2026-11-25-0020-payments': payments,
  '2026-11-25-0021-staff-accounts': staffAccounts,
  '2026-11-27-0022-outbox-sequence': outboxSequence,
  '2026-11-28-0023-public-contacts': publicContacts,
  '2026-11-28-0024-webhooks': webhooks,
  '2026-11-28-0025-mcp-oauth': mcpOauth,
  '2026-11-28-0026-waitlist': waitlist,
  '2026-11-28-0027-booking-series': bookingSeries,
  '2026-11-28-0028-calendar-feeds': calendarFeeds,
  '2026-11-29-0029-fee-waivers': feeWaivers,
  '2026-11-29-0030-postgres-overlap-guard': postgresOverlapGuard,
  '2026-11-30-0031-oauth-client-lifetime': oauthClientLifetime,
  '2026-11-30-0032-holds-end-at-start': holdsEndAtStart,
  '2026-11-30-0033-payment-calls': paymentCalls,
  '2026-11-30-0034-busy-copy-note': busyCopyNote,
  '2026-11-30-0035-payment-call-provider': paymentCallProvider,
  '2026-11-30-0036-one-checkout-per-booking': oneCheckoutPerBooking,
  '2026-12-01-0037-refund-refusals': refundRefusals,
  '2026-12-02-0038-fewer-pages-per-booking': fewerPagesPerBooking,
  '2026-12-02-0039-waitlist-entries-by-client': waitlistEntriesByClient,
  '2026-12-03-0040-public-bookings-per-organisation': publicBookingsPerOrganisation,
  '2026-12-03-0041-busy-copy-hash': busyCopyHash,
  '2026-12-07-0042-messages-by-status': messagesByStatus,
};

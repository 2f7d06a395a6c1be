import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * The whole data model. Every rule the database can hold is declared here: composite foreign keys
 * keep each row inside its organisation, CHECKs guard statuses, flags and amounts, unique indexes
 * guard slugs, refs, phones, e-mails and references, and triggers keep the event log append-only and
 * refuse two live bookings of one staff member that overlap (the last guard against double booking).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

const LIVE = `('pending_payment','pending_confirmation','confirmed')`;
const STATUSES = `('pending_payment','pending_confirmation','confirmed','needs_checkout','completed','no_show','cancelled','expired')`;

/** The tables whose rows the catalogue listings (locations, services, staff) are made of. */
const CATALOGUE_TABLES = [
  'locations',
  'location_closures',
  'services',
  'service_locations',
  'staff',
  'staff_services',
  'staff_locations',
  'staff_working_hours',
  'staff_time_off',
] as const;

const flag = (column: string) => sql`${sql.ref(column)} in (0, 1)`;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('organisations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull().check(sql`length(currency) = 3`))
    .addColumn('booking_reference_prefix', 'text', (c) => c.notNull())
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('catalogue_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('instance_settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('read', 'read_write')`))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_last4', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.check(sql`rate_limit_per_minute > 0`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_organisation').on('api_keys').columns(['organisation_id']).execute();

  await db.schema
    .createTable('locations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().check(sql`slug <> ''`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('street_address', 'text')
    .addColumn('city', 'text')
    .addColumn('postal_code', 'text')
    .addColumn('country', 'text', (c) => c.check(sql`country is null or length(country) = 2`))
    .addColumn('phone', 'text')
    .addColumn('active', 'integer', (c) => c.notNull().check(flag('active')))
    .addColumn('slot_interval_minutes', 'integer', (c) =>
      c.notNull().check(sql`slot_interval_minutes between 1 and 1440`),
    )
    .addColumn('min_notice_minutes', 'integer', (c) => c.notNull().check(sql`min_notice_minutes >= 0`))
    .addColumn('max_advance_days', 'integer', (c) => c.notNull().check(sql`max_advance_days >= 0`))
    .addColumn('cancellation_window_hours', 'integer', (c) =>
      c.notNull().check(sql`cancellation_window_hours >= 0`),
    )
    .addColumn('late_cancellation', 'text', (c) =>
      c.notNull().check(sql`late_cancellation in ('allow', 'forbid')`),
    )
    .addColumn('late_reschedule', 'text', (c) =>
      c.notNull().check(sql`late_reschedule in ('allow', 'forbid')`),
    )
    .addColumn('pending_confirmation_hold_minutes', 'integer', (c) =>
      c.notNull().check(sql`pending_confirmation_hold_minutes > 0`),
    )
    .addColumn('pending_payment_hold_minutes', 'integer', (c) =>
      c.notNull().check(sql`pending_payment_hold_minutes > 0`),
    )
    .addColumn('protection_applies', 'integer', (c) => c.notNull().check(flag('protection_applies')))
    .addColumn('late_cancellation_fee_percentage', 'integer', (c) =>
      c.check(sql`late_cancellation_fee_percentage between 0 and 100`),
    )
    .addColumn('no_show_fee_percentage', 'integer', (c) =>
      c.check(sql`no_show_fee_percentage between 0 and 100`),
    )
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('locations_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('locations_org_slug', ['organisation_id', 'slug'])
    .addUniqueConstraint('locations_org_ref', ['organisation_id', 'ref'])
    .execute();

  await db.schema
    .createTable('location_closures')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull().check(sql`length(date) = 10`))
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('location_closures_pk', ['location_id', 'date'])
    .addForeignKeyConstraint('location_closures_location', ['organisation_id', 'location_id'], 'locations', [
      'organisation_id',
      'id',
    ])
    .execute();

  await db.schema
    .createTable('services')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('category', 'text')
    .addColumn('duration_minutes', 'integer', (c) => c.notNull().check(sql`duration_minutes > 0`))
    .addColumn('buffer_after_minutes', 'integer', (c) => c.notNull().check(sql`buffer_after_minutes >= 0`))
    .addColumn('price_minor', 'integer', (c) => c.notNull().check(sql`price_minor >= 0`))
    .addColumn('deposit_minor', 'integer', (c) => c.check(sql`deposit_minor > 0`))
    .addColumn('online_bookable', 'integer', (c) => c.notNull().check(flag('online_bookable')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('services_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('services_org_ref', ['organisation_id', 'ref'])
    .execute();

  await db.schema
    .createTable('service_locations')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('duration_minutes', 'integer', (c) => c.check(sql`duration_minutes > 0`))
    .addColumn('price_minor', 'integer', (c) => c.check(sql`price_minor >= 0`))
    .addColumn('deposit_overridden', 'integer', (c) => c.notNull().check(flag('deposit_overridden')))
    .addColumn('deposit_minor', 'integer', (c) => c.check(sql`deposit_minor > 0`))
    .addColumn('online_bookable', 'integer', (c) =>
      c.check(sql`online_bookable is null or online_bookable in (0, 1)`),
    )
    .addPrimaryKeyConstraint('service_locations_pk', ['service_id', 'location_id'])
    .addForeignKeyConstraint('service_locations_service', ['organisation_id', 'service_id'], 'services', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('service_locations_location', ['organisation_id', 'location_id'], 'locations', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('service_locations_location')
    .on('service_locations')
    .columns(['location_id'])
    .execute();

  await db.schema
    .createTable('staff')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().check(flag('active')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('staff_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('staff_org_ref', ['organisation_id', 'ref'])
    .execute();

  await db.schema
    .createTable('staff_services')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('staff_services_pk', ['staff_id', 'service_id'])
    .addForeignKeyConstraint('staff_services_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('staff_services_service', ['organisation_id', 'service_id'], 'services', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('staff_services_service')
    .on('staff_services')
    .columns(['service_id'])
    .execute();

  await db.schema
    .createTable('staff_locations')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('staff_locations_pk', ['staff_id', 'location_id'])
    .addUniqueConstraint('staff_locations_org', ['organisation_id', 'staff_id', 'location_id'])
    .addForeignKeyConstraint('staff_locations_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('staff_locations_location', ['organisation_id', 'location_id'], 'locations', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('staff_locations_location')
    .on('staff_locations')
    .columns(['location_id'])
    .execute();

  await db.schema
    .createTable('staff_working_hours')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('weekday', 'integer', (c) => c.notNull().check(sql`weekday between 1 and 7`))
    .addColumn('start_minute', 'integer', (c) => c.notNull().check(sql`start_minute between 0 and 1439`))
    .addColumn('end_minute', 'integer', (c) => c.notNull().check(sql`end_minute between 1 and 1440`))
    .addPrimaryKeyConstraint('staff_working_hours_pk', ['staff_id', 'location_id', 'weekday', 'start_minute'])
    .addCheckConstraint('staff_working_hours_order', sql`start_minute < end_minute`)
    .addForeignKeyConstraint(
      'staff_working_hours_staff_location',
      ['organisation_id', 'staff_id', 'location_id'],
      'staff_locations',
      ['organisation_id', 'staff_id', 'location_id'],
    )
    .execute();
  await db.schema
    .createIndex('staff_working_hours_location')
    .on('staff_working_hours')
    .columns(['location_id'])
    .execute();

  await db.schema
    .createTable('staff_time_off')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addCheckConstraint('staff_time_off_order', sql`starts_at < ends_at`)
    .addForeignKeyConstraint('staff_time_off_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('staff_time_off_staff_time')
    .on('staff_time_off')
    .columns(['organisation_id', 'staff_id', 'ends_at'])
    .execute();

  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('ref', 'text')
    .addColumn('first_name', 'text', (c) => c.notNull().check(sql`length(first_name) between 1 and 60`))
    .addColumn('last_name', 'text', (c) => c.notNull().check(sql`length(last_name) between 1 and 60`))
    .addColumn('phone', 'text', (c) => c.check(sql`phone is null or phone like '+%'`))
    .addColumn('email', 'text', (c) => c.check(sql`email is null or email = lower(email)`))
    .addColumn('marketing_consent', 'integer', (c) => c.notNull().check(flag('marketing_consent')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('clients_contact', sql`phone is not null or email is not null`)
    .addUniqueConstraint('clients_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('clients_org_phone', ['organisation_id', 'phone'])
    .addUniqueConstraint('clients_org_email', ['organisation_id', 'email'])
    .addUniqueConstraint('clients_org_ref', ['organisation_id', 'ref'])
    .execute();

  await db.schema
    .createTable('bookings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('staff_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql.raw(`status in ${STATUSES}`)))
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('blocked_until', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('total_price_minor', 'integer', (c) => c.notNull().check(sql`total_price_minor >= 0`))
    .addColumn('deposit_minor', 'integer', (c) => c.check(sql`deposit_minor > 0`))
    .addColumn('deposit_status', 'text', (c) =>
      c.notNull().check(sql`deposit_status in ('not_required', 'pending', 'paid', 'refunded', 'retained')`),
    )
    .addColumn('notes', 'text', (c) => c.check(sql`notes is null or length(notes) <= 1000`))
    .addColumn('hold_expires_at', 'bigint')
    .addColumn('pending_requirements', 'text')
    .addColumn('protection_applies', 'integer', (c) => c.notNull().check(flag('protection_applies')))
    .addColumn('late_cancellation_fee_percentage', 'integer')
    .addColumn('no_show_fee_percentage', 'integer')
    .addColumn('protection_setup_status', 'text', (c) =>
      c.check(
        sql`protection_setup_status is null or protection_setup_status in ('pending', 'failed', 'succeeded')`,
      ),
    )
    .addColumn('payment_method_saved', 'integer', (c) => c.notNull().check(flag('payment_method_saved')))
    .addColumn('protection_setup_completed_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('cancel_reason', 'text', (c) =>
      c.check(sql`cancel_reason is null or length(cancel_reason) <= 1000`),
    )
    .addColumn('deposit_refunded', 'integer', (c) =>
      c.check(sql`deposit_refunded is null or deposit_refunded in (0, 1)`),
    )
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('api', 'mcp', 'import', 'staff')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('bookings_times', sql`starts_at < ends_at and ends_at <= blocked_until`)
    .addCheckConstraint(
      'bookings_hold',
      sql.raw(`status not in ('pending_payment', 'pending_confirmation') or hold_expires_at is not null`),
    )
    .addCheckConstraint('bookings_cancelled', sql`(status = 'cancelled') = (cancelled_at is not null)`)
    .addUniqueConstraint('bookings_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('bookings_org_reference', ['organisation_id', 'reference'])
    .addForeignKeyConstraint('bookings_location', ['organisation_id', 'location_id'], 'locations', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('bookings_staff', ['organisation_id', 'staff_id'], 'staff', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('bookings_client', ['organisation_id', 'client_id'], 'clients', [
      'organisation_id',
      'id',
    ])
    .execute();
  // Availability reads the bookings of some staff over a time range, scoped to the organisation: an
  // index led by organisation_id serves it whole (one led by staff_id loses to the unique
  // (organisation_id, reference) index in the planner, which then scans every booking of the organisation).
  await db.schema
    .createIndex('bookings_staff_time')
    .on('bookings')
    .columns(['organisation_id', 'staff_id', 'starts_at', 'blocked_until'])
    .execute();
  await db.schema
    .createIndex('bookings_location_time')
    .on('bookings')
    .columns(['location_id', 'starts_at'])
    .execute();
  await db.schema.createIndex('bookings_client').on('bookings').columns(['client_id', 'starts_at']).execute();
  await db.schema
    .createIndex('bookings_hold_expiry')
    .on('bookings')
    .columns(['hold_expires_at'])
    .where(sql.ref('hold_expires_at'), 'is not', null)
    .execute();

  await db.schema
    .createTable('booking_services')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull().check(sql`position >= 0`))
    .addColumn('service_id', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'bigint', (c) => c.notNull())
    .addColumn('ends_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_minutes', 'integer', (c) => c.notNull().check(sql`duration_minutes > 0`))
    .addColumn('buffer_after_minutes', 'integer', (c) => c.notNull().check(sql`buffer_after_minutes >= 0`))
    .addColumn('price_minor', 'integer', (c) => c.notNull().check(sql`price_minor >= 0`))
    .addColumn('deposit_minor', 'integer', (c) => c.check(sql`deposit_minor > 0`))
    .addPrimaryKeyConstraint('booking_services_pk', ['booking_id', 'position'])
    .addCheckConstraint('booking_services_times', sql`starts_at < ends_at`)
    .addForeignKeyConstraint('booking_services_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .addForeignKeyConstraint('booking_services_service', ['organisation_id', 'service_id'], 'services', [
      'organisation_id',
      'id',
    ])
    .execute();

  await db.schema
    .createTable('checkout_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('open', 'paid', 'abandoned', 'expired')`),
    )
    .addColumn('amount_minor', 'integer', (c) => c.notNull().check(sql`amount_minor > 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('success_url', 'text')
    .addColumn('cancel_url', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addForeignKeyConstraint('checkout_sessions_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('checkout_sessions_booking')
    .on('checkout_sessions')
    .columns(['booking_id'])
    .execute();

  await db.schema
    .createTable('booking_fees')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('late_cancellation', 'no_show')`))
    .addColumn('status', 'text', (c) =>
      c.check(sql`status is null or status in ('charged', 'waived', 'deposit_covered', 'failed')`),
    )
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('fee_percentage', 'integer', (c) => c.notNull().check(sql`fee_percentage between 0 and 100`))
    .addColumn('amount_minor', 'integer', (c) => c.notNull().check(sql`amount_minor >= 0`))
    .addColumn('deposit_credit_minor', 'integer', (c) => c.notNull().check(sql`deposit_credit_minor >= 0`))
    .addColumn('charge_amount_minor', 'integer', (c) => c.notNull().check(sql`charge_amount_minor >= 0`))
    .addColumn('failure_reason', 'text')
    .addColumn('processed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('booking_fees_pk', ['booking_id', 'kind'])
    .addCheckConstraint(
      'booking_fees_arithmetic',
      sql`deposit_credit_minor <= amount_minor and charge_amount_minor = amount_minor - deposit_credit_minor`,
    )
    .addForeignKeyConstraint('booking_fees_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();

  await db.schema
    .createTable('idempotency_records')
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull().check(sql`status_code between 200 and 499`))
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pk', ['organisation_id', 'idempotency_key'])
    .execute();
  await db.schema
    .createIndex('idempotency_records_expiry')
    .on('idempotency_records')
    .columns(['expires_at'])
    .execute();

  await db.schema
    .createTable('booking_events')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull().check(sql`seq >= 1`))
    .addColumn('from_status', 'text', (c) =>
      c.check(sql.raw(`from_status is null or from_status in ${STATUSES}`)),
    )
    .addColumn('to_status', 'text', (c) => c.notNull().check(sql.raw(`to_status in ${STATUSES}`)))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('details', 'text')
    .addPrimaryKeyConstraint('booking_events_pk', ['booking_id', 'seq'])
    .addForeignKeyConstraint('booking_events_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();

  if (isPostgres(db)) await createPostgresRules(db);
  else await createSqliteTriggers(db);
}

/**
 * SQLite triggers. The overlap guard names the organisation so that bookings_staff_time (led by
 * organisation_id) serves its lookup; without it every insert would scan the whole table.
 * A pending hold whose hold_expires_at has passed (by the clock of the writing
 * request, carried in NEW.updated_at) no longer blocks the slot, matching the lazy expiry rule.
 */
async function createSqliteTriggers(db: AnyDb): Promise<void> {
  // Any change to what the catalogue listings show bumps the organisation's catalogue_version, which
  // keys the listing caches of every process: whoever writes, no reader serves a stale page.
  for (const table of CATALOGUE_TABLES) {
    for (const [operation, row] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ] as const) {
      await sql
        .raw(
          `CREATE TRIGGER ${table}_bumps_catalogue_${operation.toLowerCase()} AFTER ${operation} ON ${table}
           BEGIN UPDATE organisations SET catalogue_version = catalogue_version + 1 WHERE id = ${row}.organisation_id; END`,
        )
        .execute(db);
    }
  }
  await sql
    .raw(
      `CREATE TRIGGER organisations_currency_bumps_catalogue AFTER UPDATE OF currency ON organisations
       WHEN OLD.currency <> NEW.currency
       BEGIN UPDATE organisations SET catalogue_version = catalogue_version + 1 WHERE id = NEW.id; END`,
    )
    .execute(db);

  for (const operation of ['UPDATE', 'DELETE']) {
    await sql
      .raw(
        `CREATE TRIGGER booking_events_append_only_${operation.toLowerCase()} BEFORE ${operation} ON booking_events
         BEGIN SELECT RAISE(ABORT, 'booking_events is append-only'); END`,
      )
      .execute(db);
  }
  const overlap = `
    SELECT RAISE(ABORT, 'booking_overlap')
    WHERE EXISTS (
      SELECT 1 FROM bookings b
      WHERE b.organisation_id = NEW.organisation_id
        AND b.staff_id = NEW.staff_id
        AND b.id <> NEW.id
        AND b.status IN ${LIVE}
        AND (b.status = 'confirmed' OR b.hold_expires_at IS NULL OR b.hold_expires_at > NEW.updated_at)
        AND b.starts_at < NEW.blocked_until
        AND NEW.starts_at < b.blocked_until
    );`;
  await sql
    .raw(
      `CREATE TRIGGER bookings_no_overlap_insert BEFORE INSERT ON bookings
       WHEN NEW.status IN ${LIVE}
       BEGIN ${overlap} END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER bookings_no_overlap_update BEFORE UPDATE OF staff_id, starts_at, blocked_until, status ON bookings
       WHEN NEW.status IN ${LIVE}
       BEGIN ${overlap} END`,
    )
    .execute(db);
}

/**
 * The same rules in PostgreSQL: trigger functions in PL/pgSQL, raising the same messages. The overlap
 * guard here is the first of two on PostgreSQL: concurrent transactions on several instances do not
 * see each other's uncommitted bookings, so a later migration adds an exclusion constraint, which
 * does (2026-11-23-0002-overlap-exclusion).
 */
async function createPostgresRules(db: AnyDb): Promise<void> {
  await sql
    .raw(
      `CREATE FUNCTION bump_catalogue_version() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE organisations SET catalogue_version = catalogue_version + 1
         WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.organisation_id ELSE NEW.organisation_id END;
         RETURN NULL;
       END $$`,
    )
    .execute(db);
  for (const table of CATALOGUE_TABLES) {
    await sql
      .raw(
        `CREATE TRIGGER ${table}_bumps_catalogue AFTER INSERT OR UPDATE OR DELETE ON ${table}
         FOR EACH ROW EXECUTE FUNCTION bump_catalogue_version()`,
      )
      .execute(db);
  }
  await sql
    .raw(
      `CREATE FUNCTION bump_catalogue_version_on_currency() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF OLD.currency <> NEW.currency THEN NEW.catalogue_version := NEW.catalogue_version + 1; END IF;
         RETURN NEW;
       END $$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER organisations_currency_bumps_catalogue BEFORE UPDATE OF currency ON organisations
       FOR EACH ROW EXECUTE FUNCTION bump_catalogue_version_on_currency()`,
    )
    .execute(db);

  await sql
    .raw(
      `CREATE FUNCTION booking_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'booking_events is append-only'; END $$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER booking_events_append_only BEFORE UPDATE OR DELETE ON booking_events
       FOR EACH ROW EXECUTE FUNCTION booking_events_refuse_change()`,
    )
    .execute(db);

  await sql
    .raw(
      `CREATE FUNCTION bookings_refuse_overlap() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.status IN ${LIVE} AND EXISTS (
           SELECT 1 FROM bookings b
           WHERE b.organisation_id = NEW.organisation_id
             AND b.staff_id = NEW.staff_id
             AND b.id <> NEW.id
             AND b.status IN ${LIVE}
             AND (b.status = 'confirmed' OR b.hold_expires_at IS NULL OR b.hold_expires_at > NEW.updated_at)
             AND b.starts_at < NEW.blocked_until
             AND NEW.starts_at < b.blocked_until
         ) THEN
           RAISE EXCEPTION 'booking_overlap';
         END IF;
         RETURN NEW;
       END $$`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER bookings_no_overlap BEFORE INSERT OR UPDATE OF staff_id, starts_at, blocked_until, status
       ON bookings FOR EACH ROW EXECUTE FUNCTION bookings_refuse_overlap()`,
    )
    .execute(db);
}

export async function down(): Promise<void> {
  throw new Error('The initial migration cannot be reverted; restore a backup instead.');
}

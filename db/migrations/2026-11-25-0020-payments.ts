import { type Kysely, sql } from 'kysely';

/**
 * Real payments (PAYMENT_PROVIDER=stripe). What the provider knows of our objects is kept beside them,
 * so that a webhook, a refund or a fee charge finds Stripe's objects again:
 *
 * - checkout_sessions: the provider's session id (`provider_ref`), the URL the customer pays at
 *   (`provider_url`), and once paid the payment to refund (`payment_ref`) and the refund (`refund_ref`).
 * - card_setups: one hosted card setup (Booking Protection) per row; once it succeeds, the customer and
 *   the saved payment method that fees are charged to.
 * - booking_fees: the payment a fee charge made (`payment_ref`).
 * - payment_events: every provider event applied, by its id, so a redelivered event changes nothing.
 *
 * Organisation data like the rest: organisation_id in every key (see 0004).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  for (const column of ['provider_ref', 'provider_url', 'payment_ref', 'refund_ref']) {
    await db.schema.alterTable('checkout_sessions').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('booking_fees').addColumn('payment_ref', 'text').execute();

  await db.schema
    .createTable('card_setups')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'succeeded', 'expired')`))
    .addColumn('provider_ref', 'text')
    .addColumn('provider_url', 'text')
    .addColumn('customer_ref', 'text')
    .addColumn('payment_method_ref', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addPrimaryKeyConstraint('card_setups_pk', ['id', 'organisation_id'])
    .addForeignKeyConstraint('card_setups_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .addCheckConstraint(
      'card_setups_saved',
      sql`status <> 'succeeded' or (payment_method_ref is not null and customer_ref is not null)`,
    )
    .execute();
  await db.schema
    .createIndex('card_setups_booking')
    .on('card_setups')
    .columns(['organisation_id', 'booking_id'])
    .execute();

  await db.schema
    .createTable('payment_events')
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('payment_events_pk', ['event_id', 'provider', 'organisation_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

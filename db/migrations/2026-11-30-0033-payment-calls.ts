import { type Kysely, sql } from 'kysely';

/**
 * payment_calls: a refund or a fee charge asked of the payment provider, written (and committed) before
 * the provider is called, outside any transaction, and removed in the transaction that writes its
 * outcome (src/app/payment-calls.ts). A row still here after its request ended is a call whose outcome
 * nobody wrote (the provider was unreachable, or the process died): the sweeper calls again under the
 * same idempotency key, which cannot refund or charge twice, and completes what was asked.
 *
 * - `kind` and `key` name the money movement, and make the provider's idempotency key (`refund:<key>`,
 *   `charge:<key>`): a refund's key is its checkout's id, a fee charge's the booking's id and fee kind.
 * - `purpose`: a cancellation (`reference`, `scope`, `reason` and `actor` are the request, completed as
 *   asked at `requested_at`), a payment the booking did not want (refunded), or a fee (`fee_kind`;
 *   `customer_ref`, `payment_method_ref` and `description` are what the charge is sent with).
 * - `attempted_at`: when the sweeper last tried it.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('payment_calls')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('refund', 'charge')`))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) =>
      c.notNull().check(sql`purpose in ('cancellation', 'unwanted_payment', 'fee')`),
    )
    .addColumn('amount_minor', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('payment_ref', 'text')
    .addColumn('fee_kind', 'text')
    .addColumn('customer_ref', 'text')
    .addColumn('payment_method_ref', 'text')
    .addColumn('description', 'text')
    .addColumn('reference', 'text')
    .addColumn('scope', 'text')
    .addColumn('reason', 'text')
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('requested_at', 'bigint', (c) => c.notNull())
    .addColumn('attempted_at', 'bigint')
    .addPrimaryKeyConstraint('payment_calls_pk', ['key', 'kind', 'organisation_id'])
    .addForeignKeyConstraint('payment_calls_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();
  await db.schema
    .createIndex('payment_calls_booking')
    .on('payment_calls')
    .columns(['organisation_id', 'booking_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

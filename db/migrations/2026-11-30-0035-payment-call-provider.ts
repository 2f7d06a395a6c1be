import type { Kysely } from 'kysely';

/**
 * payment_calls.provider: the payment provider (PAYMENT_PROVIDER) a call was asked of. A call in doubt
 * is completed only by that provider: asked of Stripe, the local test mode (which moves no money)
 * would write it as done, refunded or charged, whatever Stripe did. Null: a call written before this
 * column, left to a provider that takes money.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('payment_calls').addColumn('provider', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

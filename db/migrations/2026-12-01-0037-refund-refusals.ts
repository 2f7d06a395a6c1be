import type { Kysely } from 'kysely';

/**
 * checkout_sessions.refund_refused_at and refund_refusal: when the payment provider refused for good
 * the refund of a payment nobody needed (a lapsed hold's deposit, a payment that came after its hold
 * lapsed), and its reason. The refusal settles the refund: the hold sweeper no longer asks it again at
 * every sweep for a week (the same key gets the same answer); the money is returned by hand, from the
 * provider's dashboard. Null: never refused (refunded, never asked, or still in doubt).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('checkout_sessions').addColumn('refund_refused_at', 'bigint').execute();
  await db.schema.alterTable('checkout_sessions').addColumn('refund_refusal', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

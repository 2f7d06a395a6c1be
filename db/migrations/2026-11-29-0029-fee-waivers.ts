import type { Kysely } from 'kysely';

/**
 * Who may waive a late-cancellation or no-show fee in the console (issue 45): `organisations.fee_waivers`,
 * `staff` (any staff account, as before) or `owner_admin` (owners and admins only), from the
 * catalogue's `policies.fee_waivers`. Each waiver's reason is kept in its booking's event log.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('organisations')
    .addColumn('fee_waivers', 'text', (c) => c.notNull().defaultTo('staff'))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

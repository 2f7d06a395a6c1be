import { type Kysely, sql } from 'kysely';

/**
 * The organisation's cap on bookings its public page makes in a clock hour, across every contact and
 * address (design.md 9.1's caps, with a safe default): the caps per contact and per address alone let
 * someone with many addresses and a mail domain of their own hold the whole diary, each hold sending
 * a code.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('organisations')
    .addColumn('public_bookings_per_organisation_per_hour', 'integer', (c) =>
      c.notNull().defaultTo(30).check(sql`public_bookings_per_organisation_per_hour between 0 and 100000`),
    )
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

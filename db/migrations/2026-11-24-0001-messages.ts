import { type Kysely, sql } from 'kysely';

/**
 * Messages for staff: what a caller asked the receptionist (a voice agent) to pass on, taken by the
 * MCP tool take_message and listed by `booking messages list`. Organisation data like the rest: the
 * key (id, organisation_id) contains the organisation on both databases (see 0004), and the location,
 * when known, is a composite foreign key inside the organisation. The booking reference is kept as
 * text, as the caller's subject, not as a link that would tie the message's life to the booking's.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('location_id', 'text')
    .addColumn('caller_name', 'text', (c) => c.notNull().check(sql`length(caller_name) between 1 and 120`))
    .addColumn('phone', 'text', (c) => c.check(sql`phone is null or phone like '+%'`))
    .addColumn('message', 'text', (c) => c.notNull().check(sql`length(message) between 1 and 2000`))
    .addColumn('reference', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'done')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('done_at', 'bigint')
    .addPrimaryKeyConstraint('messages_pk', ['id', 'organisation_id'])
    .addForeignKeyConstraint('messages_location', ['organisation_id', 'location_id'], 'locations', [
      'organisation_id',
      'id',
    ])
    .addCheckConstraint(
      'messages_done',
      sql`(status = 'open' and done_at is null) or (status = 'done' and done_at is not null)`,
    )
    .execute();
  await db.schema
    .createIndex('messages_organisation')
    .on('messages')
    .columns(['organisation_id', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

import { type Kysely, sql } from 'kysely';

/**
 * Staff accounts of the console (design.md 8.4) and their sign-in sessions. Organisation data like
 * the rest: every key and foreign key holds organisation_id (see 0004). An e-mail address is unique
 * inside its organisation only, so signing in names the organisation too. Only an argon2id hash of a
 * password is stored, and only a SHA-256 of a session token (the token lives in the browser's cookie).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('email', 'text', (c) => c.notNull().check(sql`email like '%@%' and length(email) <= 254`))
    .addColumn('password_hash', 'text', (c) => c.notNull().check(sql`password_hash like '$argon2id$%'`))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'staff')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .addPrimaryKeyConstraint('users_pk', ['id', 'organisation_id'])
    .addUniqueConstraint('users_email', ['organisation_id', 'email'])
    .execute();
  await db.schema
    .createTable('user_sessions')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_sessions_pk', ['id', 'organisation_id'])
    .addForeignKeyConstraint(
      'user_sessions_user',
      ['user_id', 'organisation_id'],
      'users',
      ['id', 'organisation_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('user_sessions_user')
    .on('user_sessions')
    .columns(['organisation_id', 'user_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}

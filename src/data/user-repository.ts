import { type Db, dialectOf } from './database.ts';
import type { UserSessionsTable, UsersTable } from './tables.ts';

/** Staff accounts and their console sessions, always inside one organisation. */
export async function insertUser(db: Db, row: UsersTable): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export function findUserByEmail(
  db: Db,
  organisationId: string,
  email: string,
): Promise<UsersTable | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('email', '=', email)
    .executeTakeFirst();
}

export function listUsersOf(db: Db, organisationId: string): Promise<UsersTable[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('email')
    .execute();
}

export async function disableUserAt(
  db: Db,
  organisationId: string,
  userId: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ disabled_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', userId)
    .where('disabled_at', 'is', null)
    .execute();
  await deleteSessionsOf(db, organisationId, userId);
}

export async function setPasswordHash(
  db: Db,
  organisationId: string,
  userId: string,
  passwordHash: string,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', userId)
    .execute();
}

export async function insertSession(db: Db, row: UserSessionsTable): Promise<void> {
  await db.insertInto('user_sessions').values(row).execute();
}

export type SessionWithUser = UserSessionsTable & {
  email: string;
  role: UsersTable['role'];
  disabled_at: number | null;
  organisation_slug: string;
  organisation_name: string;
  organisation_locale: string;
  organisation_currency: string;
};

/** The session whose token hashes to `id`, with its user and organisation. */
export function findSession(db: Db, id: string): Promise<SessionWithUser | undefined> {
  return db
    .selectFrom('user_sessions')
    .innerJoin('users', (join) =>
      join
        .onRef('users.id', '=', 'user_sessions.user_id')
        .onRef('users.organisation_id', '=', 'user_sessions.organisation_id'),
    )
    .innerJoin('organisations', 'organisations.id', 'user_sessions.organisation_id')
    .selectAll('user_sessions')
    .select([
      'users.email',
      'users.role',
      'users.disabled_at',
      'organisations.slug as organisation_slug',
      'organisations.name as organisation_name',
      'organisations.locale as organisation_locale',
      'organisations.currency as organisation_currency',
    ])
    .where('user_sessions.id', '=', id)
    .executeTakeFirst();
}

export async function touchSession(db: Db, organisationId: string, id: string, now: number): Promise<void> {
  await db
    .updateTable('user_sessions')
    .set({ last_seen_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

export async function deleteSession(db: Db, organisationId: string, id: string): Promise<void> {
  await db
    .deleteFrom('user_sessions')
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .execute();
}

/**
 * The account's password hash and whether it is disabled, its row locked until the transaction ends on
 * PostgreSQL (on SQLite one writer runs at a time): a password change or a disabling, which update
 * the row first, waits for what is written under it, or is seen by it.
 */
export function lockedCredentials(
  trx: Db,
  organisationId: string,
  userId: string,
): Promise<Pick<UsersTable, 'password_hash' | 'disabled_at'> | undefined> {
  return trx
    .selectFrom('users')
    .select(['password_hash', 'disabled_at'])
    .where('organisation_id', '=', organisationId)
    .where('id', '=', userId)
    .$if(dialectOf(trx) === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

export async function deleteSessionsOf(db: Db, organisationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('user_sessions')
    .where('organisation_id', '=', organisationId)
    .where('user_id', '=', userId)
    .execute();
}

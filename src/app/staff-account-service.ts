import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Algorithm, hash, verify } from '@node-rs/argon2';
import type { Db } from '../data/database.ts';
import { findOrganisationBySlug, type Organisation } from '../data/organisation-repository.ts';
import { NO_ORGANISATION, type RateLimitCounter, type RateLimitStore } from '../data/rate-limit-counters.ts';
import type { UserRole, UsersTable } from '../data/tables.ts';
import * as users from '../data/user-repository.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { AppError } from '../domain/errors.ts';
import { normaliseEmail } from './contact.ts';
import { revokeConnectorsGrantedBy } from './oauth-connectors.ts';
import { clientOfAddress } from './rate-limiter.ts';

/**
 * Staff accounts of the console (design.md 8.4): created, listed, given a new password and disabled by
 * `booking users`, signed in at /console. Passwords are hashed with argon2id (OWASP's parameters:
 * 19 MiB, 2 passes); sessions are random 256-bit tokens of which only a SHA-256 is stored, ending after
 * IDLE_TIMEOUT_MS without use (a page opened or a form sent; the diary's background polling is not
 * use), and SESSION_LIFETIME_MS after sign-in whatever the use.
 */
export const USER_ROLES: readonly UserRole[] = ['owner', 'admin', 'staff'];
export const PASSWORD_MIN_LENGTH = 12;
export const IDLE_TIMEOUT_MS = 30 * 60_000;
/**
 * However much it is used, a session ends this long after its sign-in: a cookie copied off a desk
 * computer is not good for ever to whoever keeps it in use. A working day and its edges.
 */
export const SESSION_LIFETIME_MS = 14 * 60 * 60_000;
/** last_seen_at is written at most this often per session, so page views stay reads. */
const TOUCH_RESOLUTION_MS = 60_000;

// 2 is Algorithm.Argon2id, a const enum that isolated modules cannot read.
const ARGON2 = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

/**
 * Sign-in throttling. Failures are counted per account from one address, per address, and per account
 * from everywhere, in 15-minute windows: a guesser at one address is stopped after 5 tries at an
 * account, yet the account's owner at another address still signs in; only a spread-out attack on
 * one account (100 failures a window) makes it wait, and then only for the window's rest.
 */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_LIMITS = { accountFromAddress: 5, address: 50, account: 100 };

export interface StaffUser {
  id: string;
  organisationId: string;
  email: string;
  role: UserRole;
  createdAt: number;
  disabledAt: number | null;
}

export interface ConsoleSession {
  /** Hash of the token: the session's id in the database. */
  id: string;
  csrfToken: string;
  user: { id: string; email: string; role: UserRole };
  organisation: { id: string; slug: string; name: string; locale: string; currency: string };
  /**
   * When the session ends unless used again (epoch ms): its last use, as stored, plus IDLE_TIMEOUT_MS.
   * The cookie is given the same end, so browser and server agree.
   */
  idleUntil: number;
}

export async function createUser(
  db: Db,
  input: { organisationSlug: string; email: string; role: string; password: string },
  now: number,
): Promise<StaffUser> {
  const organisationId = await organisationIdOf(db, input.organisationSlug);
  const email = normaliseEmail(input.email)?.toLowerCase();
  if (!email) throw new AppError('invalid_request', `"${input.email}" is not an e-mail address.`, 'email');
  if (!USER_ROLES.includes(input.role as UserRole)) {
    throw new AppError('invalid_request', 'A role is owner, admin or staff.', 'role');
  }
  checkPasswordLength(input.password);
  if (await users.findUserByEmail(db, organisationId, email)) {
    throw new AppError('conflict', `This organisation already has a user ${email}.`, 'email');
  }
  const row: UsersTable = {
    id: randomUUID(),
    organisation_id: organisationId,
    email,
    password_hash: await hash(input.password, ARGON2),
    role: input.role as UserRole,
    created_at: now,
    disabled_at: null,
  };
  await users.insertUser(db, row);
  return toUser(row);
}

export async function listUsers(db: Db, organisationSlug: string): Promise<StaffUser[]> {
  return (await users.listUsersOf(db, await organisationIdOf(db, organisationSlug))).map(toUser);
}

/**
 * Disables an account and ends at once its sessions and the MCP connectors it granted (again: no
 * change): someone who leaves keeps no way in through an app they connected.
 */
export async function disableUser(
  db: Db,
  organisationSlug: string,
  email: string,
  now: number,
): Promise<void> {
  const organisationId = await organisationIdOf(db, organisationSlug);
  const user = await users.findUserByEmail(db, organisationId, email.trim().toLowerCase());
  if (!user) throw new AppError('not_found', `No user ${email} in ${organisationSlug}.`, 'email');
  await writeTransaction(db, async (trx) => {
    await users.disableUserAt(trx, organisationId, user.id, now);
    await revokeConnectorsGrantedBy(trx, organisationId, user.id, now);
  });
}

/**
 * Gives an enabled account a new password and ends, at once, every console session it has on every
 * device and the MCP connectors it granted (which signed in with the old password too): a password
 * that leaked stops working, and whoever got in with it, in a browser or through an app, is cut off.
 */
export async function setPassword(
  db: Db,
  input: { organisationSlug: string; email: string; password: string },
  now: number,
): Promise<StaffUser> {
  const organisationId = await organisationIdOf(db, input.organisationSlug);
  const email = input.email.trim().toLowerCase();
  checkPasswordLength(input.password);
  const user = await users.findUserByEmail(db, organisationId, email);
  if (!user) throw new AppError('not_found', `No user ${email} in ${input.organisationSlug}.`, 'email');
  if (user.disabled_at !== null) {
    throw new AppError('conflict', `${email} is disabled: a disabled account stays disabled.`, 'email');
  }
  const passwordHash = await hash(input.password, ARGON2);
  await writeTransaction(db, async (trx) => {
    await users.setPasswordHash(trx, organisationId, user.id, passwordHash);
    await users.deleteSessionsOf(trx, organisationId, user.id);
    await revokeConnectorsGrantedBy(trx, organisationId, user.id, now);
  });
  return toUser(user);
}

function checkPasswordLength(password: string): void {
  if ([...password].length < PASSWORD_MIN_LENGTH) {
    throw new AppError(
      'invalid_request',
      `A password has at least ${PASSWORD_MIN_LENGTH} characters.`,
      'password',
    );
  }
}

export interface SignInAttempt {
  organisationSlug: string;
  email: string;
  password: string;
  /** The client's address, for throttling. */
  address: string;
}

export type SignInOutcome =
  | { ok: true; token: string; session: ConsoleSession }
  /** One answer for every wrong one (unknown organisation or e-mail, wrong password, disabled account). */
  | { ok: false; reason: 'wrong' }
  | { ok: false; reason: 'throttled'; retryAfterMs: number };

/**
 * A new session for the right password of an enabled account. A refusal says nothing about which
 * accounts exist; a throttled attempt is refused before the password is even checked.
 */
export async function signIn(
  db: Db,
  store: RateLimitStore,
  attempt: SignInAttempt,
  now: number,
): Promise<SignInOutcome> {
  const checked = await checkPassword(db, store, attempt, now);
  if (!checked.ok) return checked;
  return startSession(db, checked.organisation, checked.user, now);
}

export type PasswordCheck =
  | { ok: true; organisation: Organisation; user: UsersTable }
  | { ok: false; reason: 'wrong' }
  | { ok: false; reason: 'throttled'; retryAfterMs: number };

/**
 * The account of a right password, under signIn's throttling, without starting a console session:
 * the sign-in of the OAuth consent page (design.md 9.3), which grants a connector, not a session.
 */
export async function checkPassword(
  db: Db,
  store: RateLimitStore,
  attempt: SignInAttempt,
  now: number,
): Promise<PasswordCheck> {
  const slug = attempt.organisationSlug.trim().toLowerCase();
  const email = attempt.email.trim().toLowerCase();
  const counters = throttles(slug, email, attempt.address);
  const windowEnd = Math.floor(now / SIGN_IN_WINDOW_MS) * SIGN_IN_WINDOW_MS + SIGN_IN_WINDOW_MS;
  // Each try is counted as a failure before its password is checked (a slot reserved in one atomic
  // step per counter, so parallel tries cannot all pass a check made before any of them counted), and
  // given back if it proves right. Narrowest counter first: a guesser's refused tries stop at their
  // own account-and-address counter and never add to the account's, which its owner signs in under.
  const reserved: RateLimitCounter[] = [];
  for (const { counter, limit } of counters) {
    if ((await store.incrementBelow(counter, limit, windowEnd)) === null) {
      await giveBack(store, reserved, windowEnd);
      return { ok: false, reason: 'throttled', retryAfterMs: windowEnd - now };
    }
    reserved.push(counter);
  }
  let wrong = false;
  try {
    const organisation = await findOrganisationBySlug(db, slug);
    const user = organisation && (await users.findUserByEmail(db, organisation.id, email));
    // An unknown account still costs a hash check, so timing does not tell which accounts exist.
    const ok = await verify(user?.password_hash ?? DUMMY_HASH, attempt.password).catch(() => false);
    if (!organisation || !user || !ok || user.disabled_at !== null) {
      wrong = true;
      return { ok: false, reason: 'wrong' };
    }
    return { ok: true, organisation, user };
  } finally {
    // Only a wrong password stays counted (not a right one, nor a try the server failed to answer).
    if (!wrong) await giveBack(store, reserved, windowEnd);
  }
}

/**
 * Runs `write` (a console session, a connector's record) for an account whose password `checked`
 * proved, in one transaction, only while that password is still the account's and the account
 * enabled; false when it is not. A password changed or an account disabled between the check (the
 * slow hash) and the write would otherwise leave standing a session or connector started with the
 * old password just after the change ended all the others.
 */
export async function whilePasswordHolds(
  db: Db,
  checked: Pick<UsersTable, 'id' | 'organisation_id' | 'password_hash'>,
  write: (trx: Db) => Promise<unknown>,
): Promise<boolean> {
  return writeTransaction(db, async (trx) => {
    const now = await users.lockedCredentials(trx, checked.organisation_id, checked.id);
    if (!now || now.password_hash !== checked.password_hash || now.disabled_at !== null) return false;
    await write(trx);
    return true;
  });
}

async function giveBack(store: RateLimitStore, counters: readonly RateLimitCounter[], windowEnd: number) {
  for (const counter of counters) await store.decrement(counter, windowEnd);
}

async function startSession(
  db: Db,
  organisation: Organisation,
  user: UsersTable,
  now: number,
): Promise<SignInOutcome> {
  const token = randomBytes(32).toString('base64url');
  const session = {
    id: sessionIdOf(token),
    organisation_id: organisation.id,
    user_id: user.id,
    csrf_token: randomBytes(32).toString('base64url'),
    created_at: now,
    last_seen_at: now,
  };
  const started = await whilePasswordHolds(db, user, (trx) => users.insertSession(trx, session));
  if (!started) return { ok: false, reason: 'wrong' };
  return {
    ok: true,
    token,
    session: {
      id: session.id,
      csrfToken: session.csrf_token,
      user: { id: user.id, email: user.email, role: user.role },
      organisation: {
        id: organisation.id,
        slug: organisation.slug,
        name: organisation.name,
        locale: organisation.locale,
        currency: organisation.currency,
      },
      idleUntil: now + IDLE_TIMEOUT_MS,
    },
  };
}

/**
 * The live session of a cookie's token, or null (unknown, idle for IDLE_TIMEOUT_MS or more, or its
 * account disabled). An idle session is deleted as it is found. A request that is `use` of the console
 * (a page someone opened, a form they sent) starts its idle time afresh; one that is not (the diary's
 * own polling, which runs on a screen nobody is at as well) leaves it running.
 */
export async function resumeSession(
  db: Db,
  token: string,
  now: number,
  use = true,
): Promise<ConsoleSession | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const id = sessionIdOf(token);
  const row = await users.findSession(db, id);
  if (!row) return null;
  const endsAt = row.created_at + SESSION_LIFETIME_MS;
  if (now - row.last_seen_at >= IDLE_TIMEOUT_MS || now >= endsAt || row.disabled_at !== null) {
    await users.deleteSession(db, row.organisation_id, id);
    return null;
  }
  let lastUse = row.last_seen_at;
  if (use && now - row.last_seen_at >= TOUCH_RESOLUTION_MS) {
    lastUse = await users.touchSession(db, row.organisation_id, id, now).then(
      () => now,
      () => row.last_seen_at,
    );
  }
  return {
    id,
    csrfToken: row.csrf_token,
    user: { id: row.user_id, email: row.email, role: row.role },
    organisation: {
      id: row.organisation_id,
      slug: row.organisation_slug,
      name: row.organisation_name,
      locale: row.organisation_locale,
      currency: row.organisation_currency,
    },
    idleUntil: Math.min(lastUse + IDLE_TIMEOUT_MS, endsAt),
  };
}

export async function signOut(db: Db, session: ConsoleSession): Promise<void> {
  await users.deleteSession(db, session.organisation.id, session.id);
}

/** Owners and admins manage API keys; staff run the diary. */
export function canManageKeys(role: UserRole): boolean {
  return role === 'owner' || role === 'admin';
}

function throttles(
  slug: string,
  email: string,
  address: string,
): { counter: RateLimitCounter; limit: number }[] {
  // The shared store keys counters by organisation; a sign-in's organisation is not known to be real
  // yet, so these live with the other pre-authentication counters. The account is named by a hash:
  // a typed e-mail has no length limit worth trusting (a 4 KB one broke PostgreSQL's index row) and
  // stays out of the counters table.
  const account = createHash('sha256').update(`${slug}\u0000${email}`).digest('hex');
  const client = clientOfAddress(address);
  return [
    {
      counter: { organisationId: NO_ORGANISATION, name: `signin:${account}/${client}` },
      limit: SIGN_IN_LIMITS.accountFromAddress,
    },
    {
      counter: { organisationId: NO_ORGANISATION, name: `signin-address:${client}` },
      limit: SIGN_IN_LIMITS.address,
    },
    {
      counter: { organisationId: NO_ORGANISATION, name: `signin-account:${account}` },
      limit: SIGN_IN_LIMITS.account,
    },
  ];
}

function sessionIdOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

async function organisationIdOf(db: Db, slug: string): Promise<string> {
  const organisation = await findOrganisationBySlug(db, slug);
  if (!organisation) throw new AppError('not_found', `No organisation has the slug "${slug}".`, 'org');
  return organisation.id;
}

function toUser(row: UsersTable): StaffUser {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    email: row.email,
    role: row.role,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
  };
}

/** A hash of a password nobody has, checked when the account does not exist. */
const DUMMY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$j0deOsVsXngD1c5Rz/VWJQ$kV3SEuBmg/G3TmEw0JqaGIq6hyzeVu1AUhRwsnwYTN0';

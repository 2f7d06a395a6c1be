import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  feedBookings,
  findFeedByHash,
  insertFeed,
  insertFeedOnce,
  listBusyCalendars,
  listFeeds,
  revokeFeed,
  touchFeed,
} from '../../data/calendar-repository.ts';
import type { Db } from '../../data/database.ts';
import { writeStatement } from '../../data/write-transaction.ts';
import { FEED_DAYS_AHEAD, FEED_DAYS_BACK, FEED_STATUSES, writeFeed } from '../../domain/calendar-feed.ts';
import { AppError } from '../../domain/errors.ts';
import { alreadySent, idOfForm } from '../once-forms.ts';

/**
 * Staff calendar feeds (design.md 9.6): issue, list, revoke, and the feed itself. A feed's token is
 * its only credential (GET /ical/{token}.ics carries no key, as calendar apps cannot send one): 32
 * random bytes (256 bits), of which only the SHA-256 is stored, so the address is shown once, when
 * the feed is made (docs/decisions/calendar-feed-tokens.md). A lost address is replaced by a new feed.
 */

const DAY_MS = 86_400_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The token's shape (base64url of 32 bytes): anything else is no feed, without a query. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface FeedSummary {
  id: string;
  staffId: string;
  staffName: string;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export function feedPath(token: string): string {
  return `/ical/${token}.ics`;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * A staff member of the organisation by id, ref, name or first name (any case); one, or a 404 / 400
 * saying why. A first name ("Eli" for Eli Stone) is taken when one active member has it; one that
 * several have is refused naming them.
 */
export async function requireStaffMember(
  db: Db,
  organisationId: string,
  asked: string,
): Promise<{ id: string; name: string; active: boolean }> {
  const wanted = asked.trim();
  const staff = await db
    .selectFrom('staff')
    .select(['id', 'ref', 'name', 'active'])
    .where('organisation_id', '=', organisationId)
    .execute();
  const member = (s: (typeof staff)[number]) => ({ id: s.id, name: s.name, active: s.active === 1 });
  const byId = UUID.test(wanted) ? staff.find((s) => s.id === wanted.toLowerCase()) : undefined;
  if (byId) return member(byId);
  const byRef = staff.find((s) => s.ref === wanted);
  if (byRef) return member(byRef);
  const lower = wanted.toLowerCase();
  const byName = staff.filter((s) => s.name.toLowerCase() === lower);
  if (byName.length === 1) return member(byName[0]!);
  if (byName.length > 1) {
    throw new AppError(
      'invalid_request',
      `Several staff members are called "${wanted}": give the id.`,
      'staff',
    );
  }
  const byFirstName = staff.filter(
    (s) => s.active === 1 && s.name.trim().split(/\s+/)[0]!.toLowerCase() === lower,
  );
  if (byFirstName.length === 1) return member(byFirstName[0]!);
  if (byFirstName.length > 1) {
    const names = byFirstName.map((s) => s.name).sort((a, b) => a.localeCompare(b));
    throw new AppError(
      'invalid_request',
      `Several staff members are called "${wanted}" (${names.join(', ')}): give the full name, ref or id.`,
      'staff',
    );
  }
  throw new AppError('not_found', `No staff member has the id, ref or name "${wanted}".`, 'staff');
}

/** The organisation's active staff, by name (the console's choice of whom to make a feed for). */
export async function staffOfOrganisation(
  db: Db,
  organisationId: string,
): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('staff')
    .select(['id', 'name'])
    .where('organisation_id', '=', organisationId)
    .where('active', '=', 1)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/**
 * Makes a feed for the staff member: its summary and its token (shown this once). `formId`, the console
 * form's one-time id: the same form sent again makes no second feed (once-forms.ts).
 */
export async function createFeed(
  db: Db,
  organisationId: string,
  staffId: string,
  now: number,
  formId?: string,
): Promise<{ feed: FeedSummary; token: string }> {
  const member = await requireStaffMember(db, organisationId, staffId);
  // Its address would answer 404 while they are out of the catalogue (feed-routes.ts): refused, said.
  if (!member.active) {
    throw new AppError(
      'conflict',
      `${member.name} is not an active staff member: a feed of theirs would not be served. Make it once they are active again.`,
      'staff',
    );
  }
  const token = randomBytes(32).toString('base64url');
  const id = formId === undefined ? randomUUID() : idOfForm(organisationId, formId);
  const row = {
    id,
    organisation_id: organisationId,
    staff_id: member.id,
    token_hash: hashToken(token),
    created_at: now,
    revoked_at: null,
    last_used_at: null,
  };
  if (formId === undefined) await writeStatement(db, (trx) => insertFeed(trx, row));
  else if (!(await writeStatement(db, (trx) => insertFeedOnce(trx, row)))) throw alreadySent('feed');
  return {
    feed: {
      id,
      staffId: member.id,
      staffName: member.name,
      createdAt: now,
      revokedAt: null,
      lastUsedAt: null,
    },
    token,
  };
}

export async function listCalendarFeeds(
  db: Db,
  organisationId: string,
  staffId?: string,
): Promise<FeedSummary[]> {
  const rows = await listFeeds(db, organisationId, staffId);
  return rows.map((r) => ({
    id: r.id,
    staffId: r.staff_id,
    staffName: r.staff_name,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
  }));
}

/** Revokes a feed: its address answers 404 from now on. 404 when there is no live feed with this id. */
export async function revokeCalendarFeed(
  db: Db,
  organisationId: string,
  id: string,
  now: number,
): Promise<void> {
  const revoked =
    UUID.test(id) &&
    (await writeStatement(db, (trx) => revokeFeed(trx, organisationId, id.toLowerCase(), now)));
  if (!revoked) {
    throw new AppError('not_found', 'No live calendar feed has this id.', 'id');
  }
}

export interface BusyCalendarStatus {
  id: string;
  staffId: string;
  staffName: string;
  /** The calendar's address as it is shown (shownCalendarAddress): never the whole of it. */
  address: string;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  busyCount: number;
}

/** The organisation's external busy calendars and how their refreshes go (for the console, the CLI). */
export async function busyCalendarStatuses(db: Db, organisationId: string): Promise<BusyCalendarStatus[]> {
  const rows = await listBusyCalendars(db, organisationId);
  return rows.map((r) => ({
    id: r.id,
    staffId: r.staff_id,
    staffName: r.staff_name,
    address: shownCalendarAddress(r.url),
    lastSuccessAt: r.last_success_at,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
    busyCount: r.busy_count,
  }));
}

/**
 * A busy calendar's address as the console and the CLI show it: host and path (and query), each part
 * that could be a secret cut to its last four characters (…1e85). The address of a Google, iCloud or
 * Outlook calendar is its only credential (Google's "secret address", iCloud's public link, Outlook's
 * published ICS link): anyone who holds it reads the whole calendar, so it is shown nowhere whole (the
 * catalogue file has it); what is left tells the calendars apart. A part is taken for a secret when it
 * is long (12 characters or more, an .ics ending aside) or has a digit among 8 or more; the rest
 * (calendar, ical, published, basic.ics) is shown as it is. The parts stay percent-encoded, so that
 * nothing in them can act on a terminal or a page.
 */
export function shownCalendarAddress(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '(an address that cannot be read)';
  }
  const path = url.pathname.split('/').map(shownPart).join('/');
  const query = url.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => pair.split('=').map(shownPart).join('='))
    .join('&');
  return `${url.host}${path}${query === '' ? '' : `?${query}`}`;
}

function shownPart(part: string): string {
  const ending = /\.(ics|ical|ifb|vcs)$/i.exec(part)?.[0] ?? '';
  const stem = part.slice(0, part.length - ending.length);
  const secretLike = stem.length >= 12 || (stem.length >= 8 && /\d/.test(stem));
  return secretLike ? `…${stem.slice(-4)}${ending}` : part;
}

/**
 * The feed of a token as iCalendar text, or null when the token names no live feed, or the feed of a
 * staff member who is inactive (the caller answers 404 either way, so that an unknown, a revoked and
 * a suspended address cannot be told apart; the feed is not revoked, and serves again once they are
 * active).
 */
export async function renderFeed(db: Db, token: string, now: number): Promise<string | null> {
  if (!TOKEN.test(token)) return null;
  const feed = await findFeedByHash(db, hashToken(token));
  if (!feed || feed.revoked_at !== null) return null;
  const bookings = await feedBookings(
    db,
    feed.organisation_id,
    feed.staff_id,
    { start: now - FEED_DAYS_BACK * DAY_MS, end: now + FEED_DAYS_AHEAD * DAY_MS },
    FEED_STATUSES,
    now,
  );
  await writeStatement(db, (trx) => touchFeed(trx, feed.organisation_id, feed.id, now));
  return writeFeed({ name: `${feed.staff_name} – ${feed.organisation_name}`, bookings });
}

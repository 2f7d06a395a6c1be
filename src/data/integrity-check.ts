import { sql } from 'kysely';
import { LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import { type Db, dialectOf } from './database.ts';
import { ONCE_FINGERPRINT } from './idempotency-records.ts';

/** One invariant of the stored data, and the rows that break it (at most a few, as examples). */
export interface IntegrityFinding {
  check: IntegrityCheckName;
  /** What the check proves when it passes, for people reading `booking check`. */
  description: string;
  violations: number;
  examples: string[];
}

export type IntegrityCheckName =
  | 'storage'
  | 'no_double_booking'
  | 'booking_segments'
  | 'event_log'
  | 'idempotency_records';

export interface IntegrityReport {
  ok: boolean;
  bookings: number;
  liveBookings: number;
  findings: IntegrityFinding[];
}

const MAX_EXAMPLES = 5;
const LIVE = sql.join(LIVE_STATUSES.map((status) => sql.lit(status)));

/**
 * Checks the invariants the engine promises of its data, after the fact: what `booking check`, the
 * crash test, the mixed-load run and a restored backup rely on. Every check is one query over all
 * rows (no sampling), so a pass means no row anywhere breaks it. `now` decides which pending bookings
 * still hold their slot (a lapsed hold frees it even before the sweeper writes `expired`).
 */
export async function checkIntegrity(db: Db, now: number): Promise<IntegrityReport> {
  const findings = [
    await checkStorage(db),
    await checkNoDoubleBooking(db, now),
    await checkBookingSegments(db),
    await checkEventLog(db),
    await checkIdempotencyRecords(db),
  ];
  const counts = await sql<{ bookings: number; live: number }>`
    SELECT count(*) AS bookings,
           coalesce(sum(CASE WHEN ${liveAt(sql.ref('status'), sql.ref('hold_expires_at'), now)} THEN 1 ELSE 0 END), 0) AS live
    FROM bookings`.execute(db);
  const row = counts.rows[0];
  return {
    ok: findings.every((finding) => finding.violations === 0),
    bookings: Number(row?.bookings ?? 0),
    liveBookings: Number(row?.live ?? 0),
    findings,
  };
}

function liveAt(status: ReturnType<typeof sql.ref>, holdExpiresAt: ReturnType<typeof sql.ref>, now: number) {
  return sql`(${status} IN (${LIVE}) AND (${status} = 'confirmed' OR ${holdExpiresAt} IS NULL OR ${holdExpiresAt} > ${now}))`;
}

function finding(check: IntegrityCheckName, description: string, examples: string[]): IntegrityFinding {
  return { check, description, violations: examples.length, examples: examples.slice(0, MAX_EXAMPLES) };
}

/**
 * SQLite: its own page-level check and its foreign-key check over every table (foreign keys can be
 * switched off per connection, so rows may break them). PostgreSQL checks pages as it reads them and
 * always enforces its constraints; what can still be wrong there is a constraint added NOT VALID and
 * never validated, which old rows may break.
 */
async function checkStorage(db: Db): Promise<IntegrityFinding> {
  const description = 'the file is intact and every foreign key points at a row';
  if (dialectOf(db) === 'postgres') {
    const unvalidated = await sql<{ name: string; table: string }>`
      SELECT conname AS name, conrelid::regclass::text AS table FROM pg_constraint
      WHERE NOT convalidated AND connamespace = current_schema()::regnamespace`.execute(db);
    return finding(
      'storage',
      'every constraint holds for every row (none added without validation)',
      unvalidated.rows.map((row) => `${row.table} has the unvalidated constraint ${row.name}`),
    );
  }
  const integrity = await sql<{ integrity_check: string }>`PRAGMA integrity_check`.execute(db);
  const problems = integrity.rows.map((row) => row.integrity_check).filter((text) => text !== 'ok');
  const foreignKeys = await sql<{
    table: string;
    /** Null in a WITHOUT ROWID table. */
    rowid: number | null;
    parent: string;
  }>`PRAGMA foreign_key_check`.execute(db);
  for (const row of foreignKeys.rows) {
    const which = row.rowid === null ? `a ${row.table} row` : `${row.table} row ${row.rowid}`;
    problems.push(`${which} points at a missing ${row.parent}`);
  }
  return finding('storage', description, problems);
}

/** Two live bookings of one staff member whose blocks (start to end plus buffer) overlap. */
async function checkNoDoubleBooking(db: Db, now: number): Promise<IntegrityFinding> {
  const result = await sql<{ first: string; second: string; staff_id: string }>`
    SELECT a.reference AS first, b.reference AS second, a.staff_id
    FROM bookings a
    JOIN bookings b
      ON b.organisation_id = a.organisation_id
     AND b.staff_id = a.staff_id
     AND b.id > a.id
     AND b.starts_at < a.blocked_until
     AND a.starts_at < b.blocked_until
    WHERE ${liveAt(sql.ref('a.status'), sql.ref('a.hold_expires_at'), now)}
      AND ${liveAt(sql.ref('b.status'), sql.ref('b.hold_expires_at'), now)}`.execute(db);
  return finding(
    'no_double_booking',
    'no two live bookings of one staff member overlap (buffers included)',
    result.rows.map((row) => `${row.first} and ${row.second} overlap for staff ${row.staff_id}`),
  );
}

/**
 * Every booking has its services as positions 0..n-1, each lasting its duration, back to back from the
 * booking's start to its end, blocking until the last buffer ends, and priced at the booking's total: a booking
 * written without its services, or half of them, shows up here.
 */
async function checkBookingSegments(db: Db): Promise<IntegrityFinding> {
  const result = await sql<{ reference: string; problem: string }>`
    SELECT b.reference,
      CASE
        WHEN s.segments IS NULL THEN 'has no services'
        WHEN s.first_position <> 0 OR s.last_position <> s.segments - 1 THEN 'has gaps in its service positions'
        WHEN s.first_start <> b.starts_at OR s.last_end <> b.ends_at THEN 'services do not span the booking'
        WHEN s.total_price <> b.total_price_minor THEN 'total price differs from its services'
        WHEN s.wrong_durations > 0 THEN 'a service does not last its duration'
        WHEN s.total_minutes * 60000 <> b.ends_at - b.starts_at THEN 'services do not run back to back'
        ELSE 'blocks the staff member until the wrong time'
      END AS problem
    FROM bookings b
    LEFT JOIN (
      SELECT booking_id,
             count(*) AS segments,
             min(position) AS first_position,
             max(position) AS last_position,
             min(starts_at) AS first_start,
             max(ends_at) AS last_end,
             sum(price_minor) AS total_price,
             sum(duration_minutes) AS total_minutes,
             sum(CASE WHEN ends_at - starts_at <> duration_minutes * 60000 THEN 1 ELSE 0 END) AS wrong_durations
      FROM booking_services
      GROUP BY booking_id
    ) s ON s.booking_id = b.id
    LEFT JOIN booking_services last
      ON last.booking_id = b.id AND last.position = s.last_position
    WHERE s.segments IS NULL
       OR s.first_position <> 0
       OR s.last_position <> s.segments - 1
       OR s.first_start <> b.starts_at
       OR s.last_end <> b.ends_at
       OR s.total_price <> b.total_price_minor
       OR s.wrong_durations > 0
       OR s.total_minutes * 60000 <> b.ends_at - b.starts_at
       OR last.ends_at + last.buffer_after_minutes * 60000 <> b.blocked_until`.execute(db);
  return finding(
    'booking_segments',
    'every booking has all its services, spanning it exactly, priced at its total',
    result.rows.map((row) => `${row.reference} ${row.problem}`),
  );
}

/**
 * The append-only event log tells each booking's whole story: events numbered 1..n, the first one
 * creating the booking, each starting from the status the previous one ended in, the last one ending
 * in the booking's stored status.
 */
async function checkEventLog(db: Db): Promise<IntegrityFinding> {
  const result = await sql<{ reference: string; problem: string }>`
    SELECT b.reference,
      CASE
        WHEN e.events IS NULL THEN 'has no events'
        WHEN e.first_seq <> 1 OR e.last_seq <> e.events THEN 'has gaps in its event numbers'
        WHEN first.from_status IS NOT NULL THEN 'has a first event that does not create it'
        WHEN e.broken_links > 0 THEN 'has an event that does not start where the previous one ended'
        ELSE 'ends its log in another status than it has'
      END AS problem
    FROM bookings b
    LEFT JOIN (
      SELECT ev.booking_id,
             count(*) AS events,
             min(ev.seq) AS first_seq,
             max(ev.seq) AS last_seq,
             sum(CASE WHEN ev.seq > 1 AND (prev.to_status IS NULL OR ev.from_status IS NULL
                        OR prev.to_status <> ev.from_status) THEN 1 ELSE 0 END) AS broken_links
      FROM booking_events ev
      LEFT JOIN booking_events prev ON prev.booking_id = ev.booking_id AND prev.seq = ev.seq - 1
      GROUP BY ev.booking_id
    ) e ON e.booking_id = b.id
    LEFT JOIN booking_events first ON first.booking_id = b.id AND first.seq = 1
    LEFT JOIN booking_events last ON last.booking_id = b.id AND last.seq = e.last_seq
    WHERE e.events IS NULL
       OR e.first_seq <> 1
       OR e.last_seq <> e.events
       OR first.from_status IS NOT NULL
       OR e.broken_links > 0
       OR last.to_status <> b.status`.execute(db);
  return finding(
    'event_log',
    'every booking’s event log runs without gaps from its creation to its current status',
    result.rows.map((row) => `${row.reference} ${row.problem}`),
  );
}

const REFERENCE_BATCH = 500;

/**
 * A stored booking response is what an idempotent retry replays, so it must describe a booking that
 * exists in the same organisation under the same reference, and each booking is answered by at most
 * one stored response: a response stored without its booking (or a booking written twice for one key)
 * would make a retry lie. A public booking form's record (ONCE_FINGERPRINT: the form sent again leads
 * to what it made) holds the booking's page token instead: that page must exist.
 */
async function checkIdempotencyRecords(db: Db): Promise<IntegrityFinding> {
  const records = await db
    .selectFrom('idempotency_records')
    .select(['organisation_id', 'fingerprint', 'response_body'])
    .where('status_code', '>=', 200)
    .where('status_code', '<', 300)
    .execute();
  const problems: string[] = [];
  const references = new Map<string, Set<string>>();
  const pageTokens = new Map<string, Set<string>>();
  for (const record of records) {
    const form = record.fingerprint === ONCE_FINGERPRINT;
    const named = form ? storedPageToken(record.response_body) : storedReference(record.response_body);
    const seen = setOf(form ? pageTokens : references, record.organisation_id);
    if (named === null)
      problems.push(`a stored success response is not ${form ? "a booking page's" : 'a booking'}`);
    else if (form) seen.add(named);
    else if (seen.has(named)) problems.push(`${named} is the stored response of two keys`);
    else seen.add(named);
  }
  for (const [organisationId, all] of references) {
    for (const missing of await absent(all, (batch) =>
      db
        .selectFrom('bookings')
        .select('reference as key')
        .where('organisation_id', '=', organisationId)
        .where('reference', 'in', batch)
        .execute(),
    )) {
      problems.push(`the stored response for ${missing} names a missing booking`);
    }
  }
  for (const [organisationId, all] of pageTokens) {
    const missing = await absent(all, (batch) =>
      db
        .selectFrom('booking_pages')
        .select('token as key')
        .where('organisation_id', '=', organisationId)
        .where('token', 'in', batch)
        .execute(),
    );
    // The token itself is a capability: not written out.
    problems.push(...missing.map(() => "a booking form's stored response names a missing booking page"));
  }
  return finding(
    'idempotency_records',
    'every stored booking response names one booking that exists',
    problems,
  );
}

function setOf(map: Map<string, Set<string>>, key: string): Set<string> {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  return set;
}

/** Those of `keys` that `found` (read in batches) does not return. */
async function absent(
  keys: Set<string>,
  found: (batch: string[]) => Promise<{ key: string }[]>,
): Promise<string[]> {
  const all = [...keys];
  const missing: string[] = [];
  for (let start = 0; start < all.length; start += REFERENCE_BATCH) {
    const batch = all.slice(start, start + REFERENCE_BATCH);
    const present = new Set((await found(batch)).map((row) => row.key));
    missing.push(...batch.filter((key) => !present.has(key)));
  }
  return missing;
}

function storedPageToken(body: string): string | null {
  try {
    const token = (JSON.parse(body) as { token?: unknown }).token;
    return typeof token === 'string' ? token : null;
  } catch {
    return null;
  }
}

function storedReference(body: string): string | null {
  try {
    const reference = (JSON.parse(body) as { data?: { reference?: unknown } }).data?.reference;
    return typeof reference === 'string' ? reference : null;
  } catch {
    return null;
  }
}

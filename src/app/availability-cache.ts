import type { Db } from '../data/database.ts';
import { type AvailabilityVersions, availabilityVersions } from '../data/organisation-repository.ts';
import type { Availability } from '../domain/availability/types.ts';
import type { Location } from '../domain/catalogue.ts';
import { computeAvailability } from './availability-service.ts';
import { requireLocation } from './directory-service.ts';

/** What an availability read asks for, by the location's slug. */
export interface AvailabilityAsk {
  locationSlug: string;
  /** In booking order, already free of duplicates, lower case. */
  serviceIds: readonly string[];
  staffId?: string | undefined;
  fromDate: string;
  days: number;
}

export interface LocatedAvailability {
  location: Location;
  /** Shared with every caller served from the same entry: never modify it. */
  availability: Availability;
}

export interface Entry extends LocatedAvailability {
  /** The clock span over which the answer holds: [from, until). */
  from: number;
  until: number;
  /** Estimated bytes held (answerBytes), for the cache's size bound. */
  bytes: number;
}

/** The organisation's versions an answer was computed under (read before anything else). */
export interface Versions {
  catalogueVersion: number;
  bookingsVersion: number;
}

/** Bounds of the cache of one database handle: answers, and their estimated bytes over all answers. */
export const MAX_ENTRIES = 2_000;
export const MAX_BYTES = 8 * 2 ** 20;

/**
 * What an answer keeps in memory, estimated from its slots: an answer holds its slot objects and, once
 * the REST route has sent it, the body serialised from them (routes/availability.ts), about 170 bytes
 * per slot together; besides, its location, services and closed days, its key and the body's frame,
 * about 2.5 KiB (measured in heap snapshots of the mixed-load benchmark's server, 2026-11-26).
 */
export function answerBytes(availability: Availability): number {
  return 2_560 + 170 * availability.slots.length;
}

/**
 * The answers of one database handle. Only the organisation's newest versions are kept: an answer
 * computed under older ones is never asked for again (every read starts by reading the versions, and
 * they only go up), so when an organisation's bookings or catalogue change, its answers are dropped at
 * once instead of ageing out. The rest are bounded by count and by estimated bytes, oldest first out.
 */
export class AnswerCache {
  readonly #entries = new Map<string, Entry>();
  readonly #organisations = new Map<string, { versions: Versions; keys: Set<string> }>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(
    bounds: { maxEntries: number; maxBytes: number } = { maxEntries: MAX_ENTRIES, maxBytes: MAX_BYTES },
  ) {
    this.#maxEntries = bounds.maxEntries;
    this.#maxBytes = bounds.maxBytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): Entry | undefined {
    return this.#entries.get(key);
  }

  set(organisationId: string, versions: Versions, key: string, entry: Entry): void {
    let organisation = this.#organisations.get(organisationId);
    if (organisation && !sameVersions(organisation.versions, versions)) {
      // Computed under versions already superseded here: nobody will ask for it again.
      if (olderVersions(versions, organisation.versions)) return;
      for (const superseded of organisation.keys) this.#drop(superseded);
      this.#organisations.delete(organisationId);
      organisation = undefined;
    }
    if (entry.bytes > this.#maxBytes) return;
    if (!organisation) {
      organisation = { versions, keys: new Set() };
      this.#organisations.set(organisationId, organisation);
    }
    this.#drop(key);
    // Oldest first out.
    for (const [oldest] of this.#entries) {
      if (this.#entries.size < this.#maxEntries && this.#bytes + entry.bytes <= this.#maxBytes) break;
      this.#drop(oldest);
    }
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    organisation.keys.add(key);
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    const organisationId = entry.location.organisationId;
    const organisation = this.#organisations.get(organisationId);
    organisation?.keys.delete(key);
    if (organisation?.keys.size === 0) this.#organisations.delete(organisationId);
  }
}

function sameVersions(a: Versions, b: Versions): boolean {
  return a.catalogueVersion === b.catalogueVersion && a.bookingsVersion === b.bookingsVersion;
}

/** True when `a` is behind `b` (neither counter ahead, one behind). */
function olderVersions(a: Versions, b: Versions): boolean {
  return a.catalogueVersion <= b.catalogueVersion && a.bookingsVersion <= b.bookingsVersion;
}

const caches = new WeakMap<Db, AnswerCache>();

/** How many answers the cache of a database handle holds, and their estimated bytes (for tests). */
export function cachedAnswers(db: Db): { count: number; bytes: number } {
  const cache = caches.get(db);
  return { count: cache?.size ?? 0, bytes: cache?.bytes ?? 0 };
}

/**
 * Availability by location slug, reusing an answer while nothing it depends on has changed.
 *
 * An answer depends on the catalogue, the organisation's bookings and the clock. The first two are
 * the organisation's catalogue_version and bookings_version, which database triggers bump inside the
 * writing transaction (whichever process or instance writes) and which are read here before
 * anything else: the data read after them is at least as new as they say, so an answer is never kept
 * under a version older than what it saw, and a write committed before this read always misses. The
 * clock is the span slotsStableUntil computes (min notice reaching the first slot, the next local
 * midnight when max advance cuts the search short, the next hold to lapse); outside it the answer is
 * recomputed. Errors (an unknown slug or service) are never kept.
 *
 * `readFirst`: the versions as the caller read them before anything else it did, and nothing written
 * since by the caller itself (a REST request's authentication reads them with the key); they then
 * save a round trip. Versions read any earlier than that, or by a caller that has written since,
 * would key a fresh answer under an older version: never pass those.
 */
export async function availabilityAt(
  db: Db,
  organisationId: string,
  ask: AvailabilityAsk,
  now: number,
  readFirst?: AvailabilityVersions,
): Promise<LocatedAvailability> {
  const versions = readFirst ?? (await availabilityVersions(db, organisationId));
  if (!versions) return compute(db, organisationId, ask, now, undefined);
  const key = [
    organisationId,
    versions.catalogueVersion,
    versions.bookingsVersion,
    ask.locationSlug,
    ask.serviceIds.join(','),
    ask.staffId ?? '',
    ask.fromDate,
    ask.days,
  ].join('|');
  let cache = caches.get(db);
  if (!cache) {
    cache = new AnswerCache();
    caches.set(db, cache);
  }
  const hit = cache.get(key);
  if (hit && hit.from <= now && now < hit.until) return hit;
  // A miss reads the bookings afresh; the catalogue's part may be reused (readCatalogue, same version).
  const entry = await compute(db, organisationId, ask, now, versions.catalogueVersion);
  if (entry.until > now) cache.set(organisationId, versions, key, entry);
  return entry;
}

async function compute(
  db: Db,
  organisationId: string,
  ask: AvailabilityAsk,
  now: number,
  catalogueVersion: number | undefined,
): Promise<Entry> {
  const location = await requireLocation(db, organisationId, ask.locationSlug, 'slug', catalogueVersion);
  const { availability, stableUntil } = await computeAvailability(
    db,
    organisationId,
    {
      location,
      serviceIds: [...ask.serviceIds],
      staffId: ask.staffId,
      fromDate: ask.fromDate,
      days: ask.days,
    },
    now,
    catalogueVersion,
  );
  return { location, availability, from: now, until: stableUntil, bytes: answerBytes(availability) };
}

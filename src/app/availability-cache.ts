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

interface Entry extends LocatedAvailability {
  /** The clock span over which the answer holds: [from, until). */
  from: number;
  until: number;
  /** Slots held, for the cache's size bound. */
  size: number;
}

/** Bounds of the cache of one database handle: answers, and slots over all answers. */
const MAX_ENTRIES = 2_000;
const MAX_SLOTS = 100_000;

class AnswerCache {
  readonly #entries = new Map<string, Entry>();
  #slots = 0;

  get(key: string): Entry | undefined {
    return this.#entries.get(key);
  }

  set(key: string, entry: Entry): void {
    this.delete(key);
    // Oldest first out: entries of superseded versions are never asked for again and age out.
    for (const [oldest] of this.#entries) {
      if (this.#entries.size < MAX_ENTRIES && this.#slots + entry.size <= MAX_SLOTS) break;
      this.delete(oldest);
    }
    this.#entries.set(key, entry);
    this.#slots += entry.size;
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#slots -= entry.size;
  }
}

const caches = new WeakMap<Db, AnswerCache>();

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
  if (entry.until > now) cache.set(key, entry);
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
  return { location, availability, from: now, until: stableUntil, size: availability.slots.length + 1 };
}

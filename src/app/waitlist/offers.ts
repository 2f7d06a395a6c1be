import type { Db } from '../../data/database.ts';
import { expireHoldsByLocation } from '../../data/hold-expiry.ts';
import { findLocationById } from '../../data/location-repository.ts';
import { findOrganisationById } from '../../data/organisation-repository.ts';
import {
  anyRescanAsked,
  endWaitlistEntry,
  findWaitlistEntry,
  insertWaitlistOffer,
  offersAt,
  offersOfEntry,
  requestWaitlistRescan,
  takeRescans,
  type WaitlistEntryRow,
  waitingEntriesAt,
} from '../../data/waitlist-repository.ts';
import { bookingsAt, takeTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import type { Slot } from '../../domain/availability/types.ts';
import type { Location } from '../../domain/catalogue.ts';
import { isAppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import {
  datesToSearch,
  isPastLastDate,
  type LocalStart,
  localStartOf,
  startSuits,
  type WaitlistWants,
} from '../../domain/waitlist.ts';
import { getAvailability } from '../availability-service.ts';
import { logBookingEvent } from '../booking-event-log.ts';
import { type Caller, createBooking } from '../booking-service.ts';
import { withCheckoutsOpenedFirst } from '../checkouts-opened-first.ts';
import type { PaymentProvider } from '../payments.ts';
import { startPeriodicWork } from '../periodic-work.ts';
import { canBeMessaged } from '../reachable-contacts.ts';
import { textedCountriesOf } from '../texted-countries.ts';
import { wantsOfRow } from './entry-view.ts';
import { publishWaitlistEvent } from './offer-outcomes.ts';

/**
 * The waitlist worker (design.md 9.4): when time may have freed at a location (a rescan, asked in the
 * transaction of the change: rescans.ts), its waiting entries are taken in joining order, and each
 * that holds no offer now is offered the first free time that suits it and that it has not let go
 * before. An offer is a booking made through the normal path (the slot re-checked under the
 * location's turn, the database's overlap guard last), a pending_confirmation hold whose first step is
 * the customer's claim, held for the location's waitlist_offer_minutes: nobody else can book it
 * meanwhile, on any face. When the hold lapses (expired here, at once) or is declined, the time frees
 * again and goes to the next entry.
 */

export interface WaitlistWorkerDeps {
  db: Db;
  clock: { nowMs(): number };
  payments: PaymentProvider | null;
  /** Where customers reach this server: a deposit's checkout returns there. */
  publicBaseUrl: string;
}

/** How many locations one pass looks at, at most. */
const RESCANS_PER_PASS = 20;

/** The days availability is asked for at once (its limit). */
const DAYS_PER_SEARCH = 14;

/** A rescan taken but not carried out: a location to look at again. */
interface OwedRescan {
  organisation_id: string;
  location_id: string;
}

/** How long after a failed rescan it is asked again (a database outage, a location that fails it). */
const RESCAN_RETRY_MS = 5_000;

/**
 * The rescans this process took (deleted) whose offering failed (the database went away, the location
 * threw), by database: asked again at a pass RESCAN_RETRY_MS later, once the database takes the write.
 * Without this a freed time was offered to nobody until some other change at the location asked again.
 */
const owedRescans = new WeakMap<Db, { rescans: OwedRescan[]; notBefore: number }>();

/** One pass: lapsed offers expired (freeing their time), then the rescans asked, offered. */
export async function offerFreedTimes(deps: WaitlistWorkerDeps): Promise<number> {
  const now = deps.clock.nowMs();
  await askOwedRescansAgain(deps.db, now);
  await endPastEntries(deps.db, now);
  await rescanOnNewDates(deps.db, now);
  await expireLapsedOffers(deps.db, now);
  if (!(await anyRescanAsked(deps.db))) return 0;
  const rescans = await writeTransaction(deps.db, (trx) => takeRescans(trx, RESCANS_PER_PASS));
  let offered = 0;
  const failed: OwedRescan[] = [];
  let firstError: unknown = null;
  // One location that fails does not keep the others' freed times from their waiting entries.
  for (const rescan of rescans) {
    try {
      offered += await offerAt(deps, rescan.organisation_id, rescan.location_id, now);
    } catch (error) {
      failed.push({ organisation_id: rescan.organisation_id, location_id: rescan.location_id });
      firstError ??= error;
    }
  }
  if (failed.length > 0) {
    const owed = owedRescans.get(deps.db)?.rescans ?? [];
    owedRescans.set(deps.db, { rescans: [...owed, ...failed], notBefore: now + RESCAN_RETRY_MS });
    throw firstError;
  }
  return offered;
}

/** Asks again the rescans a failed pass owes, once their wait is over (they stay owed if it fails). */
async function askOwedRescansAgain(db: Db, now: number): Promise<void> {
  const owed = owedRescans.get(db);
  if (!owed || now < owed.notBefore) return;
  await writeTransaction(db, async (trx) => {
    for (const rescan of owed.rescans) {
      await requestWaitlistRescan(trx, rescan.organisation_id, rescan.location_id, now);
    }
  });
  // Only those just asked: another pass on this database may have owed more meanwhile.
  if (owedRescans.get(db) === owed) owedRescans.delete(db);
}

/** Runs offerFreedTimes every `intervalMs` until stopped; failures are reported, never fatal. */
export function startWaitlistWorker(
  deps: WaitlistWorkerDeps,
  onError: (error: unknown) => void,
  intervalMs = 250,
): () => Promise<void> {
  return startPeriodicWork(() => offerFreedTimes(deps), onError, intervalMs);
}

/**
 * Entries past their last date end (status ended). A location's date is never more than a day ahead
 * of UTC's, so only entries whose last date is UTC's today or earlier are read, then judged in their
 * location's zone.
 */
async function endPastEntries(db: Db, now: number): Promise<void> {
  const candidates = await db
    .selectFrom('waitlist_entries as e')
    .innerJoin('locations as l', (join) =>
      join.onRef('l.organisation_id', '=', 'e.organisation_id').onRef('l.id', '=', 'e.location_id'),
    )
    .select(['e.id', 'e.organisation_id', 'e.to_date', 'l.timezone'])
    .where('e.status', '=', 'waiting')
    .where('e.to_date', '<=', new Date(now).toISOString().slice(0, 10))
    .execute();
  const past = candidates.filter((entry) => entry.to_date < localDateAt(now, entry.timezone));
  if (past.length === 0) return;
  await writeTransaction(db, async (trx) => {
    for (const entry of past) {
      await endWaitlistEntry(trx, entry.organisation_id, entry.id, { status: 'ended' }, now);
    }
  });
}

/** The local date each location where anyone waits was last rescanned on by this process, by database. */
const rescannedOn = new WeakMap<Db, Map<string, string>>();

/**
 * Each local midnight brings another date within max_advance_days: its free times can be offered,
 * though no change freed them (an entry may wait for dates further ahead than bookings are taken). A
 * location where anyone waits is rescanned on each new local date there (and at this process's first
 * pass); a read otherwise, so an idle worker writes nothing.
 */
async function rescanOnNewDates(db: Db, now: number): Promise<void> {
  const waiting = await db
    .selectFrom('waitlist_entries as e')
    .innerJoin('locations as l', (join) =>
      join.onRef('l.organisation_id', '=', 'e.organisation_id').onRef('l.id', '=', 'e.location_id'),
    )
    .select(['e.organisation_id', 'e.location_id', 'l.timezone'])
    .distinct()
    .where('e.status', '=', 'waiting')
    .execute();
  const seen = rescannedOn.get(db) ?? new Map<string, string>();
  rescannedOn.set(db, seen);
  const due = waiting
    .map((location) => ({ ...location, today: localDateAt(now, location.timezone) }))
    .filter((location) => seen.get(location.location_id) !== location.today);
  if (due.length === 0) return;
  await writeTransaction(db, async (trx) => {
    for (const location of due) {
      await requestWaitlistRescan(trx, location.organisation_id, location.location_id, now);
    }
  });
  for (const location of due) seen.set(location.location_id, location.today);
}

/**
 * Offers whose hold has lapsed are expired now rather than at the hold sweeper's next round: the next
 * entry should not wait for it. The expiry's event asks the rescan, and ends an entry from the public
 * page whose offer lapsed unanswered (offer-outcomes.ts: wherever the lapse is recorded).
 */
async function expireLapsedOffers(db: Db, now: number): Promise<void> {
  const lapsed = await db
    .selectFrom('waitlist_offers as o')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 'o.organisation_id').onRef('b.id', '=', 'o.booking_id'),
    )
    .select(['b.id', 'b.organisation_id', 'b.location_id', 'b.status'])
    .where('b.status', '=', 'pending_confirmation')
    .where('b.hold_expires_at', '<=', now)
    .execute();
  if (lapsed.length === 0) return;
  await expireHoldsByLocation(db, lapsed, now, 'system:waitlist', logBookingEvent);
}

/** Offers the location's free times to its waiting entries, first come first served; how many. */
async function offerAt(
  deps: WaitlistWorkerDeps,
  organisationId: string,
  locationId: string,
  now: number,
): Promise<number> {
  const { db } = deps;
  const [location, organisation] = await Promise.all([
    findLocationById(db, organisationId, locationId),
    findOrganisationById(db, organisationId),
  ]);
  if (!location?.active || !organisation) return 0;
  const today = localDateAt(now, location.timezone);
  const offers = await offersAt(db, organisationId, locationId);
  const holding = new Set(
    offers
      .filter((o) => o.status === 'pending_confirmation' && (o.hold_expires_at ?? 0) > now)
      .map((o) => o.entry_id),
  );
  // A time an entry let go is the span its hold had (where it was last, moved or not), whoever would do
  // it. It goes to the next entries: the entry is never offered a start overlapping it again, with any
  // staff member (a client who declined 11:15, or let it lapse, is not sent 11:30 a second later, and
  // again every hold's length after), only times clear of what it let go. With the same staff member,
  // clear with the buffers after both: a hold starting as the let-go time ends would leave it no room
  // for its own buffer, and so keep it from the next entry (who would be offered nothing while this
  // one got time after time).
  const letGo = new Map<string, LetGoTime[]>();
  for (const offer of offers) {
    const spans = letGo.get(offer.entry_id) ?? [];
    spans.push({
      staffId: offer.staff_id,
      startsAt: offer.starts_at,
      endsAt: offer.ends_at,
      blockedUntil: offer.blocked_until,
    });
    letGo.set(offer.entry_id, spans);
  }
  // An offer is made known by text or e-mail alone: an entry none can reach (a number the salon does
  // not text, and no e-mail) would hold the time for nobody while those after it wait.
  const waiting = await waitingEntriesAt(db, organisationId, locationId);
  const entries = await reachableEntries(db, organisation, waiting);
  const free = new FreeTimes(db, location, entries, today, now);
  const caller = {
    organisationId,
    currency: organisation.currency,
    referencePrefix: organisation.booking_reference_prefix,
    actor: 'system:waitlist',
    source: 'api' as const,
  };
  let offered = 0;
  for (const entry of entries) {
    const wants = wantsOfRow(entry);
    const spans = letGo.get(entry.id) ?? [];
    // Ended by endPastEntries at the start of the pass; one that passed since waits for the next.
    if (isPastLastDate(wants, today) || holding.has(entry.id)) continue;
    for (const slot of await free.suiting(entry, wants)) {
      if (spans.some((span) => keepsFrom(slot, span))) continue;
      if (await offerSlot(deps, caller, location, entry, slot, now)) {
        offered += 1;
        holding.add(entry.id);
        free.forget();
        break;
      }
    }
  }
  return offered;
}

/** A time an entry's offer held and the entry let go (declined, lapsed), as its booking last stood. */
interface LetGoTime {
  staffId: string;
  startsAt: number;
  endsAt: number;
  /** endsAt plus the last service's buffer. */
  blockedUntil: number;
}

/**
 * Whether `slot` is no time to offer an entry that let `letGo` go: it overlaps it (with any staff
 * member, the same time again), or, with the same staff member, a hold of it would keep the let-go
 * time from being booked: their busy spans overlap, each with its buffer after (the entry's services,
 * so the let-go time's buffer is the slot's too).
 */
function keepsFrom(slot: Slot, letGo: LetGoTime): boolean {
  if (slot.staffId !== letGo.staffId) return slot.startsAt < letGo.endsAt && slot.endsAt > letGo.startsAt;
  const buffer = letGo.blockedUntil - letGo.endsAt;
  return slot.startsAt < letGo.blockedUntil && slot.endsAt + buffer > letGo.startsAt;
}

/**
 * The entries whose client a message can reach: an e-mail, or a phone the organisation texts. Joining
 * refuses any other (entries.ts); an entry whose phone's country the organisation has stopped texting
 * since waits here unoffered.
 */
async function reachableEntries(
  db: Db,
  organisation: { id: string; catalogue_version: number },
  entries: WaitlistEntryRow[],
): Promise<WaitlistEntryRow[]> {
  if (entries.length === 0) return entries;
  const [clients, texted] = await Promise.all([
    db
      .selectFrom('clients')
      .select(['id', 'phone', 'email'])
      .where('organisation_id', '=', organisation.id)
      .where('id', 'in', [...new Set(entries.map((e) => e.client_id))])
      .execute(),
    textedCountriesOf(db, organisation.id, organisation.catalogue_version),
  ]);
  const reached = new Set(clients.filter((c) => canBeMessaged(c, texted)).map((c) => c.id));
  return entries.filter((entry) => reached.has(entry.client_id));
}

/**
 * Offers `slot` to `entry` as a hold for its claim, through the normal booking path; false when it
 * could not be (the entry holds an offer or ended meanwhile, the time was taken, the services are not
 * bookable online any more).
 */
async function offerSlot(
  deps: WaitlistWorkerDeps,
  caller: Caller,
  location: Location,
  entry: WaitlistEntryRow,
  slot: Slot,
  now: number,
): Promise<boolean> {
  const { db } = deps;
  const { organisationId } = caller;
  return withCheckoutsOpenedFirst(deps.payments, (opener) =>
    writeTransaction(db, async (trx) => {
      // Another instance's worker may have offered this entry a time since the pass read it: under
      // the location's turn (the one its booking takes too), it is asked again.
      await takeTurn(trx, bookingsAt(location.id));
      if (!(await waitsWithoutOffer(trx, organisationId, entry.id, now))) return false;
      const { booking } = await createBooking(
        trx,
        caller,
        {
          locationSlug: location.slug,
          serviceIds: JSON.parse(entry.service_ids) as string[],
          staffId: slot.staffId,
          clientId: entry.client_id,
          startsAt: slot.startsAt,
        },
        now,
        {
          payments: deps.payments,
          opener,
          publicBaseUrl: deps.publicBaseUrl,
          hostedFlow: true,
          waitlistOffer: true,
        },
      );
      opener?.endOfWork();
      await insertWaitlistOffer(trx, {
        organisation_id: organisationId,
        booking_id: booking.id,
        entry_id: entry.id,
        staff_id: slot.staffId,
        starts_at: slot.startsAt,
        created_at: now,
      });
      await publishWaitlistEvent(trx, 'waitlist.offered', organisationId, entry.id, booking.id, now);
      return true;
    }),
  ).catch((error: unknown) => {
    // Taken meanwhile, or not bookable online any more (no payment provider for a deposit): the
    // next time that suits, or the next entry. A provider that could not be reached (Stripe, for
    // the deposit's checkout) fails the location's pass instead: its rescan is owed and asked
    // again (offerFreedTimes), not spent on an offer nobody got.
    if (isAppError(error) && !(deps.payments && error.code === 'payments_unavailable')) return false;
    throw error;
  });
}

/**
 * The free times of one pass, by what is asked (services and staff), each read once for the dates of
 * every entry that asks it (availability answers 14 days at a time): five hundred entries for the same
 * Cut read a few answers, not five hundred. Forgotten once an offer is made (its hold is busy now).
 */
class FreeTimes {
  readonly #answers = new Map<string, Promise<LocalSlot[] | null>>();
  readonly #db: Db;
  readonly #location: Location;
  readonly #from: Map<string, string>;
  readonly #until: Map<string, string>;
  readonly #today: string;
  readonly #now: number;

  constructor(db: Db, location: Location, entries: readonly WaitlistEntryRow[], today: string, now: number) {
    this.#db = db;
    this.#location = location;
    this.#today = today;
    this.#now = now;
    this.#from = new Map();
    this.#until = new Map();
    for (const entry of entries) {
      const key = askOf(entry);
      const from = entry.from_date > today ? entry.from_date : today;
      if (from < (this.#from.get(key) ?? '9999')) this.#from.set(key, from);
      if ((this.#until.get(key) ?? '') < entry.to_date) this.#until.set(key, entry.to_date);
    }
  }

  /** The free times that suit an entry, earliest first. */
  async suiting(entry: WaitlistEntryRow, wants: WaitlistWants): Promise<Slot[]> {
    if (!datesToSearch(wants, this.#today)) return [];
    const key = askOf(entry);
    let answer = this.#answers.get(key);
    if (!answer) {
      answer = this.#read(entry, this.#from.get(key) ?? this.#today, this.#until.get(key) ?? entry.to_date);
      this.#answers.set(key, answer);
    }
    const slots = (await answer) ?? [];
    return slots.filter((slot) => startSuits(wants, slot.local)).map((slot) => slot.slot);
  }

  forget(): void {
    this.#answers.clear();
  }

  async #read(entry: WaitlistEntryRow, firstDate: string, lastDate: string): Promise<LocalSlot[] | null> {
    const serviceIds = JSON.parse(entry.service_ids) as string[];
    const slots: LocalSlot[] = [];
    for (let from = firstDate; from <= lastDate; ) {
      const days = Math.min(DAYS_PER_SEARCH, daysBetween(from, lastDate) + 1);
      const availability = await getAvailability(
        this.#db,
        entry.organisation_id,
        {
          location: this.#location,
          serviceIds,
          staffId: entry.staff_id ?? undefined,
          // Held for its claim first: a time offered leaves that hold time before it starts.
          heldFor: { offer: true },
          fromDate: from,
          days,
        },
        this.#now,
      ).catch((error: unknown) => {
        // The services are not bookable online here any more: nothing to offer who asks them.
        if (isAppError(error)) return null;
        throw error;
      });
      if (!availability) return null;
      // Each start's local date and part of the day, worked out once for every entry that reads it.
      for (const slot of availability.slots) {
        slots.push({ slot, local: localStartOf(slot.startsAt, this.#location.timezone) });
      }
      from = addDays(from, days);
    }
    return slots;
  }
}

interface LocalSlot {
  slot: Slot;
  local: LocalStart;
}

/** What an entry asks availability for: its services and its staff member (or anyone). */
function askOf(entry: WaitlistEntryRow): string {
  return `${entry.service_ids}|${entry.staff_id ?? ''}`;
}

/** Whether the entry still waits and holds no offer now. */
async function waitsWithoutOffer(trx: Db, organisationId: string, entryId: string, now: number) {
  const entry = await findWaitlistEntry(trx, organisationId, entryId);
  if (entry?.status !== 'waiting') return false;
  const offers = await offersOfEntry(trx, organisationId, entryId);
  return !offers.some((o) => o.status === 'pending_confirmation' && (o.hold_expires_at ?? 0) > now);
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

import type { z } from 'zod';
import { type Principal, requirePrincipal, requireScope } from '../app/api-key-service.ts';
import { availabilityAt } from '../app/availability-cache.ts';
import { listSeries } from '../app/booking-series.ts';
import {
  findLiveBookingAt,
  getBooking,
  getClientUsual,
  listUpcomingBookings,
} from '../app/booking-service.ts';
import { findClient, getClient, registerClient } from '../app/client-service.ts';
import { customerLinks } from '../app/customer-links.ts';
import type { AppDeps } from '../app/deps.ts';
import {
  listLocations,
  listServicesAt,
  listStaffWorkingAt,
  type PageRequest,
  requireBookedLocation,
} from '../app/directory-service.ts';
import { createBookingIdempotently } from '../app/idempotent-booking.ts';
import { describeLocation } from '../app/location-info-service.ts';
import { takeMessage } from '../app/message-service.ts';
import { countRequest, rateLimitRefusal } from '../app/request-budgets.ts';
import { sendLink } from '../app/send-link.ts';
import { cancelWithScope, rescheduleWithScope } from '../app/series-changes.ts';
import { textedCountriesOf } from '../app/texted-countries.ts';
import { entryOfferedBooking, getWaitlistEntry, joinWaitlist } from '../app/waitlist/entries.ts';
import { presentAvailability } from '../contract/availability.ts';
import {
  type BookingViewer,
  NewBookingBody,
  presentBooking,
  presentCancellation,
  presentReschedule,
} from '../contract/booking.ts';
import { NewClientBody, newClientOf, presentClient, presentUsual } from '../contract/client.ts';
import { presentLocation } from '../contract/location.ts';
import { presentLocationInfo } from '../contract/location-info.ts';
import { NewMessageBody, presentMessage } from '../contract/message.ts';
import { presentLinkSent } from '../contract/outbox.ts';
import { presentService } from '../contract/service.ts';
import { presentStaff } from '../contract/staff.ts';
import { describeIssues, paramOfIssue, type RefusedIssue } from '../contract/validation-wording.ts';
import { NewWaitlistEntryBody, presentWaitlistEntry, refusalNamingClient } from '../contract/waitlist.ts';
import type { ApiKeyScope } from '../domain/api-key.ts';
import type { Location as LocationRecord, Page } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxChannel } from '../domain/outbox.ts';
import { localDateAt } from '../domain/time-format.ts';
import type {
  Availability,
  AvailabilityRequest,
  Booking,
  BookingApi,
  Cancellation,
  CancelOptions,
  Client,
  CreatedBooking,
  LinkSent,
  Location,
  LocationInfo,
  Message,
  NewBooking,
  NewClient,
  NewMessage,
  NewWaitlistEntry,
  RescheduleChange,
  RescheduledBooking,
  Service,
  Staff,
  Usual,
  WaitlistEntry,
} from './booking-api.ts';
import { ReplayedRefusal } from './booking-api.ts';
import { isError } from './tool-kit.ts';

/** How a caller reaches this server, for links such as payment_url. */
export interface InProcessOptions {
  /**
   * null: nothing says where customers reach the server (`booking mcp` without PUBLIC_BASE_URL): no
   * link is given, and a booking the customer must finish through one is refused, saying why.
   */
  publicBaseUrl: string | null;
}

/**
 * The BookingApi of this process: the service layer, as the organisation of one API key, answering in
 * the REST representations. It adds what the REST routes add around the service layer: the key's
 * scope per operation, and one request against the key's rate limit and its organisation's budget per
 * tool call (a tool call is what a voice agent experiences as one request; `forToolCall` makes one
 * instance per call).
 */
export class InProcessBookingApi implements BookingApi {
  readonly #deps: AppDeps;
  readonly #principal: Principal;
  readonly #options: InProcessOptions;

  private constructor(deps: AppDeps, principal: Principal, options: InProcessOptions) {
    this.#deps = deps;
    this.#principal = principal;
    this.#options = options;
  }

  /**
   * The API for one tool call by `principal`, counted against its key's rate limit and its
   * organisation's budget: 429 rate_limited (with retryAfterSeconds) when either window is used up.
   */
  static async forToolCall(
    deps: AppDeps,
    principal: Principal,
    options: InProcessOptions,
  ): Promise<InProcessBookingApi> {
    const now = deps.clock.nowMs();
    // The same counters the REST API keeps for the key and its organisation: the faces share them.
    const decision = await countRequest(deps.rateLimitStore, principal, deps.limits, now);
    if (decision.refusedBy !== null) throw rateLimitRefusal(decision, now);
    return new InProcessBookingApi(deps, principal, options);
  }

  now(): number {
    return this.#deps.clock.nowMs();
  }

  listLocations(): Promise<Location[]> {
    return this.#once('locations', async () => {
      const locations = await allPages((page) => listLocations(this.#deps.db, this.#allowed('read'), page));
      return locations.map(presentLocation);
    });
  }

  bookingLocation(locationSlug: string): Promise<Location> {
    return this.#listedAt('location', locationSlug, async (_organisationId, location) =>
      presentLocation(location),
    );
  }

  listServices(locationSlug: string): Promise<Service[]> {
    return this.#listedAt('services', locationSlug, async (organisationId, location) => {
      const services = await allPages((page) =>
        listServicesAt(this.#deps.db, organisationId, location, page),
      );
      return services.map((s) => presentService(s, this.#principal.organisation.currency));
    });
  }

  listStaff(locationSlug: string): Promise<Staff[]> {
    return this.#listedAt('staff', locationSlug, async (organisationId, location) => {
      const staff = await allPages((page) =>
        listStaffWorkingAt(this.#deps.db, organisationId, location, page),
      );
      return staff.map(presentStaff);
    });
  }

  async availability(locationSlug: string, request: AvailabilityRequest): Promise<Availability> {
    const organisationId = this.#allowed('read');
    const { location, availability } = await availabilityAt(
      this.#deps.db,
      organisationId,
      {
        locationSlug,
        serviceIds: request.serviceIds,
        staffId: request.staffId,
        fromDate: request.date,
        days: request.days,
      },
      this.now(),
    );
    // A reused answer (availability-cache.ts) is the same object each time: presented once.
    let presented = presentedAnswers.get(availability);
    if (!presented) {
      presented = presentAvailability(location, availability);
      presentedAnswers.set(availability, presented);
    }
    return presented;
  }

  async findClient(contact: { phone?: string; email?: string }): Promise<Client | null> {
    try {
      return presentClient(await findClient(this.#deps.db, this.#allowed('read'), contact));
    } catch (error) {
      if (isError(error, 'not_found')) return null;
      throw error;
    }
  }

  async registerClient(client: NewClient): Promise<{ client: Client; created: boolean }> {
    const organisationId = this.#allowed('read_write');
    const body = parse(NewClientBody, client);
    const registered = await registerClient(this.#deps.db, organisationId, newClientOf(body), this.now());
    return { client: presentClient(registered.client), created: registered.created };
  }

  async messageChannels(): Promise<ReadonlySet<OutboxChannel>> {
    return this.#deps.messageProviders;
  }

  textedCountries(): Promise<ReadonlySet<string>> {
    const { catalogueVersion } = this.#principal.organisation;
    return textedCountriesOf(this.#deps.db, this.#allowed('read'), catalogueVersion);
  }

  async getClient(clientId: string): Promise<Client> {
    return presentClient(await getClient(this.#deps.db, this.#allowed('read'), clientId.toLowerCase()));
  }

  async upcomingBookings(clientId: string): Promise<Booking[]> {
    const now = this.now();
    const bookings = await listUpcomingBookings(this.#deps.db, this.#allowed('read'), clientId, now);
    const viewer = this.#viewer();
    return bookings.map((booking) => presentBooking(booking, now, viewer));
  }

  async clientUsual(clientId: string): Promise<Usual | null> {
    const usual = await getClientUsual(
      this.#deps.db,
      this.#allowed('read'),
      clientId.toLowerCase(),
      this.now(),
    );
    return usual && presentUsual(usual);
  }

  async liveBookingAt(
    clientId: string,
    locationSlug: string,
    startsAt: string,
  ): Promise<Booking | undefined> {
    const now = this.now();
    const booking = await findLiveBookingAt(
      this.#deps.db,
      this.#allowed('read'),
      { clientId: clientId.toLowerCase(), locationSlug, startsAt: Date.parse(startsAt) },
      now,
    );
    return booking && presentBooking(booking, now, this.#viewer());
  }

  async createBooking(
    booking: NewBooking,
    idempotencyKey: string,
  ): Promise<{ booking: CreatedBooking; replayed: boolean }> {
    this.#allowed('read_write');
    const outcome = await createBookingIdempotently(
      this.#deps,
      this.#principal,
      parse(NewBookingBody, booking),
      {
        idempotencyKey,
        publicBaseUrl: this.#options.publicBaseUrl,
        source: 'mcp',
        // A voice agent can send the caller the booking page: Booking Protection's hold is finished there.
        hostedFlow: true,
      },
    );
    // A replayed 4xx comes back as its stored envelope, exactly as REST would answer it: thrown with
    // the reason and details the envelope kept (a tool explains a conflict by them).
    const body = outcome.body as {
      data?: CreatedBooking;
      error?: ReturnType<AppError['envelope']>['error'];
    };
    if (body.error) {
      const { code, message, param, reason, details } = body.error;
      const Refusal = outcome.replayed ? ReplayedRefusal : AppError;
      throw new Refusal(code, message, param, reason === undefined ? details : { ...details, reason });
    }
    return { booking: body.data!, replayed: outcome.replayed === true };
  }

  async seriesBookings(seriesId: string): Promise<Booking[]> {
    const bookings = await listSeries(this.#deps.db, this.#allowed('read'), seriesId.toLowerCase());
    const now = this.now();
    return bookings.map((booking) => presentBooking(booking, now, this.#viewer()));
  }

  async getBooking(reference: string): Promise<Booking> {
    const booking = await getBooking(this.#deps.db, this.#allowed('read'), reference);
    return presentBooking(booking, this.now(), this.#viewer());
  }

  async rescheduleBooking(reference: string, change: RescheduleChange): Promise<RescheduledBooking> {
    const now = this.now();
    const dryRun = change.dry_run === true;
    const result = await rescheduleWithScope(
      this.#deps.db,
      this.#changer(),
      reference,
      { startsAt: Date.parse(change.starts_at), staffId: change.staff_id?.toLowerCase() },
      change.scope ?? 'one',
      now,
      dryRun,
    );
    return presentReschedule(result, now, this.#viewer(), dryRun);
  }

  async cancelBooking(reference: string, options: CancelOptions = {}): Promise<Cancellation> {
    const now = this.now();
    const dryRun = options.dryRun === true;
    const result = await cancelWithScope(
      this.#deps.db,
      this.#changer(),
      reference,
      options.reason,
      options.scope ?? 'one',
      now,
      dryRun,
    );
    return presentCancellation(result.booking, { ...result, dryRun, at: now });
  }

  async locationInfo(locationSlug: string): Promise<LocationInfo> {
    // It names the location's "today" and its closures from then: kept for that local date only (UTC's
    // date would keep New York's yesterday until 8 pm, and Chatham's after its own midnight).
    const { timezone } = await this.bookingLocation(locationSlug);
    return this.#listedAt(
      `info:${localDateAt(this.now(), timezone)}`,
      locationSlug,
      async (organisationId, location) =>
        presentLocationInfo(await describeLocation(this.#deps.db, organisationId, location, this.now())),
    );
  }

  async sendLink(reference: string): Promise<LinkSent> {
    const organisationId = this.#allowed('read_write');
    return presentLinkSent(
      await sendLink(
        this.#deps.db,
        { store: this.#deps.rateLimitStore },
        organisationId,
        reference,
        this.#deps.clock.nowMs(),
        this.#deps.messageProviders,
      ),
    );
  }

  async takeMessage(message: NewMessage): Promise<Message> {
    const organisationId = this.#allowed('read_write');
    const body = parse(NewMessageBody, message);
    const taken = await takeMessage(
      this.#deps.db,
      organisationId,
      {
        callerName: body.caller_name,
        phone: body.phone,
        message: body.message,
        reference: body.reference,
        locationSlug: body.location_slug,
      },
      this.now(),
    );
    return presentMessage(taken);
  }

  async joinWaitlist(entry: NewWaitlistEntry): Promise<WaitlistEntry> {
    const organisationId = this.#allowed('read_write');
    const body = parse(NewWaitlistEntryBody, entry);
    const joined = await joinWaitlist(
      this.#deps.db,
      organisationId,
      {
        locationSlug: body.location_slug,
        serviceIds: body.service_ids,
        staffId: body.staff_id,
        clientId: body.client_id,
        client: body.client && newClientOf(body.client),
        fromDate: body.from_date,
        toDate: body.to_date,
        times: body.times,
      },
      this.now(),
    ).catch(refusalNamingClient);
    return presentWaitlistEntry(joined);
  }

  async offeredEntry(booking: Pick<Booking, 'reference'>): Promise<WaitlistEntry | undefined> {
    const entry = await entryOfferedBooking(
      this.#deps.db,
      this.#allowed('read'),
      booking.reference,
      this.now(),
    );
    return entry && presentWaitlistEntry(entry);
  }

  async getWaitlistEntry(id: string): Promise<WaitlistEntry> {
    return presentWaitlistEntry(await getWaitlistEntry(this.#deps.db, this.#allowed('read'), id, this.now()));
  }

  /**
   * A catalogue listing, shared by every tool call of this process until the organisation's catalogue
   * changes: keyed by its catalogue_version, which database triggers bump on any catalogue change and
   * which the key's authentication (on every request or call) reads, as the REST listings' cache is. A
   * voice agent resolves names against these on nearly every call. Callers must not modify them.
   */
  #once<T>(key: string, load: () => Promise<T>): Promise<T> {
    this.#allowed('read');
    const { organisation } = this.#principal;
    const versioned = `${organisation.id}|${organisation.catalogueVersion}|${key}`;
    return listingCacheOf(this.#deps).getOrLoad(versioned, load);
  }

  /** A listing of one location (404 for an unknown slug), read once per tool call. */
  #listedAt<T>(
    listing: string,
    locationSlug: string,
    load: (organisationId: string, location: LocationRecord) => Promise<T>,
  ): Promise<T> {
    return this.#once(`${listing}:${locationSlug}`, async () => {
      const organisationId = this.#allowed('read');
      // Active or not: the tools name a location only from listLocations (active ones), or as the
      // location of a booking, which is still read and cancelled once its location closes for good.
      return load(organisationId, await requireBookedLocation(this.#deps.db, organisationId, locationSlug));
    });
  }

  /** The organisation id, once the key's scope is known to allow `needed` (else 403). */
  #allowed(needed: ApiKeyScope): string {
    requireScope(this.#principal, needed);
    return this.#principal.organisation.id;
  }

  /** The key's scope, and payment_url and booking_page_url as the customer reaches this server. */
  #viewer(): BookingViewer {
    return {
      scope: this.#principal.scope,
      links:
        this.#options.publicBaseUrl === null
          ? null
          : customerLinks(this.#deps.payments, this.#options.publicBaseUrl),
    };
  }

  #changer() {
    return {
      organisationId: this.#allowed('read_write'),
      actor: `mcp:${this.#principal.apiKeyId}`,
      payments: this.#deps.payments,
    };
  }
}

/**
 * The principal of a key given to `booking mcp` (BOOKING_API_KEY), resolved afresh for every tool call
 * so that a revoked key stops working at once; 401 as the REST API would answer.
 */
export async function principalOfKey(deps: AppDeps, key: string | undefined): Promise<Principal> {
  if (key === undefined || key === '') {
    throw new AppError(
      'missing_api_key',
      'Set BOOKING_API_KEY to an API key of the organisation.',
      'Authorization',
    );
  }
  return requirePrincipal(deps.db, key, deps.clock.nowMs());
}

/**
 * Availability answers as the tools read them, one per answer of the availability cache (whose
 * entries are shared and never modified): formatting every slot's times showed in profiles of
 * find_slots. The tools only read them.
 */
const presentedAnswers = new WeakMap<object, Availability>();

/** Bounds of the tools' listings kept per database handle: how many, and bytes of their JSON. */
export const LISTING_CACHE_SIZE = 1000;
export const LISTING_CACHE_BYTES = 8 * 2 ** 20;

/**
 * The listings the tools read (locations, a location's services and staff, its info), each loaded once
 * per key; concurrent calls share the load. Bounded by count and by the length of each listing's JSON,
 * measured once it has loaded (once per catalogue version and listing): when either bound is passed the
 * cache starts afresh with that listing, and a listing larger than the whole bound is not kept. A
 * failure (an unknown slug, a fault) is answered, never remembered.
 */
export class ListingCache {
  readonly #listings = new Map<string, { listing: Promise<unknown>; bytes: number }>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxEntries = LISTING_CACHE_SIZE, maxBytes = LISTING_CACHE_BYTES) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  get size(): number {
    return this.#listings.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  getOrLoad<T>(key: string, load: () => Promise<T>): Promise<T> {
    const kept = this.#listings.get(key);
    if (kept) return kept.listing as Promise<T>;
    const listing = load();
    if (this.#listings.size >= this.#maxEntries) this.#clear();
    const entry = { listing: listing as Promise<unknown>, bytes: 0 };
    this.#listings.set(key, entry);
    listing.then(
      (value) => {
        if (this.#listings.get(key) !== entry) return;
        const bytes = JSON.stringify(value)?.length ?? 0;
        if (bytes > this.#maxBytes) {
          this.#listings.delete(key);
          return;
        }
        if (this.#bytes + bytes > this.#maxBytes) {
          this.#clear();
          this.#listings.set(key, entry);
        }
        entry.bytes = bytes;
        this.#bytes += bytes;
      },
      () => {
        if (this.#listings.get(key) !== entry) return;
        this.#listings.delete(key);
        this.#bytes -= entry.bytes;
      },
    );
    return listing;
  }

  #clear(): void {
    this.#listings.clear();
    this.#bytes = 0;
  }
}

const listingCaches = new WeakMap<AppDeps['db'], ListingCache>();

function listingCacheOf(deps: AppDeps): ListingCache {
  let cache = listingCaches.get(deps.db);
  if (!cache) {
    cache = new ListingCache();
    listingCaches.set(deps.db, cache);
  }
  return cache;
}

const PAGE_SIZE = 100;

/** Every item of a keyset-paginated listing: voice tools need the whole (small) catalogue at once. */
async function allPages<T>(load: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let page: PageRequest = { after: null, limit: PAGE_SIZE };
  for (;;) {
    const result = await load(page);
    items.push(...result.items);
    if (!result.next) return items;
    page = { after: result.next, limit: PAGE_SIZE };
  }
}

/** A body the tools built, checked against the REST schema as REST would check it (400 naming the field). */
function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues as unknown as RefusedIssue[];
  const param = paramOfIssue(issues[0]!) ?? 'body';
  throw new AppError('invalid_request', describeIssues(issues, value), param);
}

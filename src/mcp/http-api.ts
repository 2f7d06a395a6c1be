import { createHash } from 'node:crypto';
import { isIdempotencyKey } from '../contract/common.ts';
import type { ApiKeyScope } from '../domain/api-key.ts';
import { AppError, ERROR_CATALOGUE, type ErrorCode } from '../domain/errors.ts';
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

export interface HttpBookingApiOptions {
  /** The API root including `/v1`, e.g. `https://salon.example/v1` (a trailing slash is optional). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` with every request. */
  apiKey: string;
  /** The fetch to use; the global one (Node 20) by default. */
  fetch?: typeof fetch;
  /** The current instant in epoch ms: `now()` and the catalogue cache's clock. Date.now by default. */
  now?: () => number;
  /** How long the catalogue listings are kept, in ms (default 60 000; 0 turns the cache off). */
  catalogueTtlMs?: number;
}

/** Every request gives up after this long (connecting, waiting and reading the body together). */
const REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_CATALOGUE_TTL_MS = 60_000;
/** Page size of the listing walks: the most the API allows. */
const PAGE_SIZE = 100;
/** A listing walk that needs more pages than this is a server fault (a cursor that never ends). */
const MAX_PAGES = 200;
/** What the server accepts as an Idempotency-Key. */
/** What may be sent in an Authorization header (the engine's keys are plain ASCII). */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * The BookingApi of a remote instance, reached over its REST API `/v1` (for `booking mcp --base-url`,
 * a desktop MCP host driving a hosted instance). Every operation is the matching REST request with the
 * key as `Authorization: Bearer`; the answer's `data` is returned as it is. Booking is POST /bookings,
 * or where Booking Protection applies POST /bookings/protected-holds (the hold MCP `book` makes in
 * process, which POST /bookings refuses with the contract's 409).
 *
 * Failures are AppErrors, as from the in-process implementation: the contract's error envelope becomes
 * an AppError with its code, message and param (`reason` of a conflict and, on 429, `retryAfterSeconds`
 * from Retry-After go in `details`). Anything else (a network failure, the 10-second timeout, an answer
 * that is not the envelope, a code this version does not know) is `server_error` with a short message
 * that never contains the key, the request's URL or anything the caller said. Nothing is ever logged:
 * the MCP stdio transport owns stdout, and keys and personal data must not leak.
 *
 * Caching: the three catalogue listings (locations, and the services and staff of each location) are
 * kept in memory for `catalogueTtlMs` (default one minute, measured by `now`), because every tool call
 * of a voice agent resolves spoken names against them and every REST request counts against the key's
 * rate limit. A catalogue change on the server therefore shows here within that time. Concurrent calls
 * share one request; failures are not kept. Bookings, clients and availability are never cached.
 */
export class HttpBookingApi implements BookingApi {
  /** The API root without a trailing slash, e.g. `https://salon.example/v1`. */
  readonly #root: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #catalogue = new Map<string, { storedAt: number; items: Promise<unknown[]> }>();
  #scope: ApiKeyScope | undefined;

  /** Throws a TypeError for a base URL that is not http(s), or plain http to anything but loopback. */
  constructor(options: HttpBookingApiOptions) {
    this.#root = apiRoot(options.baseUrl);
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#now = options.now ?? Date.now;
    this.#ttlMs = Math.max(0, options.catalogueTtlMs ?? DEFAULT_CATALOGUE_TTL_MS);
  }

  now(): number {
    return this.#now();
  }

  /**
   * The key's scope as the instance treats it, for tools/list (a read key is shown only the tools it
   * can use): the REST API names no scope, but its webhook endpoints are read with read_write keys only,
   * so GET /webhook-endpoints answers 200 to read_write and 403 insufficient_scope to read. Undefined
   * when the answer says neither (a bad key, the service unreachable): every tool is listed, and each
   * call then says what is wrong. A scope once learnt is kept (a key's scope never changes).
   */
  async scope(): Promise<ApiKeyScope | undefined> {
    if (this.#scope !== undefined) return this.#scope;
    try {
      await this.#send('GET', ['webhook-endpoints'], { query: { limit: '1' } });
      this.#scope = 'read_write';
    } catch (error) {
      if (isError(error, 'insufficient_scope')) this.#scope = 'read';
    }
    return this.#scope;
  }

  listLocations(): Promise<Location[]> {
    return this.#cachedListing<Location>('locations', ['locations']);
  }

  /** Over REST only active locations are listed: one made inactive since is not found. */
  async bookingLocation(locationSlug: string): Promise<Location> {
    const location = (await this.listLocations()).find((l) => l.slug === locationSlug);
    if (!location) throw new AppError('not_found', `No location has the slug "${locationSlug}".`, 'slug');
    return location;
  }

  async listServices(locationSlug: string): Promise<Service[]> {
    const slug = slugSegment(locationSlug);
    const services = await this.#cachedListing<Service>(`services\u0000${locationSlug}`, [
      'locations',
      slug,
      'services',
    ]);
    return services.map(withAliases);
  }

  async listStaff(locationSlug: string): Promise<Staff[]> {
    const slug = slugSegment(locationSlug);
    const staff = await this.#cachedListing<Staff>(`staff\u0000${locationSlug}`, [
      'locations',
      slug,
      'staff',
    ]);
    return staff.map(withAliases);
  }

  async availability(locationSlug: string, request: AvailabilityRequest): Promise<Availability> {
    const query: Record<string, string> = {
      service_ids: request.serviceIds.join(','),
      date: request.date,
      days: String(request.days),
    };
    if (request.staffId !== undefined) query.staff_id = request.staffId;
    const answer = await this.#send('GET', ['locations', slugSegment(locationSlug), 'availability'], {
      query,
    });
    return objectData<Availability>(answer.data);
  }

  async findClient(contact: { phone?: string; email?: string }): Promise<Client | null> {
    const query: Record<string, string> = {};
    if (contact.phone !== undefined) query.phone = contact.phone;
    if (contact.email !== undefined) query.email = contact.email;
    try {
      return objectData<Client>((await this.#send('GET', ['clients'], { query })).data);
    } catch (error) {
      if (isError(error, 'not_found')) return null;
      throw error;
    }
  }

  async registerClient(client: NewClient): Promise<{ client: Client; created: boolean }> {
    const answer = await this.#send('POST', ['clients'], { body: client });
    return { client: objectData<Client>(answer.data), created: answer.status === 201 };
  }

  async textedCountries(): Promise<null> {
    return null;
  }

  async messageChannels(): Promise<null> {
    return null;
  }

  async getClient(clientId: string): Promise<Client> {
    const id = segment(clientId, () => new AppError('not_found', 'No client has this id.', 'client_id'));
    return objectData<Client>((await this.#send('GET', ['clients', id])).data);
  }

  async upcomingBookings(clientId: string): Promise<Booking[]> {
    const id = segment(clientId, () => new AppError('not_found', 'No client has this id.', 'client_id'));
    return arrayData<Booking>((await this.#send('GET', ['clients', id, 'bookings'])).data);
  }

  async clientUsual(clientId: string): Promise<Usual | null> {
    const id = segment(clientId, () => new AppError('not_found', 'No client has this id.', 'client_id'));
    return ((await this.#send('GET', ['clients', id, 'usual'])).data as Usual | null) ?? null;
  }

  /** From the upcoming bookings: REST has no lookup by start. */
  async liveBookingAt(
    clientId: string,
    locationSlug: string,
    startsAt: string,
  ): Promise<Booking | undefined> {
    const instant = Date.parse(startsAt);
    return (await this.upcomingBookings(clientId)).find(
      (b) => b.location_slug === locationSlug && Date.parse(b.starts_at) === instant,
    );
  }

  async createBooking(
    booking: NewBooking,
    idempotencyKey: string,
  ): Promise<{ booking: CreatedBooking; replayed: boolean }> {
    if (!isIdempotencyKey(idempotencyKey)) {
      throw new AppError(
        'invalid_request',
        'Idempotency-Key must be 1 to 255 printable ASCII characters, not beginning or ending with a space.',
        'Idempotency-Key',
      );
    }
    // Where Booking Protection applies, POST /bookings keeps the contract's 409: the hold MCP book makes
    // in process is POST /bookings/protected-holds. The location's policy comes from the catalogue
    // listing (cached, and already read to resolve the location); a listing up to catalogueTtlMs old may
    // be wrong, and then the server's refusal says so and the other endpoint is asked.
    const first: BookingEndpoint = (await this.#protectionApplies(booking.location_slug))
      ? 'protected-holds'
      : 'bookings';
    try {
      return await this.#book(first, booking, idempotencyKey);
    } catch (error) {
      // An instance from before the endpoint answers 405 (the path is GET/PATCH /bookings/{reference}
      // there) and stores nothing: POST /bookings with the key, which answers as it always did.
      if (first === 'protected-holds' && isError(error, 'method_not_allowed')) {
        return this.#book('bookings', booking, idempotencyKey);
      }
      if (!askedTheWrongEndpoint(first, error)) throw error;
      // The refusal is stored under the key, and the server keeps keys apart per endpoint: the other
      // one gets a key of its own, made from this one, so a retry meets the same answers again.
      const other: BookingEndpoint = first === 'bookings' ? 'protected-holds' : 'bookings';
      try {
        return await this.#book(other, booking, switchedKey(idempotencyKey));
      } catch (retried) {
        if (other === 'protected-holds' && isError(retried, 'method_not_allowed')) throw error;
        throw retried;
      }
    }
  }

  /** Whether the listing says Booking Protection applies at the location (false when it is not listed). */
  async #protectionApplies(locationSlug: string): Promise<boolean> {
    const location = (await this.listLocations()).find((l) => l.slug === locationSlug);
    return location?.booking_protection_policy?.applies === true;
  }

  /** POST /bookings or /bookings/protected-holds with the Idempotency-Key. */
  async #book(
    endpoint: BookingEndpoint,
    booking: NewBooking,
    idempotencyKey: string,
  ): Promise<{ booking: CreatedBooking; replayed: boolean }> {
    const path = endpoint === 'bookings' ? ['bookings'] : ['bookings', 'protected-holds'];
    const answer = await this.#send('POST', path, {
      body: booking,
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    return { booking: objectData<CreatedBooking>(answer.data), replayed: answer.replayed };
  }

  async getBooking(reference: string): Promise<Booking> {
    return objectData<Booking>((await this.#send('GET', ['bookings', referenceSegment(reference)])).data);
  }

  async rescheduleBooking(reference: string, change: RescheduleChange): Promise<RescheduledBooking> {
    const body = {
      starts_at: change.starts_at,
      ...(change.staff_id !== undefined && { staff_id: change.staff_id }),
      ...(change.dry_run === true && { dry_run: true }),
      ...(change.scope !== undefined && { scope: change.scope }),
    };
    const answer = await this.#send('PATCH', ['bookings', referenceSegment(reference)], { body });
    return objectData<RescheduledBooking>(answer.data);
  }

  async cancelBooking(reference: string, options: CancelOptions = {}): Promise<Cancellation> {
    const body = {
      ...(options.reason !== undefined && { reason: options.reason }),
      ...(options.dryRun === true && { dry_run: true }),
      ...(options.scope !== undefined && { scope: options.scope }),
    };
    const answer = await this.#send('POST', ['bookings', referenceSegment(reference), 'cancel'], { body });
    return objectData<Cancellation>(answer.data);
  }

  async seriesBookings(seriesId: string): Promise<Booking[]> {
    const answer = await this.#send('GET', ['bookings'], { query: { series_id: seriesId } });
    return arrayData<Booking>(answer.data);
  }

  async locationInfo(locationSlug: string): Promise<LocationInfo> {
    const answer = await this.#send('GET', ['locations', slugSegment(locationSlug), 'info']);
    return objectData<LocationInfo>(answer.data);
  }

  async takeMessage(message: NewMessage): Promise<Message> {
    return objectData<Message>((await this.#send('POST', ['messages'], { body: message })).data);
  }

  async joinWaitlist(entry: NewWaitlistEntry): Promise<WaitlistEntry> {
    return objectData<WaitlistEntry>((await this.#send('POST', ['waitlist'], { body: entry })).data);
  }

  /** REST has no lookup by offer: the entries waiting at the booking's location, page by page until found. */
  async offeredEntry(
    booking: Pick<Booking, 'reference' | 'location_slug'>,
  ): Promise<WaitlistEntry | undefined> {
    const filter = { location_slug: booking.location_slug, status: 'waiting' };
    for await (const page of this.#pages(['waitlist'], filter)) {
      const entry = (page as WaitlistEntry[]).find((e) => e.offer?.booking_reference === booking.reference);
      if (entry) return entry;
    }
    return undefined;
  }

  async getWaitlistEntry(id: string): Promise<WaitlistEntry> {
    const entryId = segment(id, () => new AppError('not_found', 'No waitlist entry has this id.', 'id'));
    return objectData<WaitlistEntry>((await this.#send('GET', ['waitlist', entryId])).data);
  }

  async sendLink(reference: string): Promise<LinkSent> {
    return objectData<LinkSent>((await this.#send('POST', ['bookings', reference, 'send-link'])).data);
  }

  /**
   * A catalogue listing from the cache while it is fresh, else every page of it from the server.
   * Callers get their own copy, so what one tool call does with it cannot change the next one's.
   */
  async #cachedListing<T>(cacheKey: string, path: string[]): Promise<T[]> {
    const now = this.#now();
    const cached = this.#catalogue.get(cacheKey);
    if (cached && now >= cached.storedAt && now - cached.storedAt < this.#ttlMs) {
      return structuredClone(await cached.items) as T[];
    }
    const entry = { storedAt: now, items: this.#allPages(path) };
    this.#catalogue.set(cacheKey, entry);
    // A failure is not kept: the next call asks again.
    entry.items.catch(() => {
      if (this.#catalogue.get(cacheKey) === entry) this.#catalogue.delete(cacheKey);
    });
    return structuredClone(await entry.items) as T[];
  }

  /** Every item of a paginated listing, following next_cursor page by page. */
  async #allPages(path: string[]): Promise<unknown[]> {
    const items: unknown[] = [];
    for await (const page of this.#pages(path)) items.push(...page);
    return items;
  }

  /** The pages of a listing (with these query parameters), one request each, as they are read. */
  async *#pages(path: string[], filter: Record<string, string> = {}): AsyncGenerator<unknown[]> {
    let cursor: string | undefined;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const query: Record<string, string> = { ...filter, limit: String(PAGE_SIZE) };
      if (cursor !== undefined) query.cursor = cursor;
      const answer = await this.#send('GET', path, { query });
      yield arrayData<unknown>(answer.data);
      const next = answer.nextCursor;
      if (next === undefined) return;
      if (next === cursor) break;
      cursor = next;
    }
    throw serverError('The booking service kept paging a listing without end.');
  }

  /** One request; the answer's status, `data` and `next_cursor` on 2xx, else the AppError it means. */
  async #send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string[],
    options: { query?: Record<string, string>; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; data: unknown; nextCursor: string | undefined; replayed: boolean }> {
    if (this.#apiKey === '') {
      throw new AppError('missing_api_key', 'No API key is set for the booking service.', 'Authorization');
    }
    if (!HEADER_SAFE.test(this.#apiKey)) {
      throw new AppError('invalid_api_key', 'The API key is malformed.', 'Authorization');
    }
    const query = new URLSearchParams(options.query).toString();
    const url = `${this.#root}/${path.join('/')}${query === '' ? '' : `?${query}`}`;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: 'application/json',
      ...options.headers,
    };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';

    const fetchOnce = this.#fetch;
    let response: Response;
    let text: string;
    try {
      response = await fetchOnce(url, {
        method,
        headers,
        ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      // The error's own text may name the URL (with a phone or e-mail in its query): never passed on.
      throw serverError(
        isTimeout(error)
          ? `The booking service did not answer within ${REQUEST_TIMEOUT_MS / 1000} seconds.`
          : 'The booking service could not be reached.',
      );
    }

    const body = parseJson(text);
    if (response.status >= 200 && response.status < 300) {
      if (!isRecord(body) || !('data' in body)) {
        throw serverError(`The booking service answered HTTP ${response.status} without data.`);
      }
      const next = body.next_cursor;
      return {
        status: response.status,
        data: body.data,
        nextCursor: typeof next === 'string' && next !== '' ? next : undefined,
        replayed: response.headers.get('idempotent-replayed') === 'true',
      };
    }
    throw errorOf(response, body);
  }
}

/** The two REST endpoints that make a booking: POST /bookings and POST /bookings/protected-holds. */
type BookingEndpoint = 'bookings' | 'protected-holds';

/**
 * The server's word that the location's Booking Protection is not what the listing said: 409
 * booking_protection_required from POST /bookings, or from POST /bookings/protected-holds the 409
 * conflict naming location_slug without a reason (a slot's conflicts carry their reason).
 */
function askedTheWrongEndpoint(endpoint: BookingEndpoint, error: unknown): boolean {
  if (endpoint === 'bookings') return isError(error, 'booking_protection_required');
  return isError(error, 'conflict') && error.param === 'location_slug' && error.reason === undefined;
}

/** The Idempotency-Key for the other endpoint: fixed for a given key, within the 255 characters allowed. */
function switchedKey(idempotencyKey: string): string {
  return `switched-${createHash('sha256').update(idempotencyKey).digest('hex')}`;
}

/** The AppError a non-2xx answer stands for. */
function errorOf(response: Response, body: unknown): AppError {
  const status = response.status;
  if (status >= 300 && status < 400) {
    return serverError(`The booking service answered with a redirect (HTTP ${status}); check its base URL.`);
  }
  const error = isRecord(body) ? body.error : undefined;
  if (!isRecord(error) || typeof error.code !== 'string' || typeof error.message !== 'string') {
    return serverError(`The booking service answered HTTP ${status} without an error it explains.`);
  }
  if (!Object.hasOwn(ERROR_CATALOGUE, error.code)) {
    const code = /^[a-z][a-z0-9_]{0,63}$/.test(error.code) ? ` "${error.code}"` : '';
    return serverError(
      `The booking service answered with an error${code} this version does not know (HTTP ${status}).`,
    );
  }
  const code = error.code as ErrorCode;
  const details: Record<string, unknown> = isRecord(error.details) ? { ...error.details } : {};
  if (typeof error.reason === 'string') details.reason = error.reason;
  if (status === 429 || code === 'rate_limited') {
    details.retryAfterSeconds = retryAfterSeconds(response.headers.get('retry-after'));
  }
  const param = typeof error.param === 'string' ? error.param : undefined;
  // Only the booking-creating endpoints replay a stored answer (and say so).
  const Refusal = response.headers.get('idempotent-replayed') === 'true' ? ReplayedRefusal : AppError;
  return new Refusal(code, error.message, param, Object.keys(details).length > 0 ? details : undefined);
}

/** Retry-After in whole seconds, at least 1 (1 when missing or not a number of seconds). */
function retryAfterSeconds(header: string | null): number {
  const trimmed = header?.trim() ?? '';
  if (!/^\d+$/.test(trimmed)) return 1;
  return Math.max(1, Number(trimmed));
}

function serverError(message: string): AppError {
  return new AppError('server_error', message);
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectData<T>(data: unknown): T {
  if (!isRecord(data)) throw serverError('The booking service answered with data of the wrong shape.');
  return data as T;
}

function arrayData<T>(data: unknown): T[] {
  if (!Array.isArray(data)) throw serverError('The booking service answered with data of the wrong shape.');
  return data as T[];
}

/**
 * One path segment, URL-encoded. "", "." and ".." (which URLs resolve as directories, encoded or
 * not) name nothing, so they are refused without a request.
 */
function segment(value: string, refusal: () => AppError): string {
  if (value === '' || value === '.' || value === '..') throw refusal();
  return encodeURIComponent(value);
}

function slugSegment(slug: string): string {
  return segment(slug, () => new AppError('not_found', `No location has the slug "${slug}".`, 'slug'));
}

function referenceSegment(reference: string): string {
  return segment(reference, () => new AppError('not_found', 'No booking has this reference.', 'reference'));
}

/**
 * The API root as a URL without a trailing slash. The key travels in every request, so plain http
 * is accepted only to this machine (the server refuses it from anywhere else anyway).
 */
function apiRoot(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError('The base URL of the booking API is not a URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError('The base URL of the booking API must be an https:// URL.');
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    throw new TypeError('The base URL of the booking API must use https:// (http is for this machine only).');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new TypeError('The base URL of the booking API must not carry credentials, a query or a fragment.');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** `aliases` came in v1 later than the rest: an instance from before it lists none. */
function withAliases<T extends { aliases: string[] }>(item: T): T {
  return Array.isArray(item.aliases) ? item : { ...item, aliases: [] };
}

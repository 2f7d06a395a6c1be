import { DateTime, IANAZone } from 'luxon';
import { ZoneCalendar } from '../domain/availability/zone-calendar.ts';
import { LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import {
  applyLocationOverride,
  type BookingProtectionPolicy,
  type OfferedService,
} from '../domain/catalogue.ts';
import type {
  CatalogueBooking,
  CatalogueClient,
  CatalogueLocation,
  CatalogueMoney,
  CatalogueService,
  CatalogueStaff,
  Indexed,
  ParsedCatalogue,
} from './catalogue-schema.ts';

/**
 * The catalogue rules a per-field schema cannot express: references between entities, uniqueness
 * within the file, currencies, overlaps and local times that do not exist. They run on whatever
 * passed the shape check, so one file run reports as much as it can.
 */

/** One thing wrong with a catalogue file, located by a JSON path such as `$.services[1].price`. */
export interface CatalogueProblem {
  path: string;
  message: string;
}

export type PathSegment = string | number;
type Path = readonly PathSegment[];
type Report = (path: Path, message: string) => void;

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** JSONPath in the dotted form people read; keys that are not identifiers use bracket notation. */
export function formatPath(segments: Path): string {
  let path = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

const WALL_CLOCK = "yyyy-MM-dd'T'HH:mm:ss";

/**
 * The instant of a local date-time in a zone, or undefined when the wall-clock time does not exist
 * there (the clocks go forward over it). Luxon would silently shift such a time, so it is compared back.
 */
export function localInstant(local: string, zone: string): number | undefined {
  const inZone = DateTime.fromISO(local, { zone });
  const wall = DateTime.fromISO(local, { zone: 'utc' });
  if (!inZone.isValid || !wall.isValid || inZone.toFormat(WALL_CLOCK) !== wall.toFormat(WALL_CLOCK)) {
    return undefined;
  }
  return inZone.toMillis();
}

/**
 * The zone a staff member's time off is written in: that of the first location of their working hours
 * (a member working in several zones uses the first one), else the organisation's first location.
 */
export function staffTimeZone(
  staff: Pick<CatalogueStaff, 'working_hours'>,
  zoneByLocationRef: ReadonlyMap<string, string>,
  firstLocationZone: string | undefined,
): string | undefined {
  const firstRef = Object.keys(staff.working_hours)[0];
  return firstRef === undefined ? firstLocationZone : zoneByLocationRef.get(firstRef);
}

/** "HH:MM" (24:00 allowed) to minutes since local midnight. */
export function clockMinutes(time: string): number {
  const [hours, mins] = time.split(':').map(Number);
  return (hours ?? 0) * 60 + (mins ?? 0);
}

export function checkCatalogue(parsed: ParsedCatalogue): CatalogueProblem[] {
  const problems: CatalogueProblem[] = [];
  const report: Report = (path, message) => problems.push({ path: formatPath(path), message });
  for (const kind of ['locations', 'services', 'staff', 'clients'] as const) {
    for (const key of ['ref', 'id'] as const) checkRawUnique(parsed.raw[kind], kind, key, report);
  }
  checkRawUnique(parsed.raw.locations, 'locations', 'slug', report);

  const locationRefs = rawRefs(parsed.raw.locations);
  const serviceRefs = rawRefs(parsed.raw.services);
  const currency = parsed.organisation?.currency;
  for (const { index, value } of parsed.locations) checkLocation(value, ['locations', index], report);
  for (const { index, value } of parsed.services) {
    checkService(value, ['services', index], currency, locationRefs, report);
  }
  // Zones come from the raw file so that a location failing on another field still dates its staff's time off.
  const zones = rawZones(parsed.raw.locations);
  const zoneByRef = new Map(zones.flatMap((z) => (z.ref === undefined ? [] : [[z.ref, z.zone] as const])));
  const firstZone = zones.find((z) => z.index === 0)?.zone;
  for (const { index, value } of parsed.staff) {
    const zone = staffTimeZone(value, zoneByRef, firstZone);
    checkStaff(value, ['staff', index], { locationRefs, serviceRefs, zone }, report);
  }
  checkClients(parsed.clients, report);
  checkBookings(parsed, report);
  return problems;
}

function rawRefs(items: unknown): Set<string> {
  const refs = new Set<string>();
  if (!Array.isArray(items)) return refs;
  for (const item of items) {
    const ref = (item as { ref?: unknown } | null)?.ref;
    if (typeof ref === 'string') refs.add(ref);
  }
  return refs;
}

function rawZones(items: unknown): { index: number; ref: string | undefined; zone: string }[] {
  if (!Array.isArray(items)) return [];
  return items.flatMap((item, index) => {
    const { ref, timezone } = (item ?? {}) as { ref?: unknown; timezone?: unknown };
    if (typeof timezone !== 'string' || !IANAZone.isValidZone(timezone)) return [];
    return [{ index, ref: typeof ref === 'string' ? ref : undefined, zone: timezone }];
  });
}

/** Runs on the raw file so that duplicates are found even among entities that failed their shape check. */
function checkRawUnique(items: unknown, kind: string, key: string, report: Report): void {
  if (!Array.isArray(items)) return;
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const value = (item as Record<string, unknown> | null)?.[key];
    if (typeof value !== 'string') return;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else
      report([kind, index, key], `duplicate ${key} "${value}": already used at ${formatPath([kind, first])}`);
  });
}

function checkDuplicates(values: readonly string[], path: Path, what: string, report: Report): void {
  const seen = new Map<string, number>();
  values.forEach((value, index) => {
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else
      report(
        [...path, index],
        `${what} "${value}" is listed twice (first at ${formatPath([...path, first])})`,
      );
  });
}

function checkLocation(location: CatalogueLocation, path: Path, report: Report): void {
  const seen = new Map<string, number>();
  location.closures.forEach((closure, index) => {
    const first = seen.get(closure.date);
    if (first === undefined) seen.set(closure.date, index);
    else report([...path, 'closures', index, 'date'], `duplicate closure date (first at closures[${first}])`);
  });
  const protection = location.booking_protection;
  for (const field of ['late_cancellation_fee_percentage', 'no_show_fee_percentage'] as const) {
    const value = protection[field];
    if (protection.applies && (value === null || value === undefined)) {
      report([...path, 'booking_protection', field], 'is required (0 to 100) when applies is true');
    } else if (!protection.applies && value !== null && value !== undefined) {
      report([...path, 'booking_protection', field], 'must be null when applies is false');
    }
  }
}

function checkMoney(money: CatalogueMoney, path: Path, currency: string | undefined, report: Report): void {
  if (currency !== undefined && money.currency !== currency) {
    report([...path, 'currency'], `must be the organisation's currency ${currency}`);
  }
}

function checkDeposit(deposit: CatalogueMoney, price: CatalogueMoney, path: Path, report: Report): void {
  if (deposit.amount <= 0) report([...path, 'amount'], 'must be greater than 0; use null for no deposit');
  else if (deposit.amount > price.amount) report([...path, 'amount'], 'must not exceed the price');
}

function checkService(
  service: CatalogueService,
  path: Path,
  currency: string | undefined,
  locationRefs: ReadonlySet<string>,
  report: Report,
): void {
  checkMoney(service.price, [...path, 'price'], currency, report);
  if (service.deposit) {
    checkMoney(service.deposit, [...path, 'deposit'], currency, report);
    checkDeposit(service.deposit, service.price, [...path, 'deposit'], report);
  }
  service.locations.forEach((ref, index) => {
    if (!locationRefs.has(ref)) report([...path, 'locations', index], `unknown location ref "${ref}"`);
  });
  checkDuplicates(service.locations, [...path, 'locations'], 'location', report);
  for (const [ref, override] of Object.entries(service.overrides)) {
    const at = [...path, 'overrides', ref];
    if (!locationRefs.has(ref)) report(at, `unknown location ref "${ref}"`);
    else if (!service.locations.includes(ref)) report(at, `"${ref}" is not one of this service's locations`);
    if (override.price) checkMoney(override.price, [...at, 'price'], currency, report);
    if (override.deposit) checkMoney(override.deposit, [...at, 'deposit'], currency, report);
    const price = override.price ?? service.price;
    const deposit = override.deposit === undefined ? service.deposit : override.deposit;
    if (override.deposit) checkDeposit(override.deposit, price, [...at, 'deposit'], report);
    else if (override.price && deposit && deposit.amount > price.amount) {
      report([...at, 'price', 'amount'], "must not be below the service's deposit");
    }
  }
}

interface StaffContext {
  locationRefs: ReadonlySet<string>;
  serviceRefs: ReadonlySet<string>;
  zone: string | undefined;
}

function checkStaff(staff: CatalogueStaff, path: Path, context: StaffContext, report: Report): void {
  staff.services.forEach((ref, index) => {
    if (!context.serviceRefs.has(ref)) report([...path, 'services', index], `unknown service ref "${ref}"`);
  });
  checkDuplicates(staff.services, [...path, 'services'], 'service', report);
  for (const [ref, week] of Object.entries(staff.working_hours)) {
    const at = [...path, 'working_hours', ref];
    if (!context.locationRefs.has(ref)) report(at, `unknown location ref "${ref}"`);
    for (const day of WEEKDAYS) checkDay(week[day] ?? [], [...at, day], report);
  }
  const seen = new Map<string, number>();
  staff.time_off.forEach((entry, index) => {
    const at = [...path, 'time_off', index];
    const key = `${entry.start}|${entry.end}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else report(at, `duplicate time off (same as time_off[${first}])`);
    if (context.zone === undefined) {
      if (DateTime.fromISO(entry.end, { zone: 'utc' }) <= DateTime.fromISO(entry.start, { zone: 'utc' })) {
        report([...at, 'end'], 'must be after start');
      }
      return;
    }
    const start = localInstant(entry.start, context.zone);
    const end = localInstant(entry.end, context.zone);
    const gap = `does not exist in ${context.zone} (the clocks go forward over it)`;
    if (start === undefined) report([...at, 'start'], gap);
    if (end === undefined) report([...at, 'end'], gap);
    if (start !== undefined && end !== undefined && end <= start)
      report([...at, 'end'], 'must be after start');
  });
}

function checkDay(intervals: readonly (readonly [string, string])[], path: Path, report: Report): void {
  const valid: { index: number; start: number; end: number }[] = [];
  intervals.forEach(([from, to], index) => {
    const start = clockMinutes(from);
    const end = clockMinutes(to);
    if (start >= end) report([...path, index], `start ${from} must be before end ${to}`);
    else valid.push({ index, start, end });
  });
  valid.sort((a, b) => a.start - b.start || a.end - b.end);
  let latest: (typeof valid)[number] | undefined;
  for (const interval of valid) {
    if (latest && interval.start < latest.end) {
      const [earlier, later] = latest.index < interval.index ? [latest, interval] : [interval, latest];
      report([...path, later.index], `overlaps ${formatPath([...path, earlier.index])}`);
    }
    if (!latest || interval.end > latest.end) latest = interval;
  }
}

function checkClients(clients: readonly Indexed<CatalogueClient>[], report: Report): void {
  const phones = new Map<string, number>();
  const emails = new Map<string, number>();
  for (const { index, value } of clients) {
    if (value.phone === null && value.email === null) {
      report(['clients', index], 'needs a phone number or an e-mail address');
    }
    for (const [field, seen] of [
      ['phone', phones],
      ['email', emails],
    ] as const) {
      const contact = value[field];
      if (contact === null) continue;
      const first = seen.get(contact);
      if (first === undefined) seen.set(contact, index);
      else report(['clients', index, field], `same ${field} as ${formatPath(['clients', first])}`);
    }
  }
}

const calendars = new Map<string, ZoneCalendar>();

/**
 * The instant a booking's local start means in a zone: undefined when the wall-clock time does not
 * exist (the clocks go forward over it); the first of the two instants when it happens twice (the
 * clocks go back), the same rule availability applies to its grid.
 */
export function firstLocalInstant(local: string, zone: string): number | undefined {
  let calendar = calendars.get(zone);
  if (calendar === undefined) {
    calendar = new ZoneCalendar(zone);
    calendars.set(zone, calendar);
  }
  const [date = '', time = ''] = local.split('T');
  const [hours = 0, mins = 0, seconds = 0] = time.split(':').map(Number);
  const first = calendar.instantsAt(calendar.day(date), hours * 60 + mins)[0];
  return first === undefined ? undefined : first + seconds * 1000;
}

/** A catalogue service as offered at one of its locations: that location's overrides applied. */
export function offeredAt(service: CatalogueService, id: string, locationRef: string): OfferedService {
  const override = service.overrides[locationRef];
  return applyLocationOverride(
    {
      id,
      name: service.name,
      category: service.category,
      durationMinutes: service.duration_minutes,
      bufferAfterMinutes: service.buffer_after_minutes,
      priceMinor: service.price.amount,
      depositMinor: service.deposit?.amount ?? null,
      onlineBookable: service.online_bookable,
    },
    {
      durationMinutes: override?.duration_minutes ?? null,
      priceMinor: override?.price?.amount ?? null,
      depositOverridden: override?.deposit !== undefined,
      depositMinor: override?.deposit?.amount ?? null,
      onlineBookable: override?.online_bookable ?? null,
    },
  );
}

export type PendingStep = 'deposit' | 'protection_setup';

/** What an imported booking amounts to, worked out from the file alone (instants in epoch ms). */
export interface BookingOutline {
  startsAt: number;
  endsAt: number;
  /** endsAt plus the last service's buffer. */
  blockedUntil: number;
  segments: { service: OfferedService; startsAt: number; endsAt: number }[];
  totalPriceMinor: number;
  /** The services' deposits summed; null when none carries one. */
  depositMinor: number | null;
  protection: BookingProtectionPolicy;
  /** The customer steps a pending_confirmation booking would still wait for. */
  outstanding: PendingStep[];
}

const MINUTE = 60_000;

/** Services back to back from `startsAt` in the order given, priced as offered at the location. */
export function outlineBooking(
  booking: Pick<CatalogueBooking, 'deposit_paid' | 'protection'>,
  services: readonly OfferedService[],
  protection: CatalogueLocation['booking_protection'],
  startsAt: number,
): BookingOutline {
  let start = startsAt;
  const segments = services.map((service) => {
    const segment = { service, startsAt: start, endsAt: start + service.durationMinutes * MINUTE };
    start = segment.endsAt;
    return segment;
  });
  const depositMinor = services.reduce((sum, s) => sum + (s.depositMinor ?? 0), 0) || null;
  const policy: BookingProtectionPolicy = protection.applies
    ? {
        applies: true,
        late_cancellation_fee_percentage: protection.late_cancellation_fee_percentage ?? null,
        no_show_fee_percentage: protection.no_show_fee_percentage ?? null,
      }
    : { applies: false, late_cancellation_fee_percentage: null, no_show_fee_percentage: null };
  const outstanding: PendingStep[] = [];
  if (depositMinor !== null && !booking.deposit_paid) outstanding.push('deposit');
  if (policy.applies && booking.protection.setup_status !== 'succeeded') outstanding.push('protection_setup');
  const last = services[services.length - 1];
  return {
    startsAt,
    endsAt: start,
    blockedUntil: start + (last?.bufferAfterMinutes ?? 0) * MINUTE,
    segments,
    totalPriceMinor: services.reduce((sum, s) => sum + s.priceMinor, 0),
    depositMinor,
    protection: policy,
    outstanding,
  };
}

interface BookingContext {
  prefix: string | undefined;
  /** Refs present in the raw file, so an entity failing its own shape check is not "unknown" too. */
  refs: Record<'locations' | 'services' | 'staff' | 'clients', ReadonlySet<string>>;
  locations: ReadonlyMap<string, CatalogueLocation>;
  services: ReadonlyMap<string, CatalogueService>;
  staff: ReadonlyMap<string, CatalogueStaff>;
  zones: ReadonlyMap<string, string>;
}

interface LiveInterval {
  index: number;
  staff: string;
  start: number;
  end: number;
}

function byRef<T extends { ref: string }>(items: readonly Indexed<T>[]): Map<string, T> {
  return new Map(items.map(({ value }) => [value.ref, value]));
}

function checkBookings(parsed: ParsedCatalogue, report: Report): void {
  checkRawUnique(parsed.raw.bookings, 'bookings', 'id', report);
  const zones = rawZones(parsed.raw.locations);
  const context: BookingContext = {
    prefix: parsed.organisation?.booking_reference_prefix,
    refs: {
      locations: rawRefs(parsed.raw.locations),
      services: rawRefs(parsed.raw.services),
      staff: rawRefs(parsed.raw.staff),
      clients: rawRefs(parsed.raw.clients),
    },
    locations: byRef(parsed.locations),
    services: byRef(parsed.services),
    staff: byRef(parsed.staff),
    zones: new Map(zones.flatMap((z) => (z.ref === undefined ? [] : [[z.ref, z.zone] as const]))),
  };
  const references = new Map<string, number>();
  const live: LiveInterval[] = [];
  for (const { index, value } of parsed.bookings) {
    const path: Path = ['bookings', index];
    const reference = value.reference;
    if (reference !== undefined) {
      if (context.prefix !== undefined && !reference.startsWith(`${context.prefix}-`)) {
        report([...path, 'reference'], `must start with the organisation's prefix "${context.prefix}-"`);
      }
      const first = references.get(reference);
      if (first === undefined) references.set(reference, index);
      else
        report(
          [...path, 'reference'],
          `duplicate reference "${reference}": already used at ${formatPath(['bookings', first])}`,
        );
    }
    const outline = checkBooking(value, path, context, report);
    if (outline !== undefined && LIVE_STATUSES.includes(value.status)) {
      live.push({ index, staff: value.staff, start: outline.startsAt, end: outline.blockedUntil });
    }
  }
  checkLiveOverlaps(live, report);
}

/** Checks one booking; returns its outline when everything it is computed from is sound. */
function checkBooking(
  booking: CatalogueBooking,
  path: Path,
  context: BookingContext,
  report: Report,
): BookingOutline | undefined {
  const { refs } = context;
  const locationKnown = refs.locations.has(booking.location);
  if (!locationKnown) report([...path, 'location'], `unknown location ref "${booking.location}"`);
  checkDuplicates(booking.services, [...path, 'services'], 'service', report);
  const offered: OfferedService[] = [];
  booking.services.forEach((ref, index) => {
    const service = context.services.get(ref);
    if (!refs.services.has(ref)) report([...path, 'services', index], `unknown service ref "${ref}"`);
    else if (service && locationKnown && !service.locations.includes(booking.location)) {
      report(
        [...path, 'services', index],
        `service "${ref}" is not offered at location "${booking.location}"`,
      );
    } else if (service) offered.push(offeredAt(service, ref, booking.location));
  });
  checkBookingStaff(booking, [...path, 'staff'], context, report);
  if (!refs.clients.has(booking.client)) {
    report([...path, 'client'], `unknown client ref "${booking.client}"`);
  }
  const zone = context.zones.get(booking.location);
  const startsAt = zone === undefined ? undefined : firstLocalInstant(booking.starts_at, zone);
  if (zone !== undefined && startsAt === undefined) {
    report([...path, 'starts_at'], `does not exist in ${zone} (the clocks go forward over it)`);
  }
  if (/:\d\d:\d\d$/.test(booking.starts_at) && !booking.starts_at.endsWith(':00')) {
    report([...path, 'starts_at'], 'must be on a whole minute');
  }
  const location = context.locations.get(booking.location);
  if (location === undefined || offered.length !== booking.services.length) return undefined;
  const outline = outlineBooking(booking, offered, location.booking_protection, startsAt ?? 0);
  const status = [...path, 'status'];
  if (booking.status === 'pending_payment' && outline.depositMinor === null) {
    report(status, `pending_payment needs a deposit, but no service carries one at "${booking.location}"`);
  } else if (booking.status === 'pending_payment' && booking.deposit_paid) {
    report(status, 'pending_payment needs an unpaid deposit, but deposit_paid is true');
  } else if (booking.status === 'pending_confirmation' && outline.outstanding.length === 0) {
    report(
      status,
      'pending_confirmation needs an outstanding step: an unpaid deposit, or booking protection whose setup has not succeeded',
    );
  }
  return startsAt === undefined ? undefined : outline;
}

/** The staff member must work at the location (have working hours there) and deliver every service. */
function checkBookingStaff(booking: CatalogueBooking, path: Path, context: BookingContext, report: Report) {
  if (!context.refs.staff.has(booking.staff)) {
    report(path, `unknown staff ref "${booking.staff}"`);
    return;
  }
  const staff = context.staff.get(booking.staff);
  if (staff === undefined) return;
  if (context.refs.locations.has(booking.location) && !(booking.location in staff.working_hours)) {
    report(path, `staff "${staff.ref}" does not work at location "${booking.location}"`);
  }
  const missing = booking.services.filter(
    (ref) => context.refs.services.has(ref) && !staff.services.includes(ref),
  );
  if (missing.length > 0) {
    const list = missing.map((ref) => `"${ref}"`).join(', ');
    report(
      path,
      `staff "${staff.ref}" does not deliver ${missing.length === 1 ? 'service' : 'services'} ${list}`,
    );
  }
}

/**
 * Live bookings of one staff member must not overlap, buffers included (the database refuses it too);
 * each overlap is reported at the later of the two in the file.
 */
function checkLiveOverlaps(live: LiveInterval[], report: Report): void {
  const byStaff = new Map<string, LiveInterval[]>();
  for (const interval of live) {
    const group = byStaff.get(interval.staff);
    if (group) group.push(interval);
    else byStaff.set(interval.staff, [interval]);
  }
  for (const [staff, intervals] of byStaff) {
    intervals.sort((a, b) => a.start - b.start || a.index - b.index);
    let latest: LiveInterval | undefined;
    for (const interval of intervals) {
      if (latest && interval.start < latest.end) {
        const [earlier, later] = latest.index < interval.index ? [latest, interval] : [interval, latest];
        report(
          ['bookings', later.index, 'starts_at'],
          `overlaps ${formatPath(['bookings', earlier.index])}, another live booking of staff "${staff}" (buffers included)`,
        );
      }
      if (!latest || interval.end > latest.end) latest = interval;
    }
  }
}

import { DateTime, IANAZone } from 'luxon';
import type {
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

import { DateTime } from 'luxon';
import { MAX_BOOKING_SPAN_MINUTES } from '../../../domain/booking/booking.ts';
import { unknownRefMessage } from '../format/key-suggestions.ts';
import { clockMinutes, localInstant, staffTimeZone, WEEKDAYS } from '../format/local-times.ts';
import {
  type CatalogueProblem,
  checkDuplicates,
  checkRawUnique,
  formatPath,
  type Path,
  type Report,
  rawRefs,
  rawZones,
} from '../format/problems.ts';
import type {
  CatalogueClient,
  CatalogueLocation,
  CatalogueMoney,
  CatalogueService,
  CatalogueStaff,
} from '../format/schema.ts';
import { checkAliases } from './alias-checks.ts';
import { checkBookings } from './booking-checks.ts';
import type { Indexed, ParsedCatalogue } from './parsed.ts';

/**
 * The catalogue rules a per-field schema cannot express: references between entities, uniqueness
 * within the file, currencies, overlaps and local times that do not exist. They run on whatever
 * passed the shape check, so one file run reports as much as it can.
 */

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
  checkAliases('services', parsed.services, report);
  checkAliases('staff', parsed.staff, report);
  checkClients(parsed.clients, report);
  checkBookings(parsed, report);
  return problems;
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
    if (!locationRefs.has(ref))
      report([...path, 'locations', index], unknownRefMessage('location', ref, locationRefs));
  });
  checkDuplicates(service.locations, [...path, 'locations'], 'location', report);
  checkSpan(service.duration_minutes, service.buffer_after_minutes, [...path, 'duration_minutes'], report);
  for (const [ref, override] of Object.entries(service.overrides)) {
    const at = [...path, 'overrides', ref];
    if (override.duration_minutes !== undefined) {
      checkSpan(override.duration_minutes, service.buffer_after_minutes, [...at, 'duration_minutes'], report);
    }
    if (!locationRefs.has(ref)) report(at, unknownRefMessage('location', ref, locationRefs));
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

/** A service alone must fit in one booking, buffer included. */
function checkSpan(durationMinutes: number, bufferMinutes: number, path: Path, report: Report): void {
  if (durationMinutes + bufferMinutes > MAX_BOOKING_SPAN_MINUTES) {
    report(
      path,
      `with buffer_after_minutes, must not exceed ${MAX_BOOKING_SPAN_MINUTES} (a booking spans at most a day)`,
    );
  }
}

interface StaffContext {
  locationRefs: ReadonlySet<string>;
  serviceRefs: ReadonlySet<string>;
  zone: string | undefined;
}

function checkStaff(staff: CatalogueStaff, path: Path, context: StaffContext, report: Report): void {
  staff.services.forEach((ref, index) => {
    if (!context.serviceRefs.has(ref)) {
      report([...path, 'services', index], unknownRefMessage('service', ref, context.serviceRefs));
    }
  });
  checkDuplicates(staff.services, [...path, 'services'], 'service', report);
  for (const [ref, week] of Object.entries(staff.working_hours)) {
    const at = [...path, 'working_hours', ref];
    if (!context.locationRefs.has(ref)) report(at, unknownRefMessage('location', ref, context.locationRefs));
    for (const day of WEEKDAYS) checkDay(week[day] ?? [], [...at, day], report);
  }
  const seen = new Map<string, number>();
  staff.time_off.forEach((entry, index) => {
    const at = [...path, 'time_off', index];
    // The same instants, however written ("09:00" and "09:00:00"): time off without an id takes its id
    // from them, and two entries would meet at the database's key.
    const instant = (local: string) =>
      (context.zone === undefined ? undefined : localInstant(local, context.zone)) ?? local;
    const key = `${instant(entry.start)}|${instant(entry.end)}`;
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

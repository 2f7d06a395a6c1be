import { MAX_BOOKING_SPAN_MS } from '../../../domain/booking/booking.ts';
import { LIVE_STATUSES } from '../../../domain/booking/state-machine.ts';
import type { OfferedService } from '../../../domain/catalogue.ts';
import { type BookingOutline, offeredAt, outlineBooking } from '../format/booking-outline.ts';
import { unknownRefMessage } from '../format/key-suggestions.ts';
import { firstLocalInstant } from '../format/local-times.ts';
import {
  checkDuplicates,
  checkRawUnique,
  formatPath,
  type Path,
  type Report,
  rawRefs,
  rawZones,
} from '../format/problems.ts';
import {
  type CatalogueBooking,
  type CatalogueLocation,
  type CatalogueService,
  type CatalogueStaff,
  refSchema,
} from '../format/schema.ts';
import type { Indexed, ParsedCatalogue } from './parsed.ts';

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

export function checkBookings(parsed: ParsedCatalogue, report: Report): void {
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
  const shaped = new Set(parsed.bookings.map((b) => b.index));
  if (Array.isArray(parsed.raw.bookings)) {
    parsed.raw.bookings.forEach((entry, index) => {
      if (!shaped.has(index)) checkRefsOfMisshapen(entry, ['bookings', index], context.refs, report);
    });
  }
}

/**
 * The refs of a booking that failed its shape check, each one that is a well-formed ref itself: an
 * unknown one is listed in the same run as the shape problem, not once that is mended. Nothing else
 * of the entry is checked: whether a service is offered there, or the staff member works there, asks
 * for fields that may be the wrong ones.
 */
function checkRefsOfMisshapen(
  entry: unknown,
  path: Path,
  refs: BookingContext['refs'],
  report: Report,
): void {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return;
  const { location, services, staff, client } = entry as Record<string, unknown>;
  const unknown = (value: unknown, known: ReadonlySet<string>): value is string =>
    refSchema.safeParse(value).success && !known.has(value as string);
  if (unknown(location, refs.locations)) {
    report([...path, 'location'], unknownRefMessage('location', location, refs.locations));
  }
  if (Array.isArray(services)) {
    services.forEach((ref: unknown, index) => {
      if (unknown(ref, refs.services)) {
        report([...path, 'services', index], unknownRefMessage('service', ref, refs.services));
      }
    });
  }
  if (unknown(staff, refs.staff)) report([...path, 'staff'], unknownRefMessage('staff', staff, refs.staff));
  if (unknown(client, refs.clients)) {
    report([...path, 'client'], unknownRefMessage('client', client, refs.clients));
  }
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
  if (!locationKnown) {
    report([...path, 'location'], unknownRefMessage('location', booking.location, refs.locations));
  }
  checkDuplicates(booking.services, [...path, 'services'], 'service', report);
  const offered: OfferedService[] = [];
  booking.services.forEach((ref, index) => {
    const service = context.services.get(ref);
    if (!refs.services.has(ref)) {
      report([...path, 'services', index], unknownRefMessage('service', ref, refs.services));
    } else if (service && locationKnown && !service.locations.includes(booking.location)) {
      report(
        [...path, 'services', index],
        `service "${ref}" is not offered at location "${booking.location}"`,
      );
    } else if (service) offered.push(offeredAt(service, ref, booking.location));
  });
  checkBookingStaff(booking, [...path, 'staff'], context, report);
  if (!refs.clients.has(booking.client)) {
    report([...path, 'client'], unknownRefMessage('client', booking.client, refs.clients));
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
  if (outline.blockedUntil - outline.startsAt > MAX_BOOKING_SPAN_MS) {
    report(
      [...path, 'services'],
      `together (with the last buffer) must not take longer than ${MAX_BOOKING_SPAN_MS / 3_600_000} hours`,
    );
  }
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
    report(path, unknownRefMessage('staff', booking.staff, context.refs.staff));
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

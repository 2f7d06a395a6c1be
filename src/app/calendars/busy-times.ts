import ICAL from 'ical.js';
import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';
import type { Interval } from '../../domain/availability/types.ts';
import { twinInstant } from '../../domain/repeated-wall-times.ts';
import { zoneOfForeignTzid } from './windows-zones.ts';

/**
 * The busy intervals of an external calendar (an iCalendar file) over a window, by ical.js: recurring
 * events expanded (RRULE, RDATE, EXDATE, RECURRENCE-ID overrides), each time read in its own zone.
 * Events that say they leave the time free (TRANSP:TRANSPARENT) or that are called off
 * (STATUS:CANCELLED, on the series or on one occurrence) block nothing, nor do invitations the
 * calendar's owner declined, where the owner is known (calendarOwner).
 *
 * Zones: a TZID defined by a VTIMEZONE of the file is read by that definition (RFC 5545 3.6.5);
 * a TZID the file does not define but that names an IANA zone (as many publishers write) by the IANA
 * database, as is one naming a zone otherwise (a Windows name, as Outlook and Exchange write it:
 * windows-zones.ts); a floating time, or a TZID that is neither, in the calendar's own zone where it
 * names one (X-WR-TIMEZONE, as Google and Apple write it: the zone their owner set the calendar
 * in), else in `fallbackZone` (the staff member's location's zone: the time a person there means).
 * An all-day date is a day of `fallbackZone`, where the staff member works.
 */

export class BusyCalendarError extends Error {}

/** Bounds on one file's work, so a hostile or broken calendar cannot hold the refresher. */
export const MAX_BUSY_INTERVALS = 20_000;
const MAX_OCCURRENCE_STEPS = 200_000;

/**
 * ical.js looks for a rule's next occurrence in loops of its own, which a sparse or impossible rule
 * (FREQ=SECONDLY;BYMONTH=12, FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30) keeps turning for minutes, holding
 * the event loop, however few occurrences it gives. The candidates it tries are counted, and the CPU
 * time they take: past either bound the copy is refused. CPU time, not the clock on the wall: on a
 * loaded machine a calendar that takes 0.3 s of work could take more than 2 s to finish, and would be
 * refused for the machine's load rather than its own cost.
 */
const MAX_RULE_CANDIDATES = 1_000_000;
const MAX_EXPANSION_MS = 2_000;
let budget: { left: number; sinceLook: number; deadline: number } | null = null;
type Iterating = { check_contracting_rules(): boolean; expand_year_days(year: number): unknown };
const iterating = ICAL.RecurIterator.prototype as unknown as Iterating;
const checkRules = iterating.check_contracting_rules;
const expandYear = iterating.expand_year_days;
/** The process's CPU time so far, user and system, in milliseconds. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
function spend(cost: number): void {
  if (!budget) return;
  budget.left -= cost;
  budget.sinceLook += cost;
  if (budget.sinceLook >= 1_000) {
    budget.sinceLook = 0;
    if (cpuMs() > budget.deadline) budget.left = -1;
  }
  if (budget.left < 0) {
    budget = null;
    throw new BusyCalendarError('a recurrence rule is too costly to expand');
  }
}
iterating.check_contracting_rules = function (this: Iterating) {
  spend(1);
  return checkRules.call(this);
};
iterating.expand_year_days = function (this: Iterating, year: number) {
  spend(366);
  return expandYear.call(this, year);
};

/** The busy intervals of a file over `window`, read whole: past any bound the copy is refused. */
export function busyTimes(
  text: string,
  window: Interval,
  fallbackZone: string,
  owner: string | null = null,
): Interval[] {
  return readBusyCalendar(text, window, fallbackZone, Number.POSITIVE_INFINITY, owner).busy;
}

/**
 * The owner's e-mail address of a calendar whose address names it, lower-cased, or null. Google's
 * secret (and public) address is /calendar/ical/<calendar id>/private-<secret>/basic.ics, the id of a
 * person's own calendar being their address; Google's file keeps the invitations they declined, with
 * ATTENDEE;PARTSTAT=DECLINED:mailto:<that address>, though their calendar no longer shows them. Other
 * calendars (Google's shared ones, …@group.calendar.google.com, iCloud, Outlook, which drop a
 * declined invitation from the calendar) name no owner: every event of theirs blocks as before.
 */
export function calendarOwner(url: string): string | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const id = /^\/calendar\/ical\/([^/]+)\/(?:private-[0-9a-f]+|public)\/(?:basic|full)\.ics$/i.exec(
    path,
  )?.[1];
  if (!id) return null;
  let address: string;
  try {
    address = decodeURIComponent(id).toLowerCase();
  } catch {
    return null;
  }
  if (!/^[^@\s]+@[^@\s]+$/.test(address) || address.endsWith('calendar.google.com')) return null;
  return address;
}

/** What a file gives over a window read in passes (readBusyCalendar). */
export interface BusyRead {
  busy: Interval[];
  /** The busy times are complete before this instant: the window's end, unless the read stopped short. */
  readUntil: number;
  /** Why the read stopped short of the window's end (a bound reached after the first pass), or null. */
  shortBy: string | null;
}

/**
 * The busy intervals of a file over `window`, its recurring events expanded in passes of `passMs`
 * from the window's start, the nearest first, under one set of bounds for the whole file (the CPU
 * time and candidates above, MAX_OCCURRENCE_STEPS, MAX_BUSY_INTERVALS): a window of ten years costs
 * no more than one of a year. Past a bound in the first pass (or a file or event that cannot be read)
 * the copy is refused (BusyCalendarError); in a later one, the passes before it are kept and the read
 * says where and why it stopped, so that a calendar too costly to read ten years ahead still blocks
 * the year to come.
 */
export function readBusyCalendar(
  text: string,
  window: Interval,
  fallbackZone: string,
  passMs: number,
  owner: string | null = null,
): BusyRead {
  budget = { left: MAX_RULE_CANDIDATES, sinceLook: 0, deadline: cpuMs() + MAX_EXPANSION_MS };
  try {
    return readBusyTimes(text, window, fallbackZone, passMs, owner);
  } finally {
    budget = null;
  }
}

function readBusyTimes(
  text: string,
  window: Interval,
  fallbackZone: string,
  passMs: number,
  owner: string | null,
): BusyRead {
  let calendars: ICAL.Component[];
  try {
    // A UTF-8 byte-order mark before BEGIN:VCALENDAR (Windows tools and some publishers write one;
    // Buffer's UTF-8 decoding keeps it) is no part of the calendar: ical.js would refuse the file.
    const parsed = ICAL.parse(text.replace(/^\uFEFF/, '')) as unknown[];
    // A file may hold several VCALENDARs one after the other (RFC 5545 3.4): ical.js gives one as it
    // is, several as a list. All are read, under the one set of bounds of the file.
    const objects = typeof parsed[0] === 'string' ? [parsed] : parsed;
    calendars = objects.map((jcal) => new ICAL.Component(jcal as unknown[]));
  } catch (error) {
    throw new BusyCalendarError(`not an iCalendar file (${(error as Error).message.slice(0, 200)})`);
  }
  if (calendars.length === 0 || calendars.some((calendar) => calendar.name !== 'vcalendar')) {
    throw new BusyCalendarError('not an iCalendar file (no VCALENDAR)');
  }
  // A TZID names a VTIMEZONE of its own VCALENDAR (as ical.js reads it too): a reader for each.
  const readers = new Map<ICAL.Component, InstantReader>();
  for (const calendar of calendars) {
    try {
      startZonesNear(calendar, window);
    } catch {
      // A definition that cannot be read: left as it is (read, or not, as before).
    }
    const zones = new Map<string, ICAL.Timezone>();
    for (const vtimezone of calendar.getAllSubcomponents('vtimezone')) {
      try {
        const zone = new ICAL.Timezone(vtimezone);
        if (zone.tzid) zones.set(zone.tzid, zone);
      } catch {
        // A broken definition: its TZID is then read as an IANA name, or in the fallback zone.
      }
    }
    const own = calendar.getFirstPropertyValue('x-wr-timezone');
    const calendarZone = (typeof own === 'string' && namedZone(own.trim())) || fallbackZone;
    readers.set(calendar, new InstantReader(zones, fallbackZone, calendarZone));
  }
  const readerOf = (component: ICAL.Component): InstantReader => {
    let calendar = component;
    while (calendar.parent) calendar = calendar.parent;
    return readers.get(calendar)!;
  };
  const busy: Interval[] = [];
  let steps = 0;
  const add = (item: ICAL.Event, start: ICAL.Time, end: ICAL.Time) => {
    if (!blocks(item, owner)) return;
    const reader = readerOf(item.component);
    const from = reader.instant(start, zoneOf(item, 'dtstart'));
    let until =
      durationEnd(reader, item, start, from) ??
      reader.instant(end, zoneOf(item, 'dtend') ?? zoneOf(item, 'dtstart'));
    if (!(until > from) && start.isDate) {
      // An all-day event whose DTEND is not after its start (on its start day, as leave planners and
      // older tools write a one-day event) is that day taken, as Google, Apple and Outlook show it and
      // as an all-day event without an end is (RFC 5545 3.6.1).
      const nextDay = start.clone();
      nextDay.adjust(1, 0, 0, 0);
      until = reader.instant(nextDay, zoneOf(item, 'dtstart'));
    }
    keep(from, until);
  };
  /** A busy time from `from` to `until`, clipped to the window; a time of no length blocks nothing. */
  const keep = (from: number, until: number) => {
    if (!(until > from)) return;
    if (from >= window.end || until <= window.start) return;
    busy.push({ start: Math.max(from, window.start), end: Math.min(until, window.end) });
    if (busy.length > MAX_BUSY_INTERVALS) {
      throw new BusyCalendarError(`more than ${MAX_BUSY_INTERVALS} busy times in the window kept`);
    }
  };
  const unreadable = (error: unknown) =>
    // ical.js reads a value when it is first asked for: a broken one (a DTEND, an UNTIL, an EXDATE
    // that is no date) throws then. The copy is refused, so that the last good one is kept and the
    // reason shown, rather than the event dropped and its time silently left free.
    error instanceof BusyCalendarError
      ? error
      : new BusyCalendarError(
          `an event that cannot be read (${String((error as Error)?.message ?? error).slice(0, 200)})`,
        );

  try {
    // (Most files have no RDATE: they are not walked for one.)
    if (/^RDATE[;:]/im.test(text)) {
      for (const calendar of calendars) {
        periodsAsOverrides(calendar);
        keepFirstOccurrence(calendar);
      }
    }
  } catch (error) {
    throw unreadable(error);
  }
  try {
    for (const calendar of calendars) readFreeBusy(calendar, readerOf(calendar), keep);
  } catch (error) {
    throw unreadable(error);
  }
  const events = calendars.flatMap((calendar) => calendar.getAllSubcomponents('vevent'));
  alignUtcExceptions(events, (component, tzid) => readerOf(component).defines(tzid));
  for (const component of events) untilDatesToDayEnd(component);
  const masters = new Set(
    events.filter((e) => !e.hasProperty('recurrence-id')).map((e) => String(e.getFirstPropertyValue('uid'))),
  );
  // Each series is given its own overrides: left to itself, ical.js relates every override in the
  // file to every series (whatever its UID, so one series' cancelled occurrence frees another's at
  // the same time) and scans the whole file once per event (quadratic in the number of events).
  const overrides = new Map<string, ICAL.Component[]>();
  for (const component of events) {
    if (!component.hasProperty('recurrence-id')) continue;
    const uid = String(component.getFirstPropertyValue('uid'));
    const same = overrides.get(uid);
    if (same) same.push(component);
    else overrides.set(uid, [component]);
  }
  // The first pass in the file's order; later passes take the single events of their span and go on
  // with each series where its iterator stopped. An event belongs to the pass that holds its own
  // (wall) start, wherever an override moved it within the window.
  const passEnd = (pass: number) =>
    window.start + (pass + 1) * passMs < window.end
      ? window.start + (pass + 1) * passMs
      : Number.POSITIVE_INFINITY;
  const series: Expansion[] = [];
  const laterSingles: { event: ICAL.Event; wall: number }[] = [];
  const single = (event: ICAL.Event) => {
    const wall = floatingMs(event.startDate);
    if (wall < passEnd(0)) add(event, event.startDate, event.endDate);
    else laterSingles.push({ event, wall });
  };
  for (const component of events) {
    try {
      const event = readEvent(component, single);
      if (!event) continue;
      const expansion: Expansion = { event, iterator: null, next: undefined };
      expand(expansion, passEnd(0));
      series.push(expansion);
    } catch (error) {
      throw unreadable(error);
    }
  }
  laterSingles.sort((a, b) => a.wall - b.wall);
  let nextSingle = 0;
  for (let pass = 1; passEnd(pass - 1) !== Number.POSITIVE_INFINITY; pass++) {
    const kept = busy.length;
    try {
      for (
        ;
        nextSingle < laterSingles.length && laterSingles[nextSingle]!.wall < passEnd(pass);
        nextSingle++
      ) {
        const { event } = laterSingles[nextSingle]!;
        add(event, event.startDate, event.endDate);
      }
      for (const expansion of series) expand(expansion, passEnd(pass));
    } catch (error) {
      // Passes end at wall times: a day before this one's start is before it in any zone.
      const passStart = window.start + pass * passMs;
      const readUntil = passStart - 86_400_000;
      // What this pass had added is dropped, but for occurrences moved back before readUntil (an
      // occurrence belongs to the pass of its original time); so are those it had not reached yet.
      const movedBack = busy.splice(kept).concat(movedBackFrom(passStart));
      busy.push(...movedBack.filter((b) => b.start < readUntil));
      return { busy, readUntil, shortBy: unreadable(error).message };
    }
  }
  return { busy, readUntil: window.end, shortBy: null };

  /**
   * Where a read stops short at a pass starting at the wall time `passStart`, the busy times that
   * the series' overrides whose original time lies in or after that pass move to (the caller keeps
   * those before where the read stops): the passes read are complete, whatever was moved into them.
   * An override read on its own, without its series' rule: one naming an occurrence the rule no
   * longer gives blocks its time too, the side a booking is safe on.
   */
  function movedBackFrom(passStart: number): Interval[] {
    const from = busy.length;
    for (const [uid, moved] of overrides) {
      if (!masters.has(uid)) continue;
      for (const component of moved) {
        try {
          const original = component.getFirstPropertyValue('recurrence-id');
          if (!(original instanceof ICAL.Time) || floatingMs(original) < passStart) continue;
          const override = new ICAL.Event(component, { exceptions: [] });
          if (override.startDate) add(override, override.startDate, override.endDate);
        } catch {
          // An override that cannot be read, or one busy time past the bound: left out, as the pass was.
        }
      }
    }
    return busy.splice(from);
  }

  /**
   * A series, for its passes; a single event (or an override whose series is not in the file) is
   * given to `single` instead.
   */
  function readEvent(component: ICAL.Component, single: (event: ICAL.Event) => void): ICAL.Event | null {
    if (component.hasProperty('recurrence-id')) {
      // An override is expanded with its series; one whose series is not in the file stands alone.
      if (masters.has(String(component.getFirstPropertyValue('uid')))) return null;
      const lone = new ICAL.Event(component, { exceptions: [] });
      if (!lone.startDate) return null;
      single(lone);
      return null;
    }
    // A DTSTART, or an override's RECURRENCE-ID, that is no date throws here (ical.js reads it now):
    // the copy is refused, as for any date that cannot be read, not the series dropped and its time
    // left free without a word. An event without a DTSTART has no time to block.
    const event = new ICAL.Event(component, {
      exceptions: overrides.get(String(component.getFirstPropertyValue('uid'))) ?? [],
    });
    if (!event.startDate) return null;
    if (event.isRecurring()) return event;
    single(event);
    return null;
  }

  /**
   * The occurrences of a series up to the wall time `upper` (not included), from where its last pass
   * stopped: each occurrence is taken from ical.js once.
   */
  function expand(expansion: Expansion, upper: number): void {
    const { event } = expansion;
    expansion.iterator ??= event.iterator(laterStart(event, window) ?? undefined);
    const stopAfter = window.end + WALL_TIME_MARGIN_MS;
    for (;;) {
      if (expansion.next === undefined) {
        expansion.next = expansion.iterator.next() ?? null;
        if (expansion.next === null) return;
        spend(1);
        if (++steps > MAX_OCCURRENCE_STEPS) {
          throw new BusyCalendarError('a recurrence rule gives too many occurrences to expand');
        }
      }
      const next = expansion.next;
      if (next === null) return;
      const wall = floatingMs(next);
      if (wall > stopAfter) {
        expansion.next = null;
        return;
      }
      if (wall >= upper) return;
      expansion.next = undefined;
      const details = event.getOccurrenceDetails(next);
      add(details.item, details.startDate, details.endDate);
    }
  }
}

/**
 * The busy periods of a calendar's VFREEBUSY components (RFC 5545 3.6.4): what a free/busy publication
 * holds instead of events (Outlook's Internet Free/Busy `.ifb` files, a CalDAV server's free/busy
 * address). Each FREEBUSY period blocks but those marked FBTYPE=FREE, as busy, tentative or
 * unavailable time all keep the staff member from a client. Periods are UTC (RFC 5545 3.8.2.6); one
 * written otherwise is read as an event's time would be.
 */
function readFreeBusy(
  calendar: ICAL.Component,
  reader: InstantReader,
  keep: (from: number, until: number) => void,
): void {
  for (const component of calendar.getAllSubcomponents('vfreebusy')) {
    for (const property of component.getAllProperties('freebusy')) {
      const type = String(property.getParameter('fbtype') ?? 'BUSY').toUpperCase();
      if (type === 'FREE') continue;
      const tzid = property.getParameter('tzid');
      const zone = typeof tzid === 'string' ? tzid : undefined;
      for (const value of property.getValues()) {
        if (!(value instanceof ICAL.Period)) continue;
        keep(reader.instant(value.start, zone), reader.instant(value.getEnd(), zone));
      }
    }
  }
}

/** A series being expanded: its iterator once made, and the occurrence it gave that no pass took yet. */
interface Expansion {
  event: ICAL.Event;
  iterator: ICAL.RecurExpansion | null;
  /** undefined: none waiting (ask the iterator); null: the series has ended. */
  next: ICAL.Time | null | undefined;
}

/**
 * Outlook and Exchange define each zone from 1 January 1601 (DTSTART:16010101T020000), its changes by
 * yearly rules. ical.js expands such a rule from its start whenever a later year is asked, for each
 * copy of the zone (its own and the reader's): four centuries a time, which took most of the file's
 * CPU time and rule candidates, so that an Outlook calendar was read only a few years ahead (or, with
 * a few zones, refused). A yearly rule without COUNT or UNTIL gives the same changes from any year
 * on: its start is moved to two years before the window (same month, day and time), so that the
 * change at the start itself (an occurrence, whether or not the rule gives it) is long past.
 */
function startZonesNear(root: ICAL.Component, window: Interval): void {
  const year = new Date(window.start).getUTCFullYear() - 2;
  for (const vtimezone of root.getAllSubcomponents('vtimezone')) {
    for (const change of vtimezone.getAllSubcomponents()) {
      const dtstart = change.getFirstProperty('dtstart');
      const rules = change.getAllProperties('rrule');
      if (!dtstart || rules.length !== 1 || change.hasProperty('rdate')) continue;
      const start = dtstart.getFirstValue();
      const rule = rules[0]!.getFirstValue() as ICAL.Recur;
      if (!(start instanceof ICAL.Time) || start.year >= year) continue;
      if (rule.freq !== 'YEARLY' || (rule.interval ?? 1) !== 1 || rule.count || rule.until) continue;
      const moved = start.clone();
      moved.year = year;
      if (moved.month === 2 && moved.day === 29) moved.day = 28;
      dtstart.setValue(moved);
    }
  }
}

/** A series' properties an override of one of its occurrences does not take over. */
const SERIES_ONLY = new Set(['rrule', 'rdate', 'exdate', 'exrule', 'dtstart', 'dtend', 'duration']);

/**
 * RDATE;VALUE=PERIOD (RFC 5545 3.8.5.2: an occurrence with its own start and end), which ical.js cannot
 * expand (it throws, and the whole file was refused): each period becomes an RDATE of its start and,
 * unless the file overrides that occurrence already, an override of it (RECURRENCE-ID its start) ending
 * at the period's end. EXDATE and the series' overrides then apply to it as to any occurrence.
 */
function periodsAsOverrides(root: ICAL.Component): void {
  const events = root.getAllSubcomponents('vevent');
  const withPeriods = events.filter(
    (e) => !e.hasProperty('recurrence-id') && e.getAllProperties('rdate').some((r) => r.type === 'period'),
  );
  if (withPeriods.length === 0) return;
  const key = (uid: unknown, time: unknown) => `${String(uid)}|${String(time)}`;
  const overridden = new Set(
    events
      .filter((e) => e.hasProperty('recurrence-id'))
      .map((e) => key(e.getFirstPropertyValue('uid'), e.getFirstPropertyValue('recurrence-id'))),
  );
  for (const series of withPeriods) {
    const uid = series.getFirstPropertyValue('uid');
    for (const rdate of series.getAllProperties('rdate')) {
      if (rdate.type !== 'period') continue;
      const tzid = rdate.getParameter('tzid');
      const periods = rdate.getValues() as ICAL.Period[];
      rdate.resetType('date-time');
      rdate.setValues(periods.map((period) => period.start));
      for (const period of periods) {
        if (overridden.has(key(uid, period.start))) continue;
        const override = new ICAL.Component('vevent');
        for (const property of series.getAllProperties()) {
          if (!SERIES_ONLY.has(property.name)) override.addProperty(new ICAL.Property(property.toJSON()));
        }
        const times: [string, ICAL.Time][] = [
          ['recurrence-id', period.start],
          ['dtstart', period.start],
          ['dtend', period.getEnd()],
        ];
        for (const [name, time] of times) {
          const property = override.addPropertyWithValue(name, time);
          if (typeof tzid === 'string') property.setParameter('tzid', tzid);
        }
        root.addSubcomponent(override);
      }
    }
  }
}

/**
 * A series given by RDATEs alone (no RRULE): its DTSTART is its first occurrence (RFC 5545 3.8.5.2),
 * which ical.js leaves out, freeing that time. It is added to the RDATEs (a duplicate is harmless: the
 * busy times are merged), where EXDATE can still exclude it.
 */
function keepFirstOccurrence(root: ICAL.Component): void {
  for (const series of root.getAllSubcomponents('vevent')) {
    if (series.hasProperty('recurrence-id') || series.hasProperty('rrule') || !series.hasProperty('rdate')) {
      continue;
    }
    const dtstart = series.getFirstProperty('dtstart');
    if (!dtstart) continue;
    const [, parameters, type, ...values] = dtstart.toJSON();
    series.addProperty(new ICAL.Property(['rdate', parameters, type, ...values]));
  }
}

/**
 * ical.js knows no zone the file does not define: a series whose TZID is only an IANA name is
 * expanded in wall time, so an EXDATE or RECURRENCE-ID written in UTC (RFC 5545 allows it) would
 * match none of its occurrences, leaving an excluded one busy and a moved one at its old time. Such
 * values are rewritten as the series' wall time in that zone, which ical.js then matches.
 */
function alignUtcExceptions(
  events: ICAL.Component[],
  defines: (component: ICAL.Component, tzid: string) => boolean,
): void {
  const seriesZone = new Map<string, { tzid: string; zone: string }>();
  for (const component of events) {
    if (component.hasProperty('recurrence-id')) continue;
    const dtstart = component.getFirstProperty('dtstart');
    const tzid = dtstart?.getParameter('tzid');
    if (typeof tzid !== 'string' || defines(component, tzid)) continue;
    const zone = namedZone(tzid);
    if (zone === null || dtstart?.type !== 'date-time') continue;
    seriesZone.set(String(component.getFirstPropertyValue('uid')), { tzid, zone });
    for (const exdate of component.getAllProperties('exdate')) toWallTime(exdate, tzid, zone);
    for (const rdate of component.getAllProperties('rdate')) toWallTime(rdate, tzid, zone);
    for (const rrule of component.getAllProperties('rrule')) untilToWallTime(rrule, zone);
  }
  for (const component of events) {
    const recurrenceId = component.getFirstProperty('recurrence-id');
    const series = recurrenceId && seriesZone.get(String(component.getFirstPropertyValue('uid')));
    if (recurrenceId && series) toWallTime(recurrenceId, series.tzid, series.zone);
  }
}

/**
 * The same for a rule's UNTIL: RFC 5545 has it in UTC when DTSTART names a zone, and ical.js would
 * compare that instant with the occurrences' wall times, ending the series an occurrence early east
 * of UTC (the last one left free) and late west of it (one more kept busy).
 */
function untilToWallTime(property: ICAL.Property, zone: string): void {
  let rule: ICAL.Recur;
  try {
    rule = property.getFirstValue() as ICAL.Recur;
  } catch {
    return; // A rule that cannot be read: refused when the event is read.
  }
  const until = rule?.until;
  if (!(until instanceof ICAL.Time) || until.isDate || until.zone !== ICAL.Timezone.utcTimezone) return;
  rule.until = wallTimeIn(until, zone);
}

/**
 * A rule of a timed series that ends on a date (UNTIL=20261208, no time: older Outlook and Lotus
 * exports, hand-made feeds; RFC 5545 wants UNTIL of DTSTART's type) ends at that date's last second in
 * the series' own time: UNTIL bounds the rule inclusively, so an occurrence on that date is the last,
 * as calendar apps show it. ical.js compared the occurrences with that date's midnight, leaving the
 * last occurrence free.
 */
function untilDatesToDayEnd(component: ICAL.Component): void {
  if (component.hasProperty('recurrence-id')) return;
  const dtstart = component.getFirstProperty('dtstart');
  if (dtstart?.type !== 'date-time') return;
  for (const property of component.getAllProperties('rrule')) {
    try {
      const rule = property.getFirstValue() as ICAL.Recur;
      const start = dtstart.getFirstValue();
      if (!(rule?.until instanceof ICAL.Time) || !rule.until.isDate || !(start instanceof ICAL.Time))
        continue;
      const dayEnd = start.clone();
      dayEnd.year = rule.until.year;
      dayEnd.month = rule.until.month;
      dayEnd.day = rule.until.day;
      dayEnd.hour = 23;
      dayEnd.minute = 59;
      dayEnd.second = 59;
      rule.until = dayEnd;
    } catch {
      // A rule or a start that cannot be read: refused when the event is read.
    }
  }
}

/** A UTC time as the wall clock of `zone` reads it, with no zone (as ical.js holds the series' times). */
function wallTimeIn(time: ICAL.Time, zone: string): ICAL.Time {
  const local = DateTime.fromMillis(time.toUnixTime() * 1000, { zone });
  return ICAL.Time.fromData({
    year: local.year,
    month: local.month,
    day: local.day,
    hour: local.hour,
    minute: local.minute,
    second: local.second,
    isDate: false,
  });
}

/** The same for a property's UTC values, then named by the series' TZID (read as `zone`). */
function toWallTime(property: ICAL.Property, tzid: string, zone: string): void {
  if (property.type !== 'date-time' || property.getParameter('tzid') !== undefined) return;
  let values: ICAL.Time[];
  try {
    values = property.getValues() as ICAL.Time[];
  } catch {
    return; // A value that is no date: refused when the event is read.
  }
  if (!values.every((v) => v instanceof ICAL.Time && v.zone === ICAL.Timezone.utcTimezone)) return;
  const wall = values.map((v) => wallTimeIn(v, zone));
  property.setParameter('tzid', tzid);
  if (property.isMultiValue) property.setValues(wall);
  else property.setValue(wall[0]!);
}

/** Whether a TZID names an IANA zone, remembered; a feed names what it likes, so at most this many. */
const MAX_ZONE_NAMES = 1_000;
const ianaZones = new Map<string, boolean>();
function isIanaZone(name: string): boolean {
  let known = ianaZones.get(name);
  if (known === undefined) {
    // Not luxon's setZone, which also takes its own names ("local", "system", "UTC+3"): a feed's
    // TZID "local" is no zone the server's own should stand for.
    known = IANAZone.isValidZone(name);
    if (ianaZones.size >= MAX_ZONE_NAMES) ianaZones.clear();
    ianaZones.set(name, known);
  }
  return known;
}

/**
 * The IANA zone a TZID (or X-WR-TIMEZONE) names, or null: an IANA name itself, else the zone a Windows
 * name stands for (Outlook and Exchange write "W. Europe Standard Time", often without a VTIMEZONE
 * defining it), or another writer's form of one (windows-zones.ts), else a fixed offset from UTC as
 * luxon names one ("UTC+3", "UTC-05:30": that offset, not the staff member's zone).
 */
function namedZone(tzid: string): string | null {
  if (isIanaZone(tzid)) return tzid;
  return zoneOfForeignTzid(tzid, isIanaZone) ?? FixedOffsetZone.parseSpecifier(tzid.trim())?.name ?? null;
}

const PERIOD_MS: Record<string, number> = {
  SECONDLY: 1_000,
  MINUTELY: 60_000,
  HOURLY: 3_600_000,
  DAILY: 86_400_000,
  WEEKLY: 7 * 86_400_000,
};

/**
 * Occurrences are in wall time of the series' zone, the window in UTC: two days' margin around the
 * window covers any zone's offset.
 */
const WALL_TIME_MARGIN_MS = 2 * 86_400_000;

/**
 * A start for expanding a series that began long before the window: its DTSTART moved on by a whole
 * number of its rule's periods (so the same weekdays, times and INTERVAL phase), to before the window
 * by more than the event's length and a period, so that the moved start (an occurrence by
 * definition, whether or not the rule gives it) falls outside the window. Without it, a daily series
 * since 2012 spends four thousand of the file's steps on the past. Null when the rule cannot be
 * moved so: a COUNT (counted from DTSTART), several rules, or months and years (whose lengths vary).
 */
function laterStart(event: ICAL.Event, window: Interval): ICAL.Time | null {
  const rules = event.component.getAllProperties('rrule');
  if (rules.length !== 1) return null;
  const rule = rules[0]!.getFirstValue() as ICAL.Recur;
  const period = PERIOD_MS[rule.freq];
  if (!period || rule.count) return null;
  const start = event.startDate;
  const length = Math.max(0, floatingMs(event.endDate) - floatingMs(start));
  const step = period * (rule.interval || 1);
  const target = Math.min(
    window.start - WALL_TIME_MARGIN_MS - length - step,
    earliestMovedIn(event, window) - step,
  );
  const periods = Math.floor((target - floatingMs(start)) / step);
  if (periods <= 0) return null;
  const later = start.clone();
  const units = periods * (rule.interval || 1);
  if (rule.freq === 'WEEKLY') later.day += 7 * units;
  else if (rule.freq === 'DAILY') later.day += units;
  else if (rule.freq === 'HOURLY') later.hour += units;
  else if (rule.freq === 'MINUTELY') later.minute += units;
  else later.second += units;
  // ical.js normalises a time when it is next read, but copies it unnormalised: left so, every copy
  // the iterator makes would carry the thousands of days added and walk them month by month again.
  later.adjust(0, 0, 0, 0);
  return later;
}

/**
 * The earliest original time (RECURRENCE-ID, as a wall time) of an occurrence of the series that an
 * override moved into the window or after it, or +Infinity: the iterator gives such an occurrence at
 * its original time only, so a series' expansion must not start after it (a meeting of weeks ago moved
 * to next week blocks next week). An override that cannot be read is left to the iterator, as before.
 */
function earliestMovedIn(event: ICAL.Event, window: Interval): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const moved of Object.values(event.exceptions ?? {})) {
    try {
      const original = floatingMs(moved.recurrenceId);
      if (original < earliest && floatingMs(moved.endDate) > window.start - WALL_TIME_MARGIN_MS) {
        earliest = original;
      }
    } catch {
      // Read (and refused, if broken) when the iterator reaches its original time.
    }
  }
  return earliest;
}

/**
 * The end (epoch ms) of an occurrence starting at `start` (the instant `from`) of an event timed by a
 * DURATION, or null for one with a DTEND or an all-day start (ical.js's end stands). RFC 5545 3.3.6 and
 * 3.8.2.5: its weeks and days are nominal (P1D from 10:00 ends at 10:00 the next day, whatever clock
 * change lies between), its hours, minutes and seconds exact (PT2H from 00:30 on the night the clocks
 * go forward ends at 03:30, two hours later). ical.js adds all of them to the wall clock, which on such
 * a night blocked an hour too little, or (clocks back) an hour too much.
 */
function durationEnd(reader: InstantReader, item: ICAL.Event, start: ICAL.Time, from: number): number | null {
  if (start.isDate || item.component.hasProperty('dtend')) return null;
  const duration = item.component.getFirstPropertyValue('duration');
  if (!(duration instanceof ICAL.Duration)) return null;
  const sign = duration.isNegative ? -1 : 1;
  const days = sign * (7 * duration.weeks + duration.days);
  const exactMs = sign * (3_600 * duration.hours + 60 * duration.minutes + duration.seconds) * 1000;
  if (days === 0) return from + exactMs;
  const later = start.clone();
  later.adjust(days, 0, 0, 0);
  return reader.instant(later, zoneOf(item, 'dtstart')) + exactMs;
}

/**
 * Whether an event (or one occurrence's override) takes the time: not when it leaves the time free,
 * is called off, or is an invitation the calendar's owner (when known) declined. One they accepted,
 * may go to (TENTATIVE) or have not answered blocks.
 */
function blocks(event: ICAL.Event, owner: string | null): boolean {
  const transp = String(event.component.getFirstPropertyValue('transp') ?? '').toUpperCase();
  const status = String(event.component.getFirstPropertyValue('status') ?? '').toUpperCase();
  if (transp === 'TRANSPARENT' || status === 'CANCELLED') return false;
  if (owner === null) return true;
  return !event.component.getAllProperties('attendee').some((attendee) => {
    const partstat = String(attendee.getParameter('partstat') ?? '').toUpperCase();
    const address = String(attendee.getFirstValue() ?? '')
      .replace(/^mailto:/i, '')
      .toLowerCase();
    return partstat === 'DECLINED' && address === owner;
  });
}

/** The TZID written on an event's property, if any. */
function zoneOf(event: ICAL.Event, name: 'dtstart' | 'dtend'): string | undefined {
  const tzid = event.component.getFirstProperty(name)?.getParameter('tzid');
  return typeof tzid === 'string' && tzid !== '' ? tzid : undefined;
}

/** A time's fields read as if in UTC: only for comparing wall times roughly. */
function floatingMs(time: ICAL.Time): number {
  return Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
}

/**
 * The offset (ms) a zone the file defines (VTIMEZONE) has at an instant: that of the last change at or
 * before it. Not ical.js's convertToZone: it looks the offset up by the UTC fields read as a wall time,
 * hours off around a change (New York's, Lord Howe's), so a repeated time's twin went unfound.
 */
function definedOffsetMs(instant: number, zone: ICAL.Timezone): number {
  const year = new Date(instant).getUTCFullYear();
  // utcOffset expands the zone's changes through the year asked (and a few more), sorted, in UTC.
  zone.utcOffset(ICAL.Time.fromData({ year: year + 1, month: 1, day: 1, isDate: true }));
  const changes = zone.changes as ZoneChange[];
  let offset = changes[0]?.prevUtcOffset ?? 0;
  for (const change of changes) {
    const at = Date.UTC(change.year, change.month - 1, change.day, change.hour, change.minute, change.second);
    if (at > instant) break;
    offset = change.utcOffset;
  }
  return offset * 1000;
}

/** One change of a defined zone as ical.js keeps it: its instant in UTC fields, offsets in seconds. */
interface ZoneChange {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  utcOffset: number;
  prevUtcOffset: number;
}

/** How far from a wall time its twin can be: a change of up to 3 hours. */
const TWIN_PROBES_MS = [-3 * 3_600_000, 3 * 3_600_000];

/**
 * The first instant whose wall clock reads as `read`'s does, in a zone given by its offsets: a wall
 * time the clocks show twice is its first occurrence (RFC 5545 3.3.5), whichever the reader took.
 */
function firstOccurrence(read: number, offsetMs: (instant: number) => number): number {
  const own = offsetMs(read);
  let first = read;
  for (const probe of TWIN_PROBES_MS) {
    const other = offsetMs(read + probe);
    if (other === own) continue;
    const twin = read + own - other;
    if (twin < first && offsetMs(twin) === other) first = twin;
  }
  return first;
}

class InstantReader {
  readonly #zones: Map<string, ICAL.Timezone>;
  /** Where all-day dates are read: the staff member's location's zone. */
  readonly #fallback: string;
  /** Where a time with no zone to read it by is read: the calendar's own, else the location's. */
  readonly #timesZone: string;

  constructor(zones: Map<string, ICAL.Timezone>, fallback: string, timesZone: string = fallback) {
    this.#zones = zones;
    this.#fallback = fallback;
    this.#timesZone = timesZone;
  }

  /** Whether the calendar defines this TZID (a VTIMEZONE of its own). */
  defines(tzid: string): boolean {
    return this.#zones.has(tzid);
  }

  /** Epoch milliseconds of a time as the file means it. */
  instant(time: ICAL.Time, tzid: string | undefined): number {
    if (time.zone === ICAL.Timezone.utcTimezone && !time.isDate) return time.toUnixTime() * 1000;
    const defined = tzid === undefined ? undefined : this.#zones.get(tzid);
    const fields = {
      year: time.year,
      month: time.month,
      day: time.day,
      hour: time.isDate ? 0 : time.hour,
      minute: time.isDate ? 0 : time.minute,
      second: time.isDate ? 0 : time.second,
    };
    if (defined && !time.isDate) {
      const read = ICAL.Time.fromData({ ...fields, isDate: false }, defined).toUnixTime() * 1000;
      const offsetMs = (instant: number) => definedOffsetMs(instant, defined);
      // A wall time the clocks skip: ical.js reads it with the offset after the gap; RFC 5545 3.3.5 (and
      // the IANA reading below) with the one before, which is the offset in force at ical.js's instant.
      const wall = Date.UTC(
        fields.year,
        fields.month - 1,
        fields.day,
        fields.hour,
        fields.minute,
        fields.second,
      );
      const before = offsetMs(read);
      return firstOccurrence(read + before === wall ? read : wall - before, offsetMs);
    }
    const zone = time.isDate ? this.#fallback : (tzid !== undefined && namedZone(tzid)) || this.#timesZone;
    // Fields may run over (an all-day event's end is its start's day + 1): Date.UTC carries them.
    const wall = new Date(
      Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second),
    );
    const read = DateTime.fromObject(
      {
        year: wall.getUTCFullYear(),
        month: wall.getUTCMonth() + 1,
        day: wall.getUTCDate(),
        hour: wall.getUTCHours(),
        minute: wall.getUTCMinutes(),
        second: wall.getUTCSeconds(),
      },
      { zone },
    ).toMillis();
    // A wall time the clocks show twice is its first occurrence (RFC 5545 3.3.5); luxon takes the
    // second in some zones (London, New York), which left the first pass of a busy hour free. One in a
    // gap is read with the offset before it, as luxon does and RFC 5545 says.
    const twin = twinInstant(read, zone);
    return twin !== null && twin < read ? twin : read;
  }
}

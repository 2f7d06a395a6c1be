import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  BusyCalendarError,
  busyTimes,
  calendarOwner,
  MAX_BUSY_INTERVALS,
  readBusyCalendar,
} from '../../src/app/calendars/busy-times.ts';
import { windowsZoneNames } from '../../src/app/calendars/windows-zones.ts';
import { ics } from '../helpers/calendar-server.ts';

const WINDOW = { start: Date.parse('2026-11-01T00:00:00Z'), end: Date.parse('2027-12-01T00:00:00Z') };
const iso = (intervals: { start: number; end: number }[]) =>
  intervals.map((i) => [new Date(i.start).toISOString(), new Date(i.end).toISOString()]);
const event = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20261101T000000Z', ...lines, 'END:VEVENT'];

describe('busyTimes (ical.js)', () => {
  it('reads all-day and floating times in the staff member’s zone', () => {
    const text = ics(
      ...event('UID:a', 'DTSTART;VALUE=DATE:20270701', 'DTEND;VALUE=DATE:20270703'),
      ...event('UID:b', 'DTSTART:20261202T090000', 'DURATION:PT30M'),
    );
    expect(iso(busyTimes(text, WINDOW, 'Europe/London'))).toEqual([
      ['2027-06-30T23:00:00.000Z', '2027-07-02T23:00:00.000Z'],
      ['2026-12-02T09:00:00.000Z', '2026-12-02T09:30:00.000Z'],
    ]);
  });

  it('reads a TZID or calendar zone of luxon’s own words (“local”, “system”) in the staff member’s zone, not the server’s', () => {
    // Chatham is +13:45 in December: no server's own zone.
    const text = ics(
      'X-WR-TIMEZONE:system',
      ...event('UID:a', 'DTSTART;TZID=local:20261202T090000', 'DURATION:PT30M'),
      ...event('UID:b', 'DTSTART:20261203T090000', 'DURATION:PT30M'),
    );
    expect(iso(busyTimes(text, WINDOW, 'Pacific/Chatham'))).toEqual([
      ['2026-12-01T19:15:00.000Z', '2026-12-01T19:45:00.000Z'],
      ['2026-12-02T19:15:00.000Z', '2026-12-02T19:45:00.000Z'],
    ]);
  });

  it('reads a TZID of a fixed offset (“UTC+3”) at that offset, and one named like an Object member as no zone', () => {
    const text = ics(
      'X-WR-TIMEZONE:UTC-05:30',
      ...event('UID:a', 'DTSTART;TZID=UTC+3:20261202T090000', 'DURATION:PT30M'),
      ...event('UID:b', 'DTSTART:20261203T090000', 'DURATION:PT30M'),
      ...event('UID:c', 'DTSTART;TZID=constructor:20261204T090000', 'DURATION:PT30M'),
      ...event('UID:d', 'DTSTART;TZID=__proto__:20261205T090000', 'DURATION:PT30M'),
    );
    expect(iso(busyTimes(text, WINDOW, 'Europe/London'))).toEqual([
      ['2026-12-02T06:00:00.000Z', '2026-12-02T06:30:00.000Z'],
      ['2026-12-03T14:30:00.000Z', '2026-12-03T15:00:00.000Z'],
      ['2026-12-04T14:30:00.000Z', '2026-12-04T15:00:00.000Z'],
      ['2026-12-05T14:30:00.000Z', '2026-12-05T15:00:00.000Z'],
    ]);
  });

  it('reads floating times in the calendar’s own zone (X-WR-TIMEZONE), all-day dates in the staff member’s', () => {
    const text = ics(
      'X-WR-TIMEZONE:America/New_York',
      ...event('UID:f', 'DTSTART:20261202T090000', 'DURATION:PT30M'),
      ...event('UID:g', 'DTSTART;VALUE=DATE:20261203', 'DTEND;VALUE=DATE:20261204'),
      ...event('UID:h', 'DTSTART:20261204T090000Z', 'DURATION:PT30M'),
    );
    expect(iso(busyTimes(text, WINDOW, 'Europe/London'))).toEqual([
      ['2026-12-02T14:00:00.000Z', '2026-12-02T14:30:00.000Z'],
      ['2026-12-03T00:00:00.000Z', '2026-12-04T00:00:00.000Z'],
      ['2026-12-04T09:00:00.000Z', '2026-12-04T09:30:00.000Z'],
    ]);
    // A name that is no zone leaves the staff member's.
    const unknown = text.replace('America/New_York', 'Somewhere/Else');
    expect(iso(busyTimes(unknown, WINDOW, 'Europe/London'))[0]).toEqual([
      '2026-12-02T09:00:00.000Z',
      '2026-12-02T09:30:00.000Z',
    ]);
  });

  it('drops one occurrence cancelled by its override, and keeps an override whose series is absent', () => {
    const text = ics(
      ...event('UID:s', 'DTSTART:20261201T100000Z', 'DTEND:20261201T110000Z', 'RRULE:FREQ=DAILY;COUNT=3'),
      ...event(
        'UID:s',
        'RECURRENCE-ID:20261202T100000Z',
        'DTSTART:20261202T100000Z',
        'DTEND:20261202T110000Z',
        'STATUS:CANCELLED',
      ),
      ...event(
        'UID:o',
        'RECURRENCE-ID:20261210T100000Z',
        'DTSTART:20261210T120000Z',
        'DTEND:20261210T130000Z',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC'))).toEqual([
      ['2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z'],
      ['2026-12-03T10:00:00.000Z', '2026-12-03T11:00:00.000Z'],
      ['2026-12-10T12:00:00.000Z', '2026-12-10T13:00:00.000Z'],
    ]);
  });

  it('reads a free/busy publication (VFREEBUSY): each period but the free ones, clipped to the window', () => {
    const text = ics(
      'BEGIN:VFREEBUSY',
      'DTSTAMP:20261101T000000Z',
      'DTSTART:20261001T000000Z',
      'DTEND:20261231T000000Z',
      // Two periods in one property, one by its end and one by its duration; one from before the window.
      'FREEBUSY:20261202T100000Z/20261202T110000Z,20261203T100000Z/PT1H30M',
      'FREEBUSY;FBTYPE=BUSY-TENTATIVE:20261204T090000Z/20261204T093000Z',
      'FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:20261031T220000Z/20261101T020000Z',
      'FREEBUSY;FBTYPE=FREE:20261205T090000Z/20261205T170000Z',
      // Not UTC, as RFC 5545 asks, but in a zone it names: read there, as an event's time would be.
      'FREEBUSY;TZID=America/New_York:20261207T100000/PT1H',
      'END:VFREEBUSY',
      ...event('UID:e', 'DTSTART:20261206T100000Z', 'DTEND:20261206T110000Z'),
    );
    expect(iso(busyTimes(text, WINDOW, 'Europe/London'))).toEqual([
      ['2026-12-02T10:00:00.000Z', '2026-12-02T11:00:00.000Z'],
      ['2026-12-03T10:00:00.000Z', '2026-12-03T11:30:00.000Z'],
      ['2026-12-04T09:00:00.000Z', '2026-12-04T09:30:00.000Z'],
      ['2026-11-01T00:00:00.000Z', '2026-11-01T02:00:00.000Z'],
      ['2026-12-07T15:00:00.000Z', '2026-12-07T16:00:00.000Z'],
      ['2026-12-06T10:00:00.000Z', '2026-12-06T11:00:00.000Z'],
    ]);
    // A period that is no period refuses the copy, as an event's broken date does.
    const broken = ics('BEGIN:VFREEBUSY', 'DTSTAMP:20261101T000000Z', 'FREEBUSY:tomorrow', 'END:VFREEBUSY');
    expect(() => busyTimes(broken, WINDOW, 'UTC')).toThrow(BusyCalendarError);
  });

  it('clips to the window and stops an endless rule at its end', () => {
    const text = ics(
      ...event('UID:d', 'DTSTART:20200101T100000Z', 'DTEND:20200101T110000Z', 'RRULE:FREQ=DAILY'),
    );
    const busy = busyTimes(text, WINDOW, 'UTC');
    expect(busy.length).toBe(395);
    expect(iso(busy.slice(0, 1))).toEqual([['2026-11-01T10:00:00.000Z', '2026-11-01T11:00:00.000Z']]);
  });

  it('refuses a file that is not a calendar, or gives too many busy times', () => {
    expect(() => busyTimes('<html></html>', WINDOW, 'UTC')).toThrow(BusyCalendarError);
    const minutely = ics(
      ...event('UID:m', 'DTSTART:20261101T000000Z', 'DURATION:PT1M', 'RRULE:FREQ=MINUTELY;INTERVAL=2'),
    );
    expect(() => busyTimes(minutely, WINDOW, 'UTC')).toThrow(`more than ${MAX_BUSY_INTERVALS} busy times`);
  });

  it('reads a DURATION’s days as nominal and its hours as exact across a clock change (RFC 5545 3.3.6)', () => {
    // London goes forward on Sunday 28 March 2027 and back on Sunday 31 October 2027.
    const window = { start: Date.parse('2027-03-01T00:00:00Z'), end: Date.parse('2027-12-01T00:00:00Z') };
    const text = ics(
      ...event('UID:a', 'DTSTART;TZID=Europe/London:20270328T003000', 'DURATION:PT2H'),
      ...event('UID:b', 'DTSTART;TZID=Europe/London:20270327T120000', 'DURATION:PT24H'),
      ...event('UID:c', 'DTSTART;TZID=Europe/London:20271030T100000', 'DURATION:P1DT2H'),
      ...event('UID:d', 'DTSTART:20271031T003000', 'DURATION:PT1H'),
      ...event('UID:e', 'DTSTART;VALUE=DATE:20271030', 'DURATION:P2D'),
    );
    expect(iso(busyTimes(text, window, 'Europe/London'))).toEqual([
      // 00:30 GMT + 2 h = 03:30 BST.
      ['2027-03-28T00:30:00.000Z', '2027-03-28T02:30:00.000Z'],
      // Saturday 12:00 GMT + 24 h = Sunday 13:00 BST.
      ['2027-03-27T12:00:00.000Z', '2027-03-28T12:00:00.000Z'],
      // Saturday 10:00 BST, a day on (Sunday 10:00 GMT), 2 h more: 12:00 GMT.
      ['2027-10-30T09:00:00.000Z', '2027-10-31T12:00:00.000Z'],
      // Floating, in the staff member's zone: the first 00:30 (BST) + 1 h = 00:30 GMT.
      ['2027-10-30T23:30:00.000Z', '2027-10-31T00:30:00.000Z'],
      // All day, two days: Saturday and Sunday, local midnight to local midnight.
      ['2027-10-29T23:00:00.000Z', '2027-11-01T00:00:00.000Z'],
    ]);
  });

  it('matches an EXDATE or RECURRENCE-ID written in UTC to a series in an IANA zone the file does not define', () => {
    // 09:00 New York (13:00 UTC in June): the 15th excluded by its UTC instant, the 16th moved to 15:00.
    const text = ics(
      ...event(
        'UID:ny',
        'DTSTART;TZID=America/New_York:20270614T090000',
        'DTEND;TZID=America/New_York:20270614T100000',
        'RRULE:FREQ=DAILY;COUNT=4',
        'EXDATE:20270615T130000Z',
      ),
      ...event(
        'UID:ny',
        'RECURRENCE-ID:20270616T130000Z',
        'DTSTART;TZID=America/New_York:20270616T150000',
        'DTEND;TZID=America/New_York:20270616T160000',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC'))).toEqual([
      ['2027-06-14T13:00:00.000Z', '2027-06-14T14:00:00.000Z'],
      ['2027-06-16T19:00:00.000Z', '2027-06-16T20:00:00.000Z'],
      ['2027-06-17T13:00:00.000Z', '2027-06-17T14:00:00.000Z'],
    ]);
  });

  it('ends a series in an IANA zone the file does not define at its UNTIL written in UTC, that occurrence included', () => {
    // Tuesdays 09:00 Berlin (08:00 UTC in winter) until the 19th's occurrence, and daily 01:00 New York
    // (06:00 UTC) until 03:00 UTC on the 6th (22:00 on the 5th there): RFC 5545 writes UNTIL in UTC
    // when DTSTART has a TZID. Read as wall times, the 19th would be left free and the 6th kept busy.
    const text = ics(
      ...event(
        'UID:berlin',
        'DTSTART;TZID=Europe/Berlin:20270105T090000',
        'DTEND;TZID=Europe/Berlin:20270105T100000',
        'RRULE:FREQ=WEEKLY;UNTIL=20270119T080000Z',
      ),
      ...event(
        'UID:ny',
        'DTSTART;TZID=America/New_York:20270104T010000',
        'DTEND;TZID=America/New_York:20270104T020000',
        'RRULE:FREQ=DAILY;UNTIL=20270106T030000Z',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC')).sort()).toEqual([
      ['2027-01-04T06:00:00.000Z', '2027-01-04T07:00:00.000Z'],
      ['2027-01-05T06:00:00.000Z', '2027-01-05T07:00:00.000Z'],
      ['2027-01-05T08:00:00.000Z', '2027-01-05T09:00:00.000Z'],
      ['2027-01-12T08:00:00.000Z', '2027-01-12T09:00:00.000Z'],
      ['2027-01-19T08:00:00.000Z', '2027-01-19T09:00:00.000Z'],
    ]);
  });

  it('reads a zone named as Outlook, Exchange or an older export names it, with no VTIMEZONE defining it', () => {
    // A Windows name (Eastern: 09:00 is 14:00 UTC, 13:00 once New York's clocks went forward on the
    // 14th of March), its series' EXDATE and UNTIL in UTC; Outlook's "tzone://Microsoft/Utc"; a Mozilla
    // Lightning prefix; a calendar's own zone given by its Windows name. Each was read in the staff
    // member's zone (New York here), hours off. Every Windows name known stands for a zone there is.
    const text = ics(
      'X-WR-TIMEZONE:Romance Standard Time',
      ...event(
        'UID:eastern',
        'DTSTART;TZID=Eastern Standard Time:20270312T090000',
        'DTEND;TZID=Eastern Standard Time:20270312T100000',
        'RRULE:FREQ=DAILY;UNTIL=20270315T130000Z',
        'EXDATE:20270313T140000Z',
      ),
      ...event('UID:utc', 'DTSTART;TZID="tzone://Microsoft/Utc":20261202T090000', 'DURATION:PT1H'),
      ...event(
        'UID:mozilla',
        'DTSTART;TZID=/mozilla.org/20050126_1/Europe/Berlin:20261203T090000',
        'DURATION:PT1H',
      ),
      ...event('UID:floating', 'DTSTART:20261204T090000', 'DURATION:PT1H'),
    );
    expect(iso(busyTimes(text, WINDOW, 'America/New_York')).sort()).toEqual([
      ['2026-12-02T09:00:00.000Z', '2026-12-02T10:00:00.000Z'],
      ['2026-12-03T08:00:00.000Z', '2026-12-03T09:00:00.000Z'],
      ['2026-12-04T08:00:00.000Z', '2026-12-04T09:00:00.000Z'],
      ['2027-03-12T14:00:00.000Z', '2027-03-12T15:00:00.000Z'],
      ['2027-03-14T13:00:00.000Z', '2027-03-14T14:00:00.000Z'],
      ['2027-03-15T13:00:00.000Z', '2027-03-15T14:00:00.000Z'],
    ]);
    for (const [name, zone] of windowsZoneNames) {
      expect(DateTime.now().setZone(zone).isValid, `${name}: ${zone}`).toBe(true);
    }
  });
  it('reads an RDATE given as a period (its own start and end), EXDATE and overrides applying to it', () => {
    const text = ics(
      ...event(
        'UID:p',
        'DTSTART;TZID=Europe/Berlin:20261201T090000',
        'DTEND;TZID=Europe/Berlin:20261201T100000',
        'RDATE;VALUE=PERIOD:20261203T120000Z/20261203T150000Z,20261204T120000Z/PT30M',
        'RDATE;TZID=Europe/Berlin;VALUE=PERIOD:20261207T080000/PT2H,20261208T080000/PT2H',
        'RDATE;TZID=Europe/Berlin:20261209T090000',
        'EXDATE:20261204T120000Z',
      ),
      ...event(
        'UID:p',
        'RECURRENCE-ID;TZID=Europe/Berlin:20261208T080000',
        'DTSTART;TZID=Europe/Berlin:20261208T160000',
        'DTEND;TZID=Europe/Berlin:20261208T170000',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC')).sort()).toEqual([
      ['2026-12-01T08:00:00.000Z', '2026-12-01T09:00:00.000Z'],
      ['2026-12-03T12:00:00.000Z', '2026-12-03T15:00:00.000Z'],
      ['2026-12-07T07:00:00.000Z', '2026-12-07T09:00:00.000Z'],
      ['2026-12-08T15:00:00.000Z', '2026-12-08T16:00:00.000Z'],
      ['2026-12-09T08:00:00.000Z', '2026-12-09T09:00:00.000Z'],
    ]);
  });

  it('applies an override only to the series of its UID', () => {
    // Two series at the same times: the first called off on the 2nd, the second moved on the 3rd.
    const text = ics(
      ...event('UID:a', 'DTSTART:20261201T100000Z', 'DTEND:20261201T110000Z', 'RRULE:FREQ=DAILY;COUNT=3'),
      ...event('UID:b', 'DTSTART:20261201T100000Z', 'DTEND:20261201T103000Z', 'RRULE:FREQ=DAILY;COUNT=3'),
      ...event(
        'UID:a',
        'RECURRENCE-ID:20261202T100000Z',
        'DTSTART:20261202T100000Z',
        'DTEND:20261202T110000Z',
        'STATUS:CANCELLED',
      ),
      ...event(
        'UID:b',
        'RECURRENCE-ID:20261203T100000Z',
        'DTSTART:20261203T150000Z',
        'DTEND:20261203T153000Z',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC')).sort()).toEqual([
      ['2026-12-01T10:00:00.000Z', '2026-12-01T10:30:00.000Z'],
      ['2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z'],
      ['2026-12-02T10:00:00.000Z', '2026-12-02T10:30:00.000Z'],
      ['2026-12-03T10:00:00.000Z', '2026-12-03T11:00:00.000Z'],
      ['2026-12-03T15:00:00.000Z', '2026-12-03T15:30:00.000Z'],
    ]);
  });

  it('reads a file of many events in time linear in their number', () => {
    const file = (count: number) =>
      ics(
        ...Array.from({ length: count }, (_, i) =>
          event(
            `UID:e${i}`,
            `DTSTART:202701${String(1 + (i % 28)).padStart(2, '0')}T100000Z`,
            'DURATION:PT1H',
          ),
        ).flat(),
      );
    // The least CPU time of three reads (what the machine's other work and collections add is not the
    // reading's), of a file four times as large: about four times as long if linear, sixteen if quadratic.
    const cpuMs = (text: string, count: number) =>
      Math.min(
        ...[1, 2, 3].map(() => {
          const started = process.cpuUsage();
          expect(busyTimes(text, WINDOW, 'UTC')).toHaveLength(count);
          const { user, system } = process.cpuUsage(started);
          return (user + system) / 1000;
        }),
      );
    const small = cpuMs(file(2000), 2000);
    const large = cpuMs(file(8000), 8000);
    expect(large / small).toBeLessThan(8);
  });

  it('refuses a sparse or impossible rule in bounded time, not after minutes of ical.js looking', () => {
    for (const rule of ['FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30', 'FREQ=SECONDLY;BYMONTH=12']) {
      const text = ics(...event('UID:x', 'DTSTART:20261101T000000Z', 'DURATION:PT1M', `RRULE:${rule}`));
      // CPU time, as the bound counts it: the wall clock also counts the machine's other work.
      const started = process.cpuUsage();
      expect(() => busyTimes(text, WINDOW, 'UTC')).toThrow(BusyCalendarError);
      const { user, system } = process.cpuUsage(started);
      expect((user + system) / 1000).toBeLessThan(5_000);
    }
  });

  it('reads series that began long before the window without spending its bounds on the past', () => {
    // Forty daily series since 2012, a weekly one every other Tuesday since 1995 (its weeks kept).
    const daily = Array.from({ length: 40 }, (_, i) =>
      event(`UID:d${i}`, 'DTSTART:20120101T100000Z', 'DURATION:PT30M', 'RRULE:FREQ=DAILY'),
    ).flat();
    const text = ics(
      ...daily,
      ...event('UID:w', 'DTSTART:19950103T080000Z', 'DURATION:PT1H', 'RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU'),
    );
    const busy = busyTimes(text, WINDOW, 'UTC');
    expect(busy.filter((b) => new Date(b.start).getUTCHours() === 10)).toHaveLength(40 * 395);
    const weekly = iso(busy.filter((b) => new Date(b.start).getUTCHours() === 8));
    expect(weekly.slice(0, 2)).toEqual([
      ['2026-11-10T08:00:00.000Z', '2026-11-10T09:00:00.000Z'],
      ['2026-11-24T08:00:00.000Z', '2026-11-24T09:00:00.000Z'],
    ]);
  });

  it('keeps busy an occurrence of a long-running series moved from weeks back into the window', () => {
    // A weekly meeting since 2020, the one of 5 October 2026 (before the window) moved to 2 December.
    const text = ics(
      ...event('UID:m', 'DTSTART:20200106T090000Z', 'DURATION:PT1H', 'RRULE:FREQ=WEEKLY'),
      ...event('UID:m', 'RECURRENCE-ID:20261005T090000Z', 'DTSTART:20261202T150000Z', 'DURATION:PT1H'),
      // A daily one since 2012, its 20 October moved to 3 November.
      ...event('UID:d', 'DTSTART:20120101T070000Z', 'DURATION:PT30M', 'RRULE:FREQ=DAILY'),
      ...event('UID:d', 'RECURRENCE-ID:20261020T070000Z', 'DTSTART:20261103T180000Z', 'DURATION:PT30M'),
    );
    const busy = iso(busyTimes(text, WINDOW, 'UTC'));
    expect(busy).toContainEqual(['2026-12-02T15:00:00.000Z', '2026-12-02T16:00:00.000Z']);
    expect(busy).toContainEqual(['2026-11-03T18:00:00.000Z', '2026-11-03T18:30:00.000Z']);
    // The rest of each series as the rule gives it, from the window's start.
    expect(busy.filter(([start]) => start!.endsWith('T09:00:00.000Z'))[0]).toEqual([
      '2026-11-02T09:00:00.000Z',
      '2026-11-02T10:00:00.000Z',
    ]);
    expect(busy.filter(([start]) => start!.endsWith('T07:00:00.000Z'))).toHaveLength(395);
  });

  it('reads series begun a century ago at the cost of recent ones, well inside its CPU bound', () => {
    // Each occurrence is copied from the moved start: left unnormalised, every copy walked the
    // 1,500 months since 1900 again, and these 24 series cost several seconds and were refused.
    const text = ics(
      ...Array.from({ length: 24 }, (_, i) =>
        event(`UID:c${i}`, 'DTSTART:19000101T100000Z', 'DURATION:PT30M', 'RRULE:FREQ=DAILY'),
      ).flat(),
    );
    const busy = busyTimes(text, WINDOW, 'UTC');
    expect(busy).toHaveLength(24 * 395);
    expect(iso(busy.slice(0, 1))).toEqual([['2026-11-01T10:00:00.000Z', '2026-11-01T10:30:00.000Z']]);
  });
});

describe('readBusyCalendar: years ahead, the nearest first, under the one file’s bounds', () => {
  const NOW = Date.parse('2026-11-23T09:00:00Z');
  const DAY = 86_400_000;
  // As the refresher reads for a location taking bookings 3660 days ahead: a first pass of the year
  // it always read (a day back, 366 ahead), then passes of as long.
  const TEN_YEARS = { start: NOW - DAY, end: NOW + 3662 * DAY };
  const PASS = 367 * DAY;

  it('reads what busyTimes reads over the whole window, an occurrence moved across a pass kept once', () => {
    const text = ics(
      ...event('UID:w', 'DTSTART:20261124T100000Z', 'DURATION:PT1H', 'RRULE:FREQ=WEEKLY'),
      // The first pass ends on 24 November 2027 at 09:00: the occurrence of 30 November 2027 (in the
      // second pass) moved back into the first, and that of 16 November 2027 (in the first) moved on
      // into the second.
      ...event('UID:w', 'RECURRENCE-ID:20271130T100000Z', 'DTSTART:20271122T150000Z', 'DURATION:PT1H'),
      ...event('UID:w', 'RECURRENCE-ID:20271116T100000Z', 'DTSTART:20271126T150000Z', 'DURATION:PT1H'),
      ...event('UID:far', 'DTSTART:20340301T090000Z', 'DURATION:PT2H'),
      ...event('UID:m', 'DTSTART:20000115T120000Z', 'DURATION:PT1H', 'RRULE:FREQ=MONTHLY'),
    );
    const read = readBusyCalendar(text, TEN_YEARS, 'UTC', PASS);
    expect(read).toMatchObject({ readUntil: TEN_YEARS.end, shortBy: null });
    const whole = busyTimes(text, TEN_YEARS, 'UTC');
    expect(iso(read.busy).sort()).toEqual(iso(whole).sort());
    const busy = iso(read.busy);
    expect(busy).toContainEqual(['2027-11-22T15:00:00.000Z', '2027-11-22T16:00:00.000Z']);
    expect(busy).toContainEqual(['2027-11-26T15:00:00.000Z', '2027-11-26T16:00:00.000Z']);
    expect(busy).not.toContainEqual(['2027-11-30T10:00:00.000Z', '2027-11-30T11:00:00.000Z']);
    expect(busy).not.toContainEqual(['2027-11-16T10:00:00.000Z', '2027-11-16T11:00:00.000Z']);
    expect(busy).toContainEqual(['2034-03-01T09:00:00.000Z', '2034-03-01T11:00:00.000Z']);
    expect(busy).toContainEqual(['2036-11-25T10:00:00.000Z', '2036-11-25T11:00:00.000Z']);
    expect(busy.filter(([start]) => start!.endsWith('T12:00:00.000Z'))).toHaveLength(120);
  });

  it('keeps the passes before a bound reached further ahead, and says where it stopped', () => {
    // Every hour: 8,808 busy times a pass, past MAX_BUSY_INTERVALS in the third.
    const text = ics(...event('UID:h', 'DTSTART:20261101T000000Z', 'DURATION:PT30M', 'RRULE:FREQ=HOURLY'));
    expect(() => busyTimes(text, TEN_YEARS, 'UTC')).toThrow(`more than ${MAX_BUSY_INTERVALS} busy times`);
    const read = readBusyCalendar(text, TEN_YEARS, 'UTC', PASS);
    const thirdPass = TEN_YEARS.start + 2 * PASS;
    expect(read.shortBy).toBe(`more than ${MAX_BUSY_INTERVALS} busy times in the window kept`);
    expect(read.readUntil).toBe(thirdPass - DAY);
    expect(read.busy.length).toBeLessThanOrEqual(MAX_BUSY_INTERVALS);
    expect(read.busy.at(-1)!.start).toBeLessThan(thirdPass);
    expect(read.busy.at(-1)!.start).toBeGreaterThan(thirdPass - 2 * 3_600_000);
    // The year to come is read whole, as it always was.
    expect(iso(read.busy.filter((b) => b.start < NOW + 366 * DAY))).toEqual(
      iso(busyTimes(text, { start: NOW - DAY, end: NOW + 366 * DAY }, 'UTC')),
    );
  });

  it('keeps an occurrence a later, unread pass moved back into the passes read', () => {
    // Hourly busy times reach the bound in the third pass (from 25 November 2028); the weekly series'
    // occurrence of Tuesday 28 November 2028, in that pass, was moved back to 15 June 2027.
    const text = ics(
      ...event('UID:h', 'DTSTART:20261101T000000Z', 'DURATION:PT30M', 'RRULE:FREQ=HOURLY'),
      ...event('UID:w', 'DTSTART:20261124T100000Z', 'DURATION:PT1H', 'RRULE:FREQ=WEEKLY'),
      ...event('UID:w', 'RECURRENCE-ID:20281128T100000Z', 'DTSTART:20270615T154000Z', 'DURATION:PT10M'),
      // Moved back into the unread part: not kept (the read says it stops before it).
      ...event('UID:w', 'RECURRENCE-ID:20281205T100000Z', 'DTSTART:20281201T154000Z', 'DURATION:PT10M'),
    );
    const read = readBusyCalendar(text, TEN_YEARS, 'UTC', PASS);
    expect(read.readUntil).toBe(TEN_YEARS.start + 2 * PASS - DAY);
    const busy = iso(read.busy);
    expect(busy).toContainEqual(['2027-06-15T15:40:00.000Z', '2027-06-15T15:50:00.000Z']);
    expect(busy).not.toContainEqual(['2028-12-01T15:40:00.000Z', '2028-12-01T15:50:00.000Z']);
    expect(read.busy.every((b) => b.start < TEN_YEARS.start + 2 * PASS)).toBe(true);
  });

  it('refuses, in bounded time, what the first pass cannot read, however far the window reaches', () => {
    const minutely = ics(
      ...event('UID:x', 'DTSTART:20261201T000000Z', 'DURATION:PT1M', 'RRULE:FREQ=MINUTELY'),
    );
    expect(() => readBusyCalendar(minutely, TEN_YEARS, 'UTC', PASS)).toThrow(BusyCalendarError);
    // A rule of leap days, found by the second; a daily time found by the second, which a year of
    // takes about as long as the bound allows (refused, or read in part).
    for (const rule of [
      'FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29',
      'FREQ=SECONDLY;BYHOUR=3;BYMINUTE=0;BYSECOND=0',
    ]) {
      const text = ics(...event('UID:x', 'DTSTART:20261101T000000Z', 'DURATION:PT1M', `RRULE:${rule}`));
      const started = process.cpuUsage();
      try {
        const read = readBusyCalendar(text, TEN_YEARS, 'UTC', PASS);
        // Read in part (the bound reached in a later pass): what it kept is the year to come at least.
        expect(read.readUntil).toBeGreaterThanOrEqual(TEN_YEARS.start + PASS - DAY);
      } catch (error) {
        expect(error).toBeInstanceOf(BusyCalendarError);
      }
      const { user, system } = process.cpuUsage(started);
      expect((user + system) / 1000, rule).toBeLessThan(5_000);
    }
  });
});

describe('calendarOwner: whose declined invitations leave the time free', () => {
  it('is the address a Google secret or public address names, and no one for any other calendar', () => {
    const google = 'https://calendar.google.com/calendar/ical';
    expect(calendarOwner(`${google}/Ana.Stylist%40gmail.com/private-0a1b2c3d4e5f/basic.ics`)).toBe(
      'ana.stylist@gmail.com',
    );
    expect(calendarOwner(`${google}/ana%40salon.co.uk/public/basic.ics`)).toBe('ana@salon.co.uk');
    // A shared calendar (its id is no one's address), a path of another shape, an id that is no address.
    expect(calendarOwner(`${google}/c_1a2b3c%40group.calendar.google.com/private-0a1b/basic.ics`)).toBeNull();
    expect(calendarOwner('https://p58-caldav.icloud.com/published/2/MTk4NzY1NDMy')).toBeNull();
    expect(calendarOwner('https://outlook.office365.com/owa/calendar/a@b.com/c1d2/calendar.ics')).toBeNull();
    expect(calendarOwner(`${google}/%E0%A4%A/private-0a1b/basic.ics`)).toBeNull();
    expect(calendarOwner(`${google}/holidays/private-0a1b/basic.ics`)).toBeNull();
  });

  it('leaves free only the invitations that owner declined', () => {
    const text = ics(
      ...event(
        'UID:i',
        'DTSTART:20261201T100000Z',
        'DTEND:20261201T110000Z',
        'ATTENDEE;PARTSTAT=DECLINED;CN=Ana:MAILTO:Ana@Example.com',
      ),
      ...event(
        'UID:j',
        'DTSTART:20261202T100000Z',
        'DTEND:20261202T110000Z',
        'ATTENDEE;PARTSTAT=DECLINED:mailto:bob@example.com',
        'ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:ana@example.com',
      ),
    );
    expect(iso(busyTimes(text, WINDOW, 'UTC', 'ana@example.com'))).toEqual([
      ['2026-12-02T10:00:00.000Z', '2026-12-02T11:00:00.000Z'],
    ]);
    // No owner known: every event blocks, as before.
    expect(busyTimes(text, WINDOW, 'UTC')).toHaveLength(2);
  });
});

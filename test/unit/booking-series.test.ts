import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  followingMove,
  seriesOccurrences,
  seriesSpanDays,
  wallTimeOf,
  withSeriesHorizon,
} from '../../src/domain/booking/series.ts';
import { usualOf, type Visit } from '../../src/domain/booking/usual.ts';
import { formatLocal } from '../../src/domain/time-format.ts';

const local = (starts: readonly (number | null)[], zone: string) =>
  starts.map((s) => (s === null ? null : formatLocal(s, zone)));

describe('seriesOccurrences: the same local wall time on every date', () => {
  it('keeps 10:00 in London across the spring change (GMT then BST)', () => {
    const first = Date.parse('2027-03-16T10:00:00Z');
    const occurrences = seriesOccurrences(first, 'Europe/London', { everyWeeks: 2, count: 3 });
    expect(
      local(
        occurrences.map((o) => o.startsAt),
        'Europe/London',
      ),
    ).toEqual(['2027-03-16T10:00:00+00:00', '2027-03-30T10:00:00+01:00', '2027-04-13T10:00:00+01:00']);
    expect(occurrences.map((o) => o.position)).toEqual([1, 2, 3]);
  });

  it('keeps 09:30 in New York across the autumn change', () => {
    const first = Date.parse('2026-10-27T13:30:00Z'); // 09:30 EDT
    const starts = seriesOccurrences(first, 'America/New_York', { everyWeeks: 1, count: 3 }).map(
      (o) => o.startsAt,
    );
    expect(local(starts, 'America/New_York')).toEqual([
      '2026-10-27T09:30:00-04:00',
      '2026-11-03T09:30:00-05:00',
      '2026-11-10T09:30:00-05:00',
    ]);
  });

  it('keeps the wall time in a quarter-hour zone without changes (Kathmandu)', () => {
    const first = Date.parse('2026-12-01T04:15:00Z'); // 10:00 +05:45
    const starts = seriesOccurrences(first, 'Asia/Kathmandu', { everyWeeks: 4, count: 2 }).map(
      (o) => o.startsAt,
    );
    expect(local(starts, 'Asia/Kathmandu')).toEqual([
      '2026-12-01T10:00:00+05:45',
      '2026-12-29T10:00:00+05:45',
    ]);
  });

  it('keeps the wall time across Lord Howe’s half-hour change', () => {
    // Lord Howe leaves +11:00 for +10:30 on the first Sunday of April 2027 (4 April).
    const first = Date.parse('2027-03-29T23:00:00Z'); // Tuesday 30 March 10:00 +11:00
    const starts = seriesOccurrences(first, 'Australia/Lord_Howe', { everyWeeks: 1, count: 2 }).map(
      (o) => o.startsAt,
    );
    expect(local(starts, 'Australia/Lord_Howe')).toEqual([
      '2027-03-30T10:00:00+11:00',
      '2027-04-06T10:00:00+10:30',
    ]);
  });

  it('has no instant for a wall time the clocks skip, and the first offset’s for one they repeat', () => {
    // 01:30 on Sunday 28 March 2027 does not exist in London; 01:30 on 31 October 2027 happens twice.
    const gap = seriesOccurrences(Date.parse('2027-03-21T01:30:00Z'), 'Europe/London', {
      everyWeeks: 1,
      count: 2,
    });
    expect(gap[1]).toEqual({ position: 2, date: '2027-03-28', startsAt: null });
    const twice = seriesOccurrences(Date.parse('2027-10-24T00:30:00Z'), 'Europe/London', {
      everyWeeks: 1,
      count: 2,
    });
    expect(formatLocal(twice[1]!.startsAt!, 'Europe/London')).toBe('2027-10-31T01:30:00+01:00');
  });

  it('puts every occurrence at the first one’s wall time, in any zone (property)', () => {
    const zones = [
      'Europe/London',
      'America/New_York',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({
          min: Date.parse('2026-01-01T00:00:00Z') / 60_000,
          max: Date.parse('2028-12-31T00:00:00Z') / 60_000,
        }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 2, max: 26 }),
        (zone, minute, everyWeeks, count) => {
          const first = minute * 60_000;
          const wall = wallTimeOf(first, zone);
          for (const occurrence of seriesOccurrences(first, zone, { everyWeeks, count })) {
            if (occurrence.startsAt === null) continue;
            const at = wallTimeOf(occurrence.startsAt, zone);
            expect(at.minute).toBe(wall.minute);
            expect(at.date).toBe(occurrence.date);
          }
        },
      ),
    );
  });
});

describe('followingMove and the series horizon', () => {
  it('moves a later occurrence by the same days to the new wall time', () => {
    const zone = 'Europe/London';
    const moved = followingMove(
      Date.parse('2027-04-06T09:00:00Z'), // Tuesday 10:00 BST
      { from: Date.parse('2027-03-23T10:00:00Z'), to: Date.parse('2027-03-22T11:00:00Z') }, // Tue 10:00 GMT to Mon 11:00 GMT
      zone,
    );
    expect(moved.date).toBe('2027-04-05');
    expect(formatLocal(moved.startsAt!, zone)).toBe('2027-04-05T11:00:00+01:00');
  });

  it('lets later occurrences reach beyond max_advance_days by the series’ own length', () => {
    expect(seriesSpanDays({ everyWeeks: 6, count: 6 })).toBe(210);
    expect(withSeriesHorizon({ policy: { maxAdvanceDays: 60 } }, 210).policy.maxAdvanceDays).toBe(270);
    const location = { policy: { maxAdvanceDays: 60 } };
    expect(withSeriesHorizon(location, 0)).toBe(location);
  });
});

describe('usualOf', () => {
  const NOW = Date.parse('2027-05-10T09:00:00Z');
  const visit = (startsAt: string, overrides: Partial<Visit> = {}): Visit => ({
    startsAt: Date.parse(startsAt),
    status: 'completed',
    serviceIds: ['cut'],
    staffId: 'ana',
    locationId: 'soho',
    timezone: 'Europe/London',
    seriesId: null,
    seriesEveryWeeks: null,
    ...overrides,
  });

  it('reads the last visit and the median gap in weeks', () => {
    const usual = usualOf(
      [
        visit('2027-03-09T10:00:00Z'),
        visit('2027-04-06T09:00:00Z'),
        visit('2027-05-04T09:00:00Z', { staffId: 'bo' }),
      ],
      NOW,
    );
    expect(usual).toMatchObject({
      serviceIds: ['cut'],
      staffId: 'bo',
      everyWeeks: 4,
      nextDueDate: '2027-06-01',
    });
  });

  it('prefers the series rule, ignores cancelled and no-show visits, and knows no interval from one visit', () => {
    expect(usualOf([visit('2027-05-04T09:00:00Z', { seriesEveryWeeks: 6 })], NOW)?.everyWeeks).toBe(6);
    expect(usualOf([visit('2027-05-04T09:00:00Z')], NOW)).toMatchObject({
      everyWeeks: null,
      nextDueDate: null,
    });
    expect(usualOf([visit('2027-05-04T09:00:00Z', { status: 'cancelled' })], NOW)).toBeNull();
    expect(usualOf([visit('2027-05-04T09:00:00Z', { status: 'no_show' })], NOW)).toBeNull();
  });

  it('with two series of the same services, is due after the latest visit of its own series', () => {
    const ana = { seriesId: 'ana-series', seriesEveryWeeks: 4 };
    const bo = { staffId: 'bo', seriesId: 'bo-series', seriesEveryWeeks: 6 };
    const usual = usualOf(
      [
        visit('2027-04-06T09:00:00Z', ana),
        visit('2027-04-20T09:00:00Z', bo),
        visit('2027-05-04T09:00:00Z', ana),
        visit('2027-06-01T09:00:00Z', { ...ana, status: 'confirmed' }),
        visit('2027-06-01T09:00:00Z', { ...bo, status: 'confirmed' }),
        visit('2027-07-13T09:00:00Z', { ...bo, status: 'confirmed' }),
      ],
      NOW,
    );
    // Ana's series, every 4 weeks: due after its visit of 1 June, not four weeks after Bo's of 13 July.
    expect(usual).toMatchObject({ staffId: 'ana', everyWeeks: 4, nextDueDate: '2027-06-29' });
  });

  it('with a series booked with anyone, is due after its latest visit whoever that one is with', () => {
    // Weekly from 3 May with no stylist named: Ana, Ana, then Bo on 17 May (Ana busy that day).
    const series = { seriesId: 's1', seriesEveryWeeks: 1 };
    const usual = usualOf(
      [
        visit('2027-05-03T09:00:00Z', series),
        visit('2027-05-10T08:00:00Z', series),
        visit('2027-05-17T09:00:00Z', { ...series, staffId: 'bo', status: 'confirmed' }),
      ],
      NOW,
    );
    // Not 17 May, booked already (with Bo).
    expect(usual).toMatchObject({ staffId: 'ana', everyWeeks: 1, nextDueDate: '2027-05-24' });
  });

  it('falls back to the soonest booked visit for a client who has not come yet', () => {
    const usual = usualOf(
      [
        visit('2027-06-01T09:00:00Z', { status: 'confirmed' }),
        visit('2027-05-20T09:00:00Z', { status: 'confirmed', staffId: 'cy' }),
      ],
      NOW,
    );
    expect(usual?.staffId).toBe('cy');
  });

  it('falls due after the latest visit of the usual already booked, not on a date booked already', () => {
    // Came on 3 May; booked on 17 and 31 May (a series every 2 weeks): nothing is due before 14 June.
    const series = { status: 'confirmed', seriesId: 's2', seriesEveryWeeks: 2 } as const;
    const usual = usualOf(
      [
        visit('2027-05-03T09:00:00Z', { seriesId: 's2', seriesEveryWeeks: 2 }),
        visit('2027-05-17T09:00:00Z', series),
        visit('2027-05-31T09:00:00Z', series),
      ],
      NOW,
    );
    expect(usual).toMatchObject({ lastStartsAt: Date.parse('2027-05-03T09:00:00Z'), everyWeeks: 2 });
    expect(usual?.nextDueDate).toBe('2027-06-14');
    // Not yet come, three visits ahead: due after the third.
    const ahead = usualOf(
      [
        visit('2027-05-17T09:00:00Z', series),
        visit('2027-05-31T09:00:00Z', series),
        visit('2027-06-14T09:00:00Z', series),
      ],
      NOW,
    );
    expect(ahead).toMatchObject({
      lastStartsAt: Date.parse('2027-05-17T09:00:00Z'),
      nextDueDate: '2027-06-28',
    });
    // A booking of other services ahead does not stand for the usual.
    const other = usualOf(
      [
        visit('2027-05-04T09:00:00Z', { seriesEveryWeeks: 4 }),
        visit('2027-06-20T09:00:00Z', { status: 'confirmed', serviceIds: ['colour'] }),
      ],
      NOW,
    );
    expect(other?.nextDueDate).toBe('2027-06-01');
  });

  it('suggests no interval book could not repeat (beyond 12 weeks), and still says when one is due', () => {
    const usual = usualOf(
      [visit('2026-09-01T09:00:00Z'), visit('2027-01-05T10:00:00Z'), visit('2027-05-04T09:00:00Z')],
      NOW,
    );
    // 18 weeks between visits: every_weeks 1 to 12 is all `book`'s repeat takes.
    expect(usual).toMatchObject({ everyWeeks: null, nextDueDate: '2027-09-07' });
    const twelve = usualOf([visit('2027-02-09T10:00:00Z'), visit('2027-05-04T09:00:00Z')], NOW);
    expect(twelve).toMatchObject({ everyWeeks: 12, nextDueDate: '2027-07-27' });
  });
});

import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.ts';
import { errorHint, type OutcomeParams, TOOL_OUTCOMES, type ToolOutcome } from '../../src/mcp/hints.ts';

/** Sample parameters for every outcome: a new outcome without one here fails the test below. */
const SAMPLES: { [K in ToolOutcome]: OutcomeParams<K>[] } = {
  location_needed: [{ names: ['Camden', 'Islington'] }],
  unknown_location: [{ said: 'Hackney', names: ['Camden', 'Islington'] }],
  ambiguous: [{ what: 'services', said: 'colour', names: ['Full colour', 'Colour consultation'] }],
  unknown_service: [{ said: 'perm', location: 'Northside Camden' }],
  in_person_only: [
    { service: 'Colour consultation', phone: '0 2 0, 7 4 8 5, 0 0 0 0' },
    { service: 'Colour consultation', phone: null },
  ],
  unknown_staff: [{ said: 'Zed', names: ['Amara Okafor', 'Ben Carter'] }],
  staff_cannot_do: [
    { staff: 'Amara Okafor', service: 'Beard trim', others: ['Ben Carter'] },
    { staff: 'Amara Okafor', service: 'Beard trim', others: [] },
  ],
  no_slots: [
    { when: 'on Friday 25 December', alternatives: 5 },
    { when: 'on Friday 25 December', alternatives: 0 },
  ],
  not_open_then: [
    {
      location: 'Soho',
      when: 'tomorrow, Tuesday 24 November in the evening',
      hours: 'Monday to Saturday 9 am to 5 pm',
      alternatives: 3,
    },
    {
      location: 'Soho',
      when: 'tomorrow, Tuesday 24 November from 4:30 pm',
      hours: 'Monday to Saturday 9 am to 5 pm',
      alternatives: 3,
      tooLong: true,
    },
    {
      location: 'Soho',
      when: 'on Sunday 29 November after 6 pm',
      hours: 'Sunday 10 am to 4 pm',
      alternatives: 0,
    },
  ],
  client_not_found: [{ by: 'phone' }, { by: 'email' }],
  bad_contact: [
    { field: 'phone' },
    { field: 'email' },
    { field: 'phone', why: 'too_long' },
    { field: 'phone', why: 'not_in_use' },
    { field: 'phone', why: 'drama' },
  ],
  day_over: [
    { location: 'Northside Camden', day: 'today, Monday 23 November', notice: null, alternatives: 3 },
    { location: 'Northside Camden', day: 'today, Monday 23 November', notice: null, alternatives: 0 },
    {
      location: 'Northside Camden',
      day: 'today, Monday 23 November',
      notice: "1 hour's notice",
      alternatives: 3,
    },
  ],
  times_passed: [
    { when: 'this morning', alternatives: 3 },
    { when: 'this morning', alternatives: 0 },
  ],
  not_personal_phone: [{ what: 'a premium-rate number' }, { what: 'a satellite or global-service number' }],
  phone_country: [
    { countries: ['United Kingdom'], several: false },
    { countries: ['United Kingdom (+44)', 'Nepal (+977)'], several: true },
  ],
  booking_not_found: [{ reference: 'NHC-ZZZZZZ' }],
  series_clash: [
    { dates: 'Tuesday 30 March is not free (free that day: 11 am with Ana)', done: 'booked' },
    { dates: 'Tuesday 30 March is not free (free that day: 11 am with Ana)', done: 'moved' },
  ],
  slot_taken: [{ alternatives: 3 }, { alternatives: 0 }],
  nobody_works_then: [
    { day: 'on Friday 27 November', alternatives: 3 },
    { day: 'tomorrow, Friday 27 November', alternatives: 0 },
  ],
  nobody_free_then: [
    { day: 'on Friday 27 November', alternatives: 3 },
    { day: 'tomorrow, Friday 27 November', alternatives: 0 },
  ],
  time_passed: [{ alternatives: 3 }, { alternatives: 0 }],
  too_soon: [
    { notice: "1 hour's notice", needing: null, alternatives: 3 },
    { notice: "2 hours' notice", needing: null, alternatives: 0 },
    { notice: "15 minutes' notice", needing: 'a deposit paid first', alternatives: 3 },
    { notice: "15 minutes' notice", needing: 'a card saved first', alternatives: 0 },
  ],
  too_far_ahead: [{ location: 'Northside Camden', until: 'Sunday 21 February' }],
  closed: [
    { location: 'Northside Camden', day: 'Friday 25 December', why: 'Christmas Day', alternatives: 3 },
    { location: 'Northside Camden', day: 'Sunday 29 November', why: null, alternatives: 0 },
  ],
  days_passed: [
    { days: 'Sunday 22 November', count: 1, alternatives: 5 },
    { days: 'Monday 16 November to Sunday 22 November', count: 7, alternatives: 0 },
  ],
  days_too_far_ahead: [
    {
      asked: 'Thursday 25 February',
      location: 'Northside Camden',
      maxAdvanceDays: 90,
      last: 'Sunday 21 February',
    },
  ],
  closed_day: [
    { location: 'Northside Camden', day: 'Friday 25 December', why: 'Christmas Day', alternatives: 3 },
    { location: 'Northside Camden', day: 'Sunday 29 November', why: null, alternatives: 0 },
  ],
  nobody_does_it: [
    { location: 'Northside Camden', day: 'Wednesday 25 November', open: true, alternatives: 3 },
    { location: 'Northside Camden', day: 'Wednesday 25 November', open: true, alternatives: 0 },
  ],
  nobody_does_it_day: [
    { location: 'Northside Camden', day: 'Wednesday 25 November', open: true, alternatives: 3 },
    {
      location: 'Northside Camden',
      day: 'Saturday 28 November and the 2 days after',
      open: false,
      alternatives: 0,
    },
  ],
  not_on_grid: [
    { every: 15, alternatives: 3 },
    { every: null, alternatives: 0 },
  ],
  staff_not_working: [
    { staff: 'Ben Carter', works: 'Tuesday to Saturday 10 am to 6 pm at Northside Camden', alternatives: 3 },
    { staff: 'Ben Carter', works: null, alternatives: 0 },
    { staff: 'Ben Carter', when: 'on Monday 30 November', works: null, alternatives: 2 },
    {
      staff: 'Ben Carter',
      when: 'on Tuesday 1 December',
      works: 'Tuesday to Saturday 10 am to 6 pm at Northside Camden',
      alternatives: 2,
      away: true,
    },
  ],
  name_mismatch: [{ said: 'Alex Smith', onFile: 'Jo Bloggs' }],
  service_elsewhere: [
    { service: 'Beard trim', location: 'Northside Islington', elsewhere: ['Northside Camden'] },
  ],
  late_change: [
    { detail: 'Changes less than 24 hours before the appointment are not allowed here.', phone: '0 2 0' },
    { detail: 'Changes less than 24 hours before the appointment are not allowed here.', phone: null },
  ],
  not_changeable: [{ status: 'no_show' }],
  already_cancelled: [{ when: 'Thursday 26 November at 10 am' }],
  appointment_started: [{ when: 'today, Tuesday 24 November at 10 am' }],
  awaiting_code: [{}],
  staff_cannot_take: [{}],
  location_closed: [{ location: 'Northside Camden' }],
  unknown_client: [{}],
  nothing_to_send: [
    { why: 'that booking was missed (marked as a no-show)' },
    { why: 'that booking waits for the code sent to the customer, which its booking page sends again' },
  ],
  service_not_online: [{}],
  protection_required: [
    { location: 'Northside Islington', phone: null },
    { location: 'Northside Islington', phone: '0 2 0' },
  ],
  rate_limited: [{ seconds: 1 }, { seconds: 42 }],
  already_waiting: [{}],
  waitlist_contact_needed: [{}],
  waitlist_contact_unreachable: [{}],
  waitlist_times_over: [
    { parts: ['morning'], day: 'today, Tuesday 24 November' },
    { parts: ['morning', 'afternoon'], day: 'today, Tuesday 24 November' },
  ],
  resends_spent: [
    { times: 3, minutes: 1 },
    { times: 3, minutes: 59 },
    { times: 3, minutes: 20, channels: ['sms'] },
    { times: 3, minutes: 20, channels: ['email'] },
    { times: 3, minutes: 20, channels: ['sms', 'email'] },
  ],
  confirm_name: [{ what: 'service', said: 'colour', name: 'Full colour' }],
  unknown_service_choices: [
    { said: 'perm', location: 'Northside Camden', names: ['Cut & blow-dry', 'Full colour', 'Beard trim'] },
    { said: 'perm', location: 'Northside Islington', names: ['Cut & blow-dry'] },
  ],
  staff_elsewhere: [
    {
      staff: 'Chloé Martin',
      location: 'Northside Camden',
      elsewhere: ['Northside Islington'],
      others: ['Amara Okafor', 'Ben Carter', 'Dev Patel'],
    },
    { staff: 'Chloé Martin', location: 'Northside Camden', elsewhere: ['Northside Islington'], others: [] },
  ],
};

function expectSpeakable(hint: string, label: string): void {
  expect(hint.length, label).toBeGreaterThan(15);
  expect(hint.length, label).toBeLessThanOrEqual(200);
  expect(hint, label).toMatch(/^[A-Z"]/);
  expect(hint, label).toMatch(/\.$/);
  expect(hint, label).not.toMatch(/undefined|null|\[object/);
}

describe('hints', () => {
  it('gives every error code of the contract one short sentence', () => {
    for (const code of ERROR_CODES) expectSpeakable(errorHint(code), code);
  });

  it('gives every tool outcome one short sentence for every kind of parameter', () => {
    for (const kind of Object.keys(TOOL_OUTCOMES) as ToolOutcome[]) {
      const samples = SAMPLES[kind];
      expect(samples.length, kind).toBeGreaterThan(0);
      for (const params of samples) {
        expectSpeakable((TOOL_OUTCOMES[kind].hint as (p: typeof params) => string)(params), kind);
      }
    }
  });

  it('reports each outcome under a REST error code, or one of the two MCP-only codes', () => {
    const allowed = new Set<string>([...ERROR_CODES, 'ambiguous', 'no_slots']);
    for (const [kind, outcome] of Object.entries(TOOL_OUTCOMES))
      expect(allowed.has(outcome.code), kind).toBe(true);
  });

  it('says how long to wait when rate limited', () => {
    expect(TOOL_OUTCOMES.rate_limited.hint({ seconds: 42 })).toMatch(/wait 42 seconds/);
    expect(TOOL_OUTCOMES.rate_limited.hint({ seconds: 1 })).toMatch(/wait 1 second,/);
  });
});

import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { demoMcp, errorText } from '../helpers/mcp-harness.ts';

/**
 * Whose mistake an argument error is, said in its hint (design.md 7, 9.3): an argument only the agent
 * sets (a limit, days, dry_run, scope, repeat, an id it passes on, a value of the wrong type, an
 * argument the tool does not take) is for the agent to correct and call again, without going back to
 * the caller; an argument carrying what the caller said (a date, a time, a phone, a name left empty)
 * still asks the caller again. Through the SDK's client on the demo catalogue; the clock stands at
 * Monday 23 November 2026, 09:00 in London.
 */
const demo = demoMcp();
const CALLER = { first_name: 'Nia', last_name: 'Obi', phone: '07911 123458' };
const SLOT = { location: 'camden', services: 'cut', date: 'tomorrow' };
const BOOKING = { location: 'camden', services: 'cut', starts_at: '2026-11-24T16:00:00+00:00' };
const ASK_AGAIN = ERROR_CATALOGUE.invalid_request.hint;
const FIX_IT =
  /^Something in the request was not valid; fix the named arguments and call again, no need to ask the caller\. /;

describe('an argument only the agent sets', () => {
  it.each([
    ['find_slots', { ...SLOT, limit: 50 }, 'find_slots: limit is at most 20.'],
    ['find_slots', { ...SLOT, days: 40 }, 'find_slots: days is at most 14.'],
    ['find_slots', { ...SLOT, limit: '5' }, 'find_slots: limit is a whole number from 1 to 20.'],
    [
      'find_slots',
      { ...SLOT, time_of_day: 'night' },
      'find_slots: time_of_day is one of morning, afternoon, evening.',
    ],
    ['cancel', { reference: 'NHC-AAAAAA', dry_run: 'yes' }, 'cancel: dry_run is true or false.'],
    [
      'reschedule',
      { reference: 'NHC-AAAAAA', starts_at: 'tomorrow at 3pm', scope: 'all' },
      'reschedule: scope is one of one, following.',
    ],
    [
      'book',
      { ...BOOKING, client: CALLER, repeat: { every_weeks: 20, count: 3 } },
      'book: repeat.every_weeks is at most 12.',
    ],
    ['book', { ...BOOKING, client_id: 'Nia Obi' }, 'book: client_id: give the client_id lookup_client'],
    [
      'book',
      { ...BOOKING, client_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7', client: CALLER },
      'book: client: client_id and client are both given',
    ],
    [
      'book',
      { ...BOOKING, client: CALLER, notes: 42 },
      'book: notes is not valid; expected: For the stylist',
    ],
    ['find_slots', { ...SLOT, services: 7 }, 'find_slots: services is not valid'],
    ['book', { ...BOOKING, client: CALLER, dry_run: true }, 'book: dry_run is not an argument of book'],
    ['book', { ...BOOKING, client: CALLER, notes: '\ud800' }, 'book: notes holds a broken character'],
  ])('%s %j: corrected by the agent, the caller not asked again', async (tool, args, said) => {
    const text = errorText(await demo.mcp.raw(tool, args));
    expect(text).toMatch(FIX_IT);
    expect(text).toContain(said);
    expect(text).not.toMatch(/ask the caller again/);
  });
});

describe('an argument carrying what the caller said', () => {
  it.each([
    ['find_slots', { ...SLOT, date: 'blursday' }, 'find_slots: date: '],
    ['find_slots', { ...SLOT, earliest: 'teatime-ish' }, 'find_slots: earliest: '],
    ['book', { ...BOOKING, client: CALLER, starts_at: 'whenever suits' }, 'book: starts_at: '],
    [
      'register_client',
      { ...CALLER, first_name: '' },
      'register_client: first_name is at least 1 character.',
    ],
    ['find_slots', { location: 'camden', services: 'cut' }, 'find_slots: date is missing; expected: '],
  ])('%s %j: the caller is asked again', async (tool, args, said) => {
    const text = errorText(await demo.mcp.raw(tool, args));
    expect(text.startsWith(`${ASK_AGAIN} ${said}`), text).toBe(true);
  });

  it('says a date that does not exist as every other argument error: after the tool, with a full stop', async () => {
    const text = errorText(await demo.mcp.raw('find_slots', { ...SLOT, date: '2026-02-30' }));
    expect(text).toBe(`${ASK_AGAIN} find_slots: date: 2026-02-30 is not a real date.`);
  });
});

describe('both at once', () => {
  it('has the agent fix its own and ask the caller only about what they said', async () => {
    const text = errorText(await demo.mcp.raw('find_slots', { ...SLOT, date: 'blursday', limit: 50 }));
    expect(text).toMatch(
      /^Something in the request was not valid; fix the named arguments and call again, asking the caller again only about what they said\. find_slots has 2 bad arguments: /,
    );
    expect(text).toContain('limit is at most 20');
  });
});

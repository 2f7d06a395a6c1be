import { describe, expect, it } from 'vitest';
import {
  speakClock,
  speakDate,
  speakDateTime,
  speakDuration,
  speakPhone,
  speakPrice,
  speakTime,
  speechLocaleFor,
  spellReference,
} from '../../src/mcp/speech.ts';

const at = (iso: string) => Date.parse(iso);

describe('speechLocaleFor', () => {
  it('speaks American English in the United States only', () => {
    expect(speechLocaleFor('US')).toBe('en-US');
    expect(speechLocaleFor('us')).toBe('en-US');
    expect(speechLocaleFor('GB')).toBe('en-GB');
    expect(speechLocaleFor('IE')).toBe('en-GB');
    expect(speechLocaleFor(null)).toBe('en-GB');
    expect(speechLocaleFor(undefined)).toBe('en-GB');
  });
});

describe('speakTime', () => {
  it('uses a 12-hour clock without ":00" on the hour', () => {
    expect(speakTime(at('2026-11-24T14:30:00Z'), 'Europe/London', 'en-GB')).toBe('2:30 pm');
    expect(speakTime(at('2026-11-24T09:00:00Z'), 'Europe/London', 'en-GB')).toBe('9 am');
    expect(speakTime(at('2026-11-24T09:05:00Z'), 'Europe/London', 'en-GB')).toBe('9:05 am');
    expect(speakTime(at('2026-11-24T00:30:00Z'), 'Europe/London', 'en-GB')).toBe('12:30 am');
    expect(speakTime(at('2026-11-24T12:45:00Z'), 'Europe/London', 'en-GB')).toBe('12:45 pm');
    expect(speakTime(at('2026-11-24T23:59:00Z'), 'Europe/London', 'en-GB')).toBe('11:59 pm');
  });

  it('says noon and midnight, never 12 pm or 12 am', () => {
    expect(speakTime(at('2026-11-24T12:00:00Z'), 'Europe/London', 'en-GB')).toBe('noon');
    expect(speakTime(at('2026-11-24T00:00:00Z'), 'Europe/London', 'en-GB')).toBe('midnight');
    expect(speakTime(at('2026-11-24T17:00:00Z'), 'America/New_York', 'en-US')).toBe('noon');
    expect(speakTime(at('2026-11-24T05:00:00Z'), 'America/New_York', 'en-US')).toBe('midnight');
    // Seconds do not make noon something else.
    expect(speakTime(at('2026-11-24T12:00:40Z'), 'Europe/London', 'en-GB')).toBe('noon');
  });

  it('writes AM and PM in capitals for en-US', () => {
    expect(speakTime(at('2026-11-24T19:30:00Z'), 'America/New_York', 'en-US')).toBe('2:30 PM');
    expect(speakTime(at('2026-11-24T14:00:00Z'), 'America/New_York', 'en-US')).toBe('9 AM');
    expect(speakTime(at('2026-11-24T17:45:00Z'), 'America/New_York', 'en-US')).toBe('12:45 PM');
  });

  it('uses GMT in winter and BST in summer in London', () => {
    expect(speakTime(at('2026-01-15T14:30:00Z'), 'Europe/London', 'en-GB')).toBe('2:30 pm');
    expect(speakTime(at('2026-07-15T13:30:00Z'), 'Europe/London', 'en-GB')).toBe('2:30 pm');
  });

  it('follows the spring change in London on 2026-03-29', () => {
    expect(speakTime(at('2026-03-29T00:30:00Z'), 'Europe/London', 'en-GB')).toBe('12:30 am');
    expect(speakTime(at('2026-03-29T00:59:00Z'), 'Europe/London', 'en-GB')).toBe('12:59 am');
    expect(speakTime(at('2026-03-29T01:00:00Z'), 'Europe/London', 'en-GB')).toBe('2 am');
    expect(speakTime(at('2026-03-29T01:30:00Z'), 'Europe/London', 'en-GB')).toBe('2:30 am');
  });

  it('names which of the two 1:30 ams of the autumn change it is, by the zone’s abbreviation', () => {
    // New York, 2026-11-01: EDT until 2 am, then EST from 1 am again.
    expect(speakTime(at('2026-11-01T05:30:00Z'), 'America/New_York', 'en-US')).toBe('1:30 AM EDT');
    expect(speakTime(at('2026-11-01T06:30:00Z'), 'America/New_York', 'en-US')).toBe('1:30 AM EST');
    expect(speakTime(at('2026-11-01T04:59:00Z'), 'America/New_York', 'en-US')).toBe('12:59 AM');
    expect(speakTime(at('2026-11-01T07:00:00Z'), 'America/New_York', 'en-US')).toBe('2 AM');
    // London, 2026-10-25; Sydney, 2027-04-04 (only en-AU has letters for Australian zones).
    expect(speakTime(at('2026-10-25T00:00:00Z'), 'Europe/London', 'en-GB')).toBe('1 am BST');
    expect(speakTime(at('2026-10-25T01:59:00Z'), 'Europe/London', 'en-GB')).toBe('1:59 am GMT');
    expect(speakTime(at('2027-04-03T15:30:00Z'), 'Australia/Sydney', 'en-GB')).toBe('2:30 am AEDT');
    expect(speakTime(at('2027-04-03T16:30:00Z'), 'Australia/Sydney', 'en-GB')).toBe('2:30 am AEST');
    // The same zone spoken in the other locale still finds letters (New York's en-GB names are GMT-4).
    expect(speakTime(at('2026-11-01T05:30:00Z'), 'America/New_York', 'en-GB')).toBe('1:30 am EDT');
  });

  it('says "the first" and "the second" where no English locale has letters for the zone', () => {
    // Santiago, 2027-04-03: midnight becomes 11 pm again (-03:00 to -04:00), GMT-3 and GMT-4 only.
    expect(speakTime(at('2027-04-04T02:30:00Z'), 'America/Santiago', 'en-GB')).toBe('the first 11:30 pm');
    expect(speakTime(at('2027-04-04T03:30:00Z'), 'America/Santiago', 'en-GB')).toBe('the second 11:30 pm');
    expect(speakTime(at('2027-04-04T01:30:00Z'), 'America/Santiago', 'en-GB')).toBe('10:30 pm');
  });

  it('follows the half-hour change on Lord Howe Island on 2026-10-04', () => {
    // +10:30 until 02:00 local, then +11:00 from 02:30 local.
    expect(speakTime(at('2026-10-03T15:29:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('1:59 am');
    expect(speakTime(at('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('2:30 am');
    expect(speakTime(at('2026-10-04T15:00:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('2 am');
  });

  it('names both half-hours that Lord Howe Island lives twice on 2027-04-04', () => {
    // +11:00 until 02:00 local, then +10:30 from 01:30 again.
    expect(speakTime(at('2027-04-03T14:30:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('1:30 am LHDT');
    expect(speakTime(at('2027-04-03T15:00:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('1:30 am LHST');
    expect(speakTime(at('2027-04-03T14:29:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('1:29 am');
    expect(speakTime(at('2027-04-03T15:30:00Z'), 'Australia/Lord_Howe', 'en-GB')).toBe('2 am');
  });

  it('uses the +05:45 offset in Kathmandu', () => {
    expect(speakTime(at('2026-11-23T09:00:00Z'), 'Asia/Kathmandu', 'en-GB')).toBe('2:45 pm');
    expect(speakTime(at('2026-11-23T18:15:00Z'), 'Asia/Kathmandu', 'en-US')).toBe('midnight');
  });
});

describe('speakClock', () => {
  it('says a minute of the day on the 12-hour clock, noon and midnight by name', () => {
    expect(speakClock(0, 'en-GB')).toBe('midnight');
    expect(speakClock(1, 'en-GB')).toBe('12:01 am');
    expect(speakClock(540, 'en-GB')).toBe('9 am');
    expect(speakClock(720, 'en-US')).toBe('noon');
    expect(speakClock(750, 'en-US')).toBe('12:30 PM');
    expect(speakClock(1439, 'en-GB')).toBe('11:59 pm');
    // The end of the day, as opening hours write it ("24:00").
    expect(speakClock(1440, 'en-GB')).toBe('midnight');
  });
});

describe('speakDate', () => {
  it('says the weekday, day and month in each locale', () => {
    expect(speakDate('2026-11-24', 'en-GB')).toBe('Tuesday 24 November');
    expect(speakDate('2026-11-24', 'en-US')).toBe('Tuesday, November 24');
    expect(speakDate('2027-01-01', 'en-GB')).toBe('Friday 1 January');
    expect(speakDate('2027-01-01', 'en-US')).toBe('Friday, January 1');
  });

  it('never prefixes nor adds the year without today', () => {
    expect(speakDate('2030-06-03', 'en-GB')).toBe('Monday 3 June');
    expect(speakDate('2020-02-29', 'en-US')).toBe('Saturday, February 29');
  });

  it('says today and tomorrow', () => {
    expect(speakDate('2026-11-24', 'en-GB', '2026-11-24')).toBe('today, Tuesday 24 November');
    expect(speakDate('2026-11-24', 'en-GB', '2026-11-23')).toBe('tomorrow, Tuesday 24 November');
    expect(speakDate('2026-11-24', 'en-US', '2026-11-24')).toBe('today, Tuesday, November 24');
    expect(speakDate('2026-11-24', 'en-US', '2026-11-23')).toBe('tomorrow, Tuesday, November 24');
    expect(speakDate('2027-01-01', 'en-GB', '2026-12-31')).toBe('tomorrow, Friday 1 January');
  });

  it('says nothing extra for yesterday or the day after tomorrow', () => {
    expect(speakDate('2026-11-24', 'en-GB', '2026-11-25')).toBe('Tuesday 24 November');
    expect(speakDate('2026-11-24', 'en-GB', '2026-11-22')).toBe('Tuesday 24 November');
  });

  it('adds the year more than 180 days ahead', () => {
    expect(speakDate('2027-05-23', 'en-GB', '2026-11-24')).toBe('Sunday 23 May');
    expect(speakDate('2027-05-24', 'en-GB', '2026-11-24')).toBe('Monday 24 May 2027');
    expect(speakDate('2027-05-24', 'en-US', '2026-11-24')).toBe('Monday, May 24, 2027');
  });

  it('adds the year more than 180 days behind', () => {
    expect(speakDate('2026-05-28', 'en-GB', '2026-11-24')).toBe('Thursday 28 May');
    expect(speakDate('2026-05-27', 'en-GB', '2026-11-24')).toBe('Wednesday 27 May 2026');
    expect(speakDate('2026-05-27', 'en-US', '2026-11-24')).toBe('Wednesday, May 27, 2026');
  });

  it('rejects what is not a calendar date', () => {
    expect(() => speakDate('2026-02-30', 'en-GB')).toThrow(RangeError);
    expect(() => speakDate('24/11/2026', 'en-GB')).toThrow(RangeError);
    expect(() => speakDate('2026-11-24', 'en-GB', 'tomorrow')).toThrow(RangeError);
  });
});

describe('speakDateTime', () => {
  const now = at('2026-11-20T10:00:00Z');

  it('joins the date and the time with "at"', () => {
    expect(speakDateTime(at('2026-11-24T14:30:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'Tuesday 24 November at 2:30 pm',
    );
    expect(speakDateTime(at('2026-11-24T19:30:00Z'), 'America/New_York', 'en-US', now)).toBe(
      'Tuesday, November 24 at 2:30 PM',
    );
  });

  it('says today and tomorrow relative to now', () => {
    expect(speakDateTime(at('2026-11-20T16:00:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'today, Friday 20 November at 4 pm',
    );
    expect(speakDateTime(at('2026-11-21T09:15:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'tomorrow, Saturday 21 November at 9:15 am',
    );
  });

  it('counts days across a local midnight in the zone, not in UTC', () => {
    // 23:30 local on Monday; 00:15 local is the next day.
    expect(
      speakDateTime(at('2026-11-24T00:15:00Z'), 'Europe/London', 'en-GB', at('2026-11-23T23:30:00Z')),
    ).toBe('tomorrow, Tuesday 24 November at 12:15 am');
    expect(
      speakDateTime(at('2026-11-24T00:00:00Z'), 'Europe/London', 'en-GB', at('2026-11-23T23:30:00Z')),
    ).toBe('tomorrow, Tuesday 24 November at midnight');
    // In New York, 04:30Z is still 23:30 on Monday the 23rd, though UTC already says the 24th.
    expect(
      speakDateTime(at('2026-11-24T05:15:00Z'), 'America/New_York', 'en-US', at('2026-11-24T04:30:00Z')),
    ).toBe('tomorrow, Tuesday, November 24 at 12:15 AM');
    expect(
      speakDateTime(at('2026-11-24T04:45:00Z'), 'America/New_York', 'en-US', at('2026-11-24T04:30:00Z')),
    ).toBe('today, Monday, November 23 at 11:45 PM');
  });

  it('uses local dates in far offsets', () => {
    // 20:00Z on the 23rd is already 01:45 on the 24th in Kathmandu.
    expect(
      speakDateTime(at('2026-11-23T20:00:00Z'), 'Asia/Kathmandu', 'en-GB', at('2026-11-23T10:00:00Z')),
    ).toBe('tomorrow, Tuesday 24 November at 1:45 am');
    // On Lord Howe Island 14:00Z is 00:30 (+10:30) on the 4th, the morning the clocks go forward.
    expect(
      speakDateTime(at('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe', 'en-GB', at('2026-10-03T14:00:00Z')),
    ).toBe('today, Sunday 4 October at 2:30 am');
    expect(
      speakDateTime(at('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe', 'en-GB', at('2026-10-03T12:00:00Z')),
    ).toBe('tomorrow, Sunday 4 October at 2:30 am');
  });

  it('says which of two identical wall times it is, after "at"', () => {
    expect(speakDateTime(at('2026-10-25T00:30:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'Sunday 25 October at 1:30 am BST',
    );
    expect(speakDateTime(at('2026-10-25T01:30:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'Sunday 25 October at 1:30 am GMT',
    );
    expect(speakDateTime(at('2027-04-04T03:30:00Z'), 'America/Santiago', 'en-GB', now)).toBe(
      'Saturday 3 April at the second 11:30 pm',
    );
  });

  it('adds the year when the instant is more than 180 days from now', () => {
    expect(speakDateTime(at('2027-06-01T13:00:00Z'), 'Europe/London', 'en-GB', now)).toBe(
      'Tuesday 1 June 2027 at 2 pm',
    );
    expect(speakDateTime(at('2027-06-01T17:00:00Z'), 'America/New_York', 'en-US', now)).toBe(
      'Tuesday, June 1, 2027 at 1 PM',
    );
  });
});

describe('speakPrice', () => {
  it('says free for nothing', () => {
    expect(speakPrice(0, 'GBP', 'en-GB')).toBe('free');
    expect(speakPrice(0, 'JPY', 'en-US')).toBe('free');
  });

  it('says pounds and pence', () => {
    expect(speakPrice(5500, 'GBP', 'en-GB')).toBe('55 pounds');
    expect(speakPrice(100, 'GBP', 'en-GB')).toBe('1 pound');
    expect(speakPrice(5550, 'GBP', 'en-GB')).toBe('55 pounds 50');
    expect(speakPrice(5, 'GBP', 'en-GB')).toBe('5 pence');
    expect(speakPrice(1, 'GBP', 'en-GB')).toBe('1 penny');
    expect(speakPrice(125000, 'GBP', 'en-GB')).toBe('1,250 pounds');
  });

  it('says dollars and cents', () => {
    expect(speakPrice(5500, 'USD', 'en-US')).toBe('55 dollars');
    expect(speakPrice(5550, 'USD', 'en-US')).toBe('55 dollars and 50 cents');
    expect(speakPrice(101, 'USD', 'en-US')).toBe('1 dollar and 1 cent');
    expect(speakPrice(50, 'USD', 'en-US')).toBe('50 cents');
    expect(speakPrice(125050, 'USD', 'en-US')).toBe('1,250 dollars and 50 cents');
  });

  it('says euros and cents', () => {
    expect(speakPrice(5500, 'EUR', 'en-GB')).toBe('55 euros');
    expect(speakPrice(5550, 'EUR', 'en-GB')).toBe('55 euros and 50 cents');
    expect(speakPrice(100, 'EUR', 'en-GB')).toBe('1 euro');
    expect(speakPrice(1, 'EUR', 'en-GB')).toBe('1 cent');
  });

  it('accepts a lower-case currency code', () => {
    expect(speakPrice(5500, 'gbp', 'en-GB')).toBe('55 pounds');
  });

  it('says rupees and paisa, not "500.50 Nepalese rupees"', () => {
    expect(speakPrice(50050, 'NPR', 'en-GB')).toBe('500 rupees 50 paisa');
    expect(speakPrice(150000, 'NPR', 'en-GB')).toBe('1,500 rupees');
    expect(speakPrice(100, 'NPR', 'en-GB')).toBe('1 rupee');
    expect(speakPrice(101, 'NPR', 'en-GB')).toBe('1 rupee 1 paisa');
    expect(speakPrice(50, 'NPR', 'en-GB')).toBe('50 paisa');
    expect(speakPrice(50050, 'INR', 'en-GB')).toBe('500 rupees 50 paise');
    expect(speakPrice(1, 'INR', 'en-GB')).toBe('1 paisa');
  });

  it('says the local dollar of Australia, Canada and New Zealand as dollars and cents', () => {
    expect(speakPrice(5550, 'AUD', 'en-GB')).toBe('55 dollars and 50 cents');
    expect(speakPrice(100, 'CAD', 'en-GB')).toBe('1 dollar');
    expect(speakPrice(1, 'NZD', 'en-GB')).toBe('1 cent');
  });

  it('says currencies without a minor unit whole', () => {
    expect(speakPrice(5500, 'JPY', 'en-GB')).toBe('5,500 yen');
    expect(speakPrice(1, 'JPY', 'en-US')).toBe('1 yen');
    expect(speakPrice(55000, 'KRW', 'en-US')).toBe('55,000 won');
  });

  it('names the minor unit of other common currencies, singular and plural', () => {
    expect(speakPrice(5550, 'CHF', 'en-GB')).toBe('55 francs and 50 centimes');
    expect(speakPrice(101, 'CHF', 'en-GB')).toBe('1 franc and 1 centime');
    expect(speakPrice(10050, 'ZAR', 'en-GB')).toBe('100 rand and 50 cents');
    expect(speakPrice(1234, 'KWD', 'en-GB')).toBe('1 dinar and 234 fils');
    expect(speakPrice(12345, 'SEK', 'en-GB')).toBe('123 kronor and 45 öre');
  });

  it('falls back on the names Intl knows, with the minor amount after them', () => {
    expect(speakPrice(5500, 'THB', 'en-GB')).toBe('55 Thai baht');
    expect(speakPrice(5550, 'THB', 'en-GB')).toBe('55 Thai baht 50');
    expect(speakPrice(100, 'PLN', 'en-GB')).toBe('1 Polish zloty');
    expect(speakPrice(5500, 'ISK', 'en-GB')).toBe('5,500 Icelandic krónur');
    // Three minor digits without words of their own: "1 dinar 5" could be 5 or 500 fils.
    expect(speakPrice(1005, 'BHD', 'en-GB')).toBe('1.005 Bahraini dinars');
  });

  it('says minus first for a negative amount', () => {
    expect(speakPrice(-5550, 'GBP', 'en-GB')).toBe('minus 55 pounds 50');
  });

  it('rejects fractions of a minor unit and unknown codes', () => {
    expect(() => speakPrice(10.5, 'GBP', 'en-GB')).toThrow(RangeError);
    expect(() => speakPrice(100, 'XX', 'en-GB')).toThrow(RangeError);
  });
});

describe('spellReference', () => {
  it('reads a booking reference one character at a time', () => {
    expect(spellReference('NHC-7KQ2MX')).toBe('N H C dash 7 K Q 2 M X');
  });

  it('upper-cases letters and ignores surrounding whitespace', () => {
    expect(spellReference('  nhc-7kq2mx \n')).toBe('N H C dash 7 K Q 2 M X');
  });

  it('turns every hyphen into dash', () => {
    expect(spellReference('AB-12-C')).toBe('A B dash 1 2 dash C');
  });
});

describe('speakPhone', () => {
  it('reads a number from the home country in national form', () => {
    expect(speakPhone('+447911123456', 'GB')).toBe('0 7 9 1 1, 1 2 3 4 5 6');
    expect(speakPhone('+447400123456', 'gb')).toBe('0 7 4 0 0, 1 2 3 4 5 6');
    expect(speakPhone('+442079460958', 'GB')).toBe('0 2 0, 7 9 4 6, 0 9 5 8');
    expect(speakPhone('+14155552671', 'US')).toBe('4 1 5, 5 5 5, 2 6 7 1');
  });

  it('reads a number from elsewhere in international form with plus', () => {
    expect(speakPhone('+14155552671', 'GB')).toBe('plus 1, 4 1 5, 5 5 5, 2 6 7 1');
    expect(speakPhone('+447400123456', 'US')).toBe('plus 4 4, 7 4 0 0, 1 2 3 4 5 6');
    expect(speakPhone('+447400123456')).toBe('plus 4 4, 7 4 0 0, 1 2 3 4 5 6');
    expect(speakPhone('+447400123456', null)).toBe('plus 4 4, 7 4 0 0, 1 2 3 4 5 6');
  });

  it('spells the digits of what it cannot parse as one group', () => {
    expect(speakPhone('+12')).toBe('plus 1 2');
    expect(speakPhone('ext 42-7')).toBe('4 2 7');
    expect(speakPhone('not a number')).toBe('');
  });
});

describe('speakDuration', () => {
  it('says durations as the rest of the engine does', () => {
    expect(speakDuration(45)).toBe('45 minutes');
    expect(speakDuration(60)).toBe('1 hour');
    expect(speakDuration(75)).toBe('1 hour 15 minutes');
    expect(speakDuration(150)).toBe('2 hours 30 minutes');
  });
});

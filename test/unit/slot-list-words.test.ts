import { describe, expect, it } from 'vitest';
import { speakFreeTimes, speakNearestTimes, speakSlotList } from '../../src/mcp/slot-list-words.ts';

describe('speakSlotList', () => {
  it('says one stylist once per day, and several each with their own times', () => {
    expect(
      speakSlotList([
        { spoken: 'tomorrow, Tuesday 24 November at 9 am', staff_name: 'Ana' },
        { spoken: 'tomorrow, Tuesday 24 November at 9:30 am', staff_name: 'Ana' },
        { spoken: 'Wednesday 25 November at noon', staff_name: 'Ben' },
        { spoken: 'Wednesday 25 November at 1 pm', staff_name: 'Cleo' },
      ]),
    ).toBe(
      'tomorrow, Tuesday 24 November at 9 am or 9:30 am with Ana; or Wednesday 25 November at noon with Ben, or 1 pm with Cleo',
    );
  });

  it("puts each person's times of a day together, each person named once", () => {
    expect(
      speakSlotList([
        { spoken: 'tomorrow, Tuesday 24 November at noon', staff_name: 'Amara Okafor' },
        { spoken: 'tomorrow, Tuesday 24 November at 12:30 pm', staff_name: 'Ben Carter' },
        { spoken: 'tomorrow, Tuesday 24 November at 1 pm', staff_name: 'Ben Carter' },
        { spoken: 'tomorrow, Tuesday 24 November at 1:30 pm', staff_name: 'Ben Carter' },
        { spoken: 'tomorrow, Tuesday 24 November at 2 pm', staff_name: 'Amara Okafor' },
      ]),
    ).toBe(
      'tomorrow, Tuesday 24 November at noon or 2 pm with Amara Okafor, or 12:30 pm, 1 pm or 1:30 pm with Ben Carter',
    );
  });

  it('keeps the words that tell apart the two 1:30s of a fall-back night', () => {
    expect(
      speakSlotList([
        { spoken: 'Sunday 31 October at 1:30 am BST', staff_name: 'Ana' },
        { spoken: 'Sunday 31 October at 1:30 am GMT', staff_name: 'Ana' },
      ]),
    ).toBe('Sunday 31 October at 1:30 am BST or 1:30 am GMT with Ana');
  });
});

describe('speakFreeTimes', () => {
  it('names one person once, before all their times', () => {
    expect(
      speakFreeTimes([
        { spoken: 'today, Tuesday 28 September at 10 am', staff_name: 'Chloé Martin' },
        { spoken: 'today, Tuesday 28 September at 10:30 am', staff_name: 'Chloé Martin' },
        { spoken: 'tomorrow, Wednesday 29 September at 9 am', staff_name: 'Chloé Martin' },
      ]),
    ).toBe(
      'Chloé Martin is free today, Tuesday 28 September at 10 am or 10:30 am; or tomorrow, Wednesday 29 September at 9 am.',
    );
  });

  it('says who is free at each time when there are several', () => {
    expect(
      speakFreeTimes([
        { spoken: 'Wednesday 25 November at noon', staff_name: 'Ben' },
        { spoken: 'Wednesday 25 November at 1 pm', staff_name: 'Cleo' },
      ]),
    ).toBe('Free: Wednesday 25 November at noon with Ben, or 1 pm with Cleo.');
  });
});

describe('speakNearestTimes', () => {
  it('names one person once after several days of their times, not after every day', () => {
    expect(
      speakNearestTimes([
        { spoken: 'Tuesday 1 December at 4 pm', staff_name: 'Ben Carter' },
        { spoken: 'Tuesday 1 December at 4:30 pm', staff_name: 'Ben Carter' },
        { spoken: 'Thursday 3 December at 4 pm', staff_name: 'Ben Carter' },
      ]),
    ).toBe(
      'The nearest free times are Tuesday 1 December at 4 pm or 4:30 pm; or Thursday 3 December at 4 pm, all with Ben Carter.',
    );
  });

  it('names the person with the times of one day, and each person with theirs', () => {
    expect(
      speakNearestTimes([
        { spoken: 'Tuesday 1 December at 4 pm', staff_name: 'Ben Carter' },
        { spoken: 'Tuesday 1 December at 4:30 pm', staff_name: 'Ben Carter' },
      ]),
    ).toBe('The nearest free times are Tuesday 1 December at 4 pm or 4:30 pm with Ben Carter.');
    expect(speakNearestTimes([{ spoken: 'Tuesday 1 December at 4 pm', staff_name: 'Ben Carter' }])).toBe(
      'The nearest free time is Tuesday 1 December at 4 pm with Ben Carter.',
    );
    expect(
      speakNearestTimes([
        { spoken: 'Tuesday 1 December at 4 pm', staff_name: 'Ben Carter' },
        { spoken: 'Thursday 3 December at 4 pm', staff_name: 'Amara Okafor' },
      ]),
    ).toBe(
      'The nearest free times are Tuesday 1 December at 4 pm with Ben Carter; or Thursday 3 December at 4 pm with Amara Okafor.',
    );
  });
});

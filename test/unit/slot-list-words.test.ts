import { describe, expect, it } from 'vitest';
import { speakSlotList } from '../../src/mcp/slot-list-words.ts';

describe('speakSlotList', () => {
  it('says one stylist once per day, and several each with their own time', () => {
    expect(
      speakSlotList([
        { spoken: 'tomorrow, Tuesday 24 November at 9 am', staff_name: 'Ana' },
        { spoken: 'tomorrow, Tuesday 24 November at 9:30 am', staff_name: 'Ana' },
        { spoken: 'Wednesday 25 November at noon', staff_name: 'Ben' },
        { spoken: 'Wednesday 25 November at 1 pm', staff_name: 'Cleo' },
      ]),
    ).toBe(
      'tomorrow, Tuesday 24 November at 9 am or 9:30 am with Ana; or Wednesday 25 November at noon with Ben or 1 pm with Cleo',
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

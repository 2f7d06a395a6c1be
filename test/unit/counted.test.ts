import { describe, expect, it } from 'vitest';
import { counted, possessive } from '../../src/domain/counted.ts';

describe('counted and possessive', () => {
  it('gives a count its noun in the right number, and the possessive that follows it', () => {
    expect(counted(1, 'day')).toBe('1 day');
    expect(counted(0, 'day')).toBe('0 days');
    expect(counted(2, 'try is', 'tries are')).toBe('2 tries are');
    expect(possessive(counted(1, 'minute'))).toBe("1 minute's");
    expect(possessive(counted(60, 'minute'))).toBe("60 minutes'");
    expect(possessive('1 hour 30 minutes')).toBe("1 hour 30 minutes'");
  });
});

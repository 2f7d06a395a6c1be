import fc from 'fast-check';
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { writeFeed } from '../../src/domain/calendar-feed.ts';
import { contentLines, escapeText, foldLine, utcDateTime } from '../../src/domain/icalendar-text.ts';

describe('iCalendar text (RFC 5545)', () => {
  it('escapes TEXT values', () => {
    expect(escapeText('a\\b;c,d\ne\r\nf')).toBe('a\\\\b\\;c\\,d\\ne\\nf');
    expect(escapeText('tab\there\u0007')).toBe('tab\there');
  });

  it('writes instants in UTC', () => {
    expect(utcDateTime(Date.UTC(2026, 10, 24, 9, 5, 7, 123))).toBe('20261124T090507Z');
  });

  it('folds at 75 octets, never inside a character, and unfolds to the same line', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
        const line = `SUMMARY:${text}`;
        const folded = foldLine(line);
        for (const physical of folded.split('\r\n'))
          expect(Buffer.byteLength(physical)).toBeLessThanOrEqual(75);
        expect(folded.replace(/\r\n /g, '')).toBe(line);
      }),
    );
    expect(foldLine('x'.repeat(75))).toBe('x'.repeat(75));
    expect(foldLine('x'.repeat(76))).toBe(`${'x'.repeat(75)}\r\n x`);
    // A 3-octet character that would straddle octet 75 moves whole to the next line.
    expect(foldLine(`${'x'.repeat(74)}€`)).toBe(`${'x'.repeat(74)}\r\n €`);
  });

  it('gives a feed ical.js reads back to the same text, whatever the names hold', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), fc.string({ maxLength: 60 }), (service, first) => {
        const body = writeFeed({
          name: `Ana – ${service}`,
          bookings: [
            {
              id: 'b1',
              reference: 'AC-ABCDEF',
              status: 'confirmed',
              startsAt: Date.UTC(2026, 10, 24, 9),
              endsAt: Date.UTC(2026, 10, 24, 10),
              serviceNames: [service, 'Cut'],
              clientFirstName: first,
              locationName: 'Soho; upstairs, left',
              createdAt: 0,
              updatedAt: 5_000,
              revisions: 1,
            },
          ],
        });
        const event = new ICAL.Event(
          new ICAL.Component(ICAL.parse(body) as unknown[]).getFirstSubcomponent('vevent')!,
        );
        // Control characters other than tab are dropped; line breaks come back as \n.
        const kept = (s: string) =>
          // biome-ignore lint/suspicious/noControlCharactersInRegex: what the writer drops.
          s.replace(/\r\n|\r/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
        expect(event.summary).toBe(kept(`${service}, Cut – ${first}`));
        expect(event.location).toBe('Soho; upstairs, left');
        expect(event.uid).toBe('b1');
        // 5 seconds after it was made, and one change logged.
        expect(event.sequence).toBe(6);
      }),
    );
  });

  it('ends every line with CRLF', () => {
    expect(contentLines(['A:1', 'B:2'])).toBe('A:1\r\nB:2\r\n');
  });
});

/**
 * The few rules of RFC 5545's text form that writing a calendar needs: TEXT values escaped (3.3.11),
 * instants in UTC (3.3.5, form #2), and content lines folded so that no line is longer than 75 octets
 * (3.1), never inside a UTF-8 sequence, each line ended by CRLF. The feed is written by hand (a handful
 * of properties) because ical.js, which parses it back in the tests, folds continuation lines to 76
 * octets (a space plus 75).
 */

const MAX_LINE_OCTETS = 75;

/** A TEXT value: backslash, semicolon and comma escaped, line breaks as \n, other controls dropped. */
export function escapeText(value: string): string {
  return (
    value
      .replace(/\\/g, '\\\\')
      .replace(/;/g, '\\;')
      .replace(/,/g, '\\,')
      .replace(/\r\n|\r|\n/g, '\\n')
      // CONTROL characters other than HTAB are not allowed in a value (3.1).
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is dropped.
      .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '')
  );
}

/** An instant as a UTC DATE-TIME: 20261123T090000Z (seconds kept, milliseconds dropped). */
export function utcDateTime(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/**
 * One content line folded: the first line holds at most 75 octets, each continuation line a space and
 * at most 74 more, so every physical line is at most 75 octets; a character is never split.
 */
export function foldLine(line: string): string {
  const lines: string[] = [];
  let current = '';
  let octets = 0;
  let limit = MAX_LINE_OCTETS;
  for (const char of line) {
    const size = utf8Octets(char);
    if (octets + size > limit) {
      lines.push(current);
      current = ' ';
      octets = 1;
      limit = MAX_LINE_OCTETS;
    }
    current += char;
    octets += size;
  }
  lines.push(current);
  return lines.join('\r\n');
}

function utf8Octets(char: string): number {
  const code = char.codePointAt(0)!;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code < 0x10000) return 3;
  return 4;
}

/** Content lines ("NAME:value", already escaped) as an iCalendar stream: folded, CRLF after each. */
export function contentLines(lines: readonly string[]): string {
  return lines.map((line) => `${foldLine(line)}\r\n`).join('');
}

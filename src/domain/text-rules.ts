/**
 * What text may hold, wherever it comes in or goes out: the rules the faces, the catalogue and the
 * pages share, written once.
 */

/**
 * A lone half of a UTF-16 surrogate pair ("\ud800"): no character. PostgreSQL cannot store it and
 * SQLite stores U+FFFD in its place, so it is refused wherever text comes in. (With the u flag a
 * well-formed pair reads as one code point and is not matched.)
 */
export const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What a one-line name may not hold: a control character, C0 or C1 (a tab, a line feed, U+0085 NEXT
 * LINE...), or a line or paragraph separator (U+2028, U+2029). Each breaks the line the name is shown
 * on, in a message or a page, or is no character anyone types.
 */
export const NOT_IN_A_NAME = /[\p{Cc}\u2028\u2029]/u;

/**
 * A character that shows: neither blank nor one of the format characters that show nothing where they
 * stand (the soft hyphen, zero-width spaces and joiners, direction marks and controls, word joiners,
 * the byte order mark). A name needs one: of those and blanks alone it shows as no name.
 */
export const VISIBLE = /[^\s\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/u;

/**
 * The explicit direction controls (embeddings, overrides, isolates, U+202A–U+202E, U+2066–U+2069).
 * One left open in a value turns the text after it backwards (a name holding U+202E showed the phone
 * number after it reversed), so what the engine shows or sends leaves them out; the Unicode
 * bidirectional rules lay out Arabic or Hebrew without them.
 */
export const DIRECTION_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
const EVERY_DIRECTION_CONTROL = new RegExp(DIRECTION_CONTROL.source, 'g');

/** The text without direction controls: for values put into a page or a message. */
export function withoutDirectionControls(text: string): string {
  return text.replace(EVERY_DIRECTION_CONTROL, '');
}

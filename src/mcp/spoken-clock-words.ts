/**
 * Times said in everyday words, rewritten as the clock times the readers take (spoken-times.ts,
 * spoken-starts.ts): "half past four" and the British "half four" are 4:30, "quarter past four" 4:15,
 * "quarter to five" 4:45, "ten past four" 4:10, "five to five" 4:55, "four pm" and "four o'clock"
 * 4 pm and 4 o'clock, "three thirty" 3:30, and
 * an hour word alone or after "at" ("four", "tomorrow at four") the hour 4. Hours are digits or the
 * words one to twelve; what the rewritten time means (am or pm) is then read as for "4:30". A part of
 * the day said after the time says which: "3 in the afternoon" is 3 pm, "8 in the morning" 8 am,
 * "8 in the evening" and "10 at night" pm.
 */

const HOUR_WORDS: ReadonlyMap<string, number> = new Map(
  ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'].map(
    (word, i) => [word, i + 1],
  ),
);

const HOUR = String.raw`(\d{1,2}|${[...HOUR_WORDS.keys()].join('|')})`;
const HALF_PAST = new RegExp(String.raw`\bhalf (?:past |after )?${HOUR}\b`, 'g');
const QUARTER_PAST = new RegExp(String.raw`\b(?:a )?quarter (?:past|after) ${HOUR}\b`, 'g');
const QUARTER_TO = new RegExp(String.raw`\b(?:a )?quarter (?:to|of|before) ${HOUR}\b`, 'g');
/**
 * Minutes past or to an hour: "ten past three", "twenty-five to four", "10 past 3", "5 minutes to 4".
 * "to" after "from" or "between" is a range ("from ten to four"), left as it is, as is "2 to 4".
 */
const PAST_OR_TO_WORDS: ReadonlyMap<string, number> = new Map([
  ['five', 5],
  ['ten', 10],
  ['twenty five', 25],
  ['twenty', 20],
]);
const PAST_OR_TO = new RegExp(
  String.raw`(?<!\b(?:from|between) )\b(twenty[ -]five|five|ten|twenty|[1-9]|[12]\d)(?: minutes?)? (past|after|to|of|before) ${HOUR}\b`,
  'g',
);
const WORD_HOUR = new RegExp(String.raw`\b${HOUR}(?= ?(?:o'?clock|[ap]\.? ?m\b))`, 'g');

/** Minutes said in words after an hour: "three thirty", "two forty five", "ten oh five". */
const MINUTE_WORDS: ReadonlyMap<string, number> = new Map([
  ['oh five', 5],
  ['ten', 10],
  ['fifteen', 15],
  ['twenty five', 25],
  ['twenty', 20],
  ['thirty five', 35],
  ['thirty', 30],
  ['forty five', 45],
  ['forty', 40],
  ['fifty five', 55],
  ['fifty', 50],
]);
const HOUR_WORD = `(${[...HOUR_WORDS.keys()].join('|')})`;
const HOUR_AND_MINUTES = new RegExp(
  String.raw`\b${HOUR_WORD}[ -](${[...MINUTE_WORDS.keys()].map((words) => words.replace(' ', '[ -]')).join('|')})\b`,
  'g',
);
/** A clock time (as rewritten above) and the part of the day said after it: "3 in the afternoon". */
const WITH_PART_OF_DAY =
  /\b(\d{1,2})(:\d{2})?(?: ?o'?clock)? (?:in the (morning)|in the (afternoon|evening)|at (night))\b/g;

/** "3:30 in the afternoon" as "3:30 pm"; unchanged where the part of the day cannot hold the hour. */
function withHalfDay(whole: string, hour: string, minutes: string | undefined, part: string): string {
  const h = Number(hour);
  const fits =
    part === 'morning' ? h >= 1 && h <= 11 : part === 'afternoon' ? h >= 1 && h <= 12 : h >= 5 && h <= 11;
  return fits ? `${h}${minutes ?? ''} ${part === 'morning' ? 'am' : 'pm'}` : whole;
}

/** An hour in words on its own: the whole phrase ("four"), or after "at" ("tomorrow at four"). */
const LONE_HOUR = new RegExp(String.raw`(^|\bat )${HOUR_WORD}$|(\bat )${HOUR_WORD}(?=,| )`, 'g');

function hourOf(said: string): number | undefined {
  const hour = HOUR_WORDS.get(said) ?? Number(said);
  return hour >= 1 && hour <= 12 ? hour : undefined;
}

/** The phrase (lower case, single spaces) with everyday clock words as clock times; else unchanged. */
export function clockWordsAsTimes(phrase: string): string {
  const at = (said: string, minutes: number, whole: string, before = false) => {
    const hour = hourOf(said);
    if (hour === undefined) return whole;
    const shown = before ? (hour === 1 ? 12 : hour - 1) : hour;
    return `${shown}:${String(minutes).padStart(2, '0')}`;
  };
  return phrase
    .replace(HALF_PAST, (whole, hour: string) => at(hour, 30, whole))
    .replace(QUARTER_PAST, (whole, hour: string) => at(hour, 15, whole))
    .replace(QUARTER_TO, (whole, hour: string) => at(hour, 45, whole, true))
    .replace(PAST_OR_TO, (whole, said: string, way: string, hour: string) => {
      const minutes = PAST_OR_TO_WORDS.get(said.replace('-', ' ')) ?? Number(said);
      const past = way === 'past' || way === 'after';
      // "2 to 4" in digits is as likely a range: only "5 minutes to 4" is taken as 3:55.
      if (!past && /^\d/.test(said) && !whole.includes('minute')) return whole;
      return at(hour, past ? minutes : 60 - minutes, whole, !past);
    })
    .replace(HOUR_AND_MINUTES, (whole, hour: string, minutes: string) => {
      const minute = MINUTE_WORDS.get(minutes.replace('-', ' '));
      return minute === undefined ? whole : at(hour, minute, whole);
    })
    .replace(WORD_HOUR, (whole, hour: string) => String(HOUR_WORDS.get(hour) ?? whole))
    .replace(
      LONE_HOUR,
      (whole, endBefore?: string, endHour?: string, midBefore?: string, midHour?: string) => {
        const hour = HOUR_WORDS.get(endHour ?? midHour ?? '');
        return hour === undefined ? whole : `${endBefore ?? midBefore ?? ''}${hour}`;
      },
    )
    .replace(
      WITH_PART_OF_DAY,
      (whole, hour: string, minutes: string | undefined, am?: string, pm?: string, night?: string) =>
        withHalfDay(whole, hour, minutes, (am ?? pm ?? night)!),
    );
}

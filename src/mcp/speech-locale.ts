/** The English a location's callers hear: American in the United States, British everywhere else. */
export type SpeechLocale = 'en-GB' | 'en-US';

/** American English for a location in the United States, British English everywhere else. */
export function speechLocaleFor(country: string | null | undefined): SpeechLocale {
  return country?.trim().toUpperCase() === 'US' ? 'en-US' : 'en-GB';
}

/** Any instant will do for refusedInEveryLocale: the refusals it keeps do not depend on the date. */
const SOME_DAY = Date.UTC(2026, 0, 1);

/**
 * The refusal `read` gives in every speech locale (the first one's words), or undefined when some
 * locale reads the words: for naming an argument that no location would read, before the location is
 * known (argument-forms.ts). `read` answers undefined for a reading, or for a refusal that another
 * zone, day or opening hours might not make.
 */
export function refusedInEveryLocale(
  read: (locale: SpeechLocale, now: number) => string | undefined,
): string | undefined {
  let refusal: string | undefined;
  for (const locale of ['en-GB', 'en-US'] as const) {
    const reason = read(locale, SOME_DAY);
    if (reason === undefined) return undefined;
    refusal ??= reason;
  }
  return refusal;
}

/** The English a location's callers hear: American in the United States, British everywhere else. */
export type SpeechLocale = 'en-GB' | 'en-US';

/** American English for a location in the United States, British English everywhere else. */
export function speechLocaleFor(country: string | null | undefined): SpeechLocale {
  return country?.trim().toUpperCase() === 'US' ? 'en-US' : 'en-GB';
}

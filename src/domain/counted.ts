/**
 * A count with its noun in the number English gives it: counted(1, 'day') is "1 day", counted(3, 'day')
 * "3 days", counted(2, 'try', 'tries') "2 tries". For messages read on screen and aloud alike.
 */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** English's possessive of a count: "1 hour's", "45 minutes'" (as in "45 minutes' notice"). */
export function possessive(words: string): string {
  return words.endsWith('s') ? `${words}'` : `${words}'s`;
}

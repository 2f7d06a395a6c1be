/** What commands print: results on stdout, diagnostics on stderr (stdout may be piped or parsed). */
export const out = (line: string) => process.stdout.write(`${line}\n`);
export const err = (line: string) => process.stderr.write(`${line}\n`);

/** A failure the user can act on: printed without a stack trace, exit status 1. */
export class CommandError extends Error {
  readonly details: string[];

  constructor(message: string, details: string[] = []) {
    super(message);
    this.details = details;
  }
}

export function formatTime(epochMs: number | null): string {
  return epochMs === null ? '-' : new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

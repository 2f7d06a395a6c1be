/**
 * A reader that stops early (`booking check | head -1`) closes the pipe: what is left to print goes
 * nowhere, and the command finishes its work and exits with its own status, instead of dying on the
 * unhandled EPIPE with a stack trace (and status 1 after an import had committed).
 */
let stdoutClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  stdoutClosed = true;
});

/** What commands print: results on stdout, diagnostics on stderr (stdout may be piped or parsed). */
export const out = (line: string) => stdoutClosed || process.stdout.write(`${line}\n`);
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

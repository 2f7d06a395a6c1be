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

/**
 * Control characters but tab and line feed: C0, DEL and C1. A terminal obeys them (ESC and CSI
 * sequences retitle the window, move the cursor or erase a line; CR overwrites one), and what commands
 * print holds text others stored (an integrator's webhook description, a key's label, a provider's
 * error), so they are printed as the escape `\u001b`, never as themselves. In JSON output that escape
 * reads back as the same character (JSON.stringify already escapes C0 inside strings).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this escapes.
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function shown(line: string): string {
  return line.replace(TERMINAL_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What commands print: results on stdout, diagnostics on stderr (stdout may be piped or parsed). */
export const out = (line: string) => stdoutClosed || process.stdout.write(`${shown(line)}\n`);
export const err = (line: string) => process.stderr.write(`${shown(line)}\n`);

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

import { writeSync } from 'node:fs';
import pino from 'pino';

const CENSOR = '[redacted]';

/**
 * Members never written, wherever they sit one level down (`{ client: { phone } }`, `{ err: { detail } }`)
 * and in an error's `cause`: personal data, keys, and what PostgreSQL's errors carry of the data they
 * refused (the failing row in `detail`, the JSON it could not read in `where`, a key's values).
 */
const HIDDEN = [
  'phone',
  'email',
  'first_name',
  'last_name',
  'notes',
  'key',
  'detail',
  'where',
  'internalQuery',
];

/**
 * Log lines are JSON on stderr: stdout carries only what the command prints for people and scripts
 * (the listening line, a demo key). Redaction is a second line of defence; the code never logs
 * bodies, queries or headers in the first place.
 *
 * The redaction is a `formatters.log` of our own rather than pino's `redact`: its wildcard paths cost
 * about 9 µs on every line (a request's log line cost 12 µs instead of 2.5; issue 47), where looking
 * for these few names in the objects a line holds costs nothing when none is there.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)) {
  return pino({ level, formatters: { log: redacted } }, destination);
}

/** How long a server's log line may wait in memory before it is written (serverLogDestination). */
export const LOG_FLUSH_MS = 100;

/**
 * stderr for `booking serve`: lines gathered in memory and written together, once 32 KiB have
 * gathered or LOG_FLUSH_MS after the first, instead of one write call per request (that call cost
 * a request more than its authentication; issue 47). A write call to a file costs about 40 µs of CPU
 * whatever it carries up to some 32 KiB: a request's share of it was 2.3 µs with writes of 4 KiB,
 * 0.5 µs with 32 KiB. What is gathered is written on any exit that
 * runs the process's exit event (a crash included: pino flushes then); a kill -9 or a power cut
 * loses at most the last LOG_FLUSH_MS of lines (docs/decisions/logs-and-personal-data.md). A reader
 * of stderr that stalls holds at most 16 MiB here; lines past that are dropped, not kept in memory.
 *
 * Each line reaches sonic-boom as bytes (its buffer mode): given text, it measures the UTF-8 length
 * of all it has gathered so far on every line, up to 64 KiB of text each time, which cost a request
 * 5 µs, a twentieth of its CPU (issue 47); given bytes, it adds lengths.
 */
export function serverLogDestination(): pino.DestinationStream & { flush(done?: () => void): void } {
  // Whether the batch being written was refused (EAGAIN: a reader of stderr that fell behind) and waits
  // for sonic-boom's retry timer, which no longer fires once the process exits.
  let retryPending = false;
  const gathered = pino.destination({
    dest: 2,
    sync: false,
    contentMode: 'buffer',
    minLength: 32 * 2 ** 10,
    // sonic-boom's default, 16 KiB, must exceed minLength.
    maxWrite: 64 * 2 ** 10,
    maxLength: 16 * 2 ** 20,
    periodicFlush: LOG_FLUSH_MS,
    retryEAGAIN: () => {
      retryPending = true;
      return true;
    },
  });
  gathered.on('write', () => {
    retryPending = false;
  });
  // Before pino's own exit handler (its flushSync writes what is gathered but skips the batch "being
  // written", which a pending retry is: up to maxWrite of lines were lost on exit, the last one cut).
  process.prependListener('exit', () => requeueRefusedBatch(gathered, retryPending));
  // sonic-boom's flushSync (pino's at exit) retries a failed write every 100 ms, whatever the error:
  // with nobody left reading stderr (EPIPE: a log shipper that died) a stopped server never exited.
  gathered.flushSync = () => writeGatheredSync(gathered);
  return {
    // sonic-boom's types know its text mode only.
    write: (line: string) => gathered.write(Buffer.from(line) as unknown as string),
    // pino's logger.flush() reaches the gathered lines.
    flush: (done?: () => void) => gathered.flush(done),
  };
}

/**
 * At exit, puts the batch sonic-boom was waiting to retry back at the head of what it has gathered, so
 * that the flushSync run at exit writes it, in order, before the rest. sonic-boom's own flushSync does
 * this only for a batch not marked as being written, and then without its length (buffer mode), so
 * it is done here. Only a batch last refused is taken back: one whose retry went into a write call
 * just before the exit may then be written twice, never lost. A batch in a write call that blocks (a
 * blocking pipe that is full) is still lost at exit.
 */
function requeueRefusedBatch(stream: object, retryPending: boolean): void {
  const boom = stream as {
    _writing?: boolean;
    _writingBuf?: Buffer;
    _bufs?: Buffer[][];
    _lens?: number[];
  };
  if (!retryPending || boom._writing !== true || !Buffer.isBuffer(boom._writingBuf)) return;
  if (!Array.isArray(boom._bufs) || !Array.isArray(boom._lens) || boom._writingBuf.length === 0) return;
  boom._bufs.unshift([boom._writingBuf]);
  boom._lens.unshift(boom._writingBuf.length);
  boom._writingBuf = Buffer.alloc(0);
  boom._writing = false;
}

/**
 * sonic-boom's flushSync in buffer mode, but giving up on the lines still gathered when stderr refuses
 * them for good (EPIPE, EBADF: nobody will ever read them); a reader that fell behind (EAGAIN, EBUSY)
 * is waited for, as sonic-boom does.
 */
function writeGatheredSync(stream: object): void {
  const boom = stream as {
    fd: number;
    _writing: boolean;
    _writingBuf: Buffer;
    _bufs: Buffer[][];
    _lens: number[];
    _len: number;
  };
  if (!boom._writing && boom._writingBuf.length > 0) {
    boom._bufs.unshift([boom._writingBuf]);
    boom._lens.unshift(boom._writingBuf.length);
    boom._writingBuf = Buffer.alloc(0);
  }
  let buf = Buffer.alloc(0);
  while (boom._bufs.length > 0 || buf.length > 0) {
    if (buf.length === 0) buf = Buffer.concat(boom._bufs[0]!, boom._lens[0]);
    try {
      const written = writeSync(boom.fd, buf);
      buf = buf.subarray(written);
      boom._len = Math.max(boom._len - written, 0);
      if (buf.length === 0) {
        boom._bufs.shift();
        boom._lens.shift();
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EBUSY') {
        boom._bufs = [];
        boom._lens = [];
        boom._len = 0;
        return;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

/**
 * The object of a log line with every HIDDEN member (and any authorization header) censored. Should
 * looking into it fail (an exotic object), every object in the line is censored whole: the line is
 * still written, and nothing in it is told.
 */
export function redacted(line: Record<string, unknown>): Record<string, unknown> {
  try {
    return censoredLine(line);
  } catch {
    return Object.fromEntries(
      Object.entries(line).map(([name, value]) => [
        name,
        typeof value === 'object' && value !== null ? CENSOR : value,
      ]),
    );
  }
}

function censoredLine(line: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name in line) {
    const value = line[name];
    if (typeof value !== 'object' || value === null) continue;
    const censored = censoredInside(value, name);
    if (censored !== value) {
      copy ??= { ...line };
      copy[name] = censored;
    }
  }
  return copy ?? line;
}

/** `value` itself when nothing in it is hidden, else a copy (an Error stays an Error of its class). */
function censoredInside(value: object, name: string, causes = 0): object {
  const record = value as Record<string, unknown>;
  const hidden = HIDDEN.filter((member) => member in record && record[member] !== undefined);
  const authorization = name === 'headers' && 'authorization' in record;
  const headers = name === 'req' ? (record.headers as Record<string, unknown> | undefined) : undefined;
  const requestAuthorization = headers !== undefined && headers !== null && 'authorization' in headers;
  const cause = record.cause;
  // An error's causes, a few deep (a cause may be the error itself).
  const causeCensored =
    typeof cause === 'object' && cause !== null && causes < 3
      ? censoredInside(cause, 'cause', causes + 1)
      : cause;
  if (hidden.length === 0 && !authorization && !requestAuthorization && causeCensored === cause) return value;
  const copy = editableCopy(value);
  for (const member of hidden) hide(copy, member);
  if (authorization) hide(copy, 'authorization');
  if (requestAuthorization) copy.headers = { ...headers, authorization: CENSOR };
  if (causeCensored !== cause) copy.cause = causeCensored;
  return copy;
}

/** Sets `member` to the censor mark, over an own or inherited getter too. */
function hide(copy: Record<string, unknown>, member: string): void {
  Object.defineProperty(copy, member, {
    value: CENSOR,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * A shallow copy of `value` with its prototype, every own member a writable value: an accessor (an
 * Error's `stack` on newer V8) is read from `value`, since on the copy it would read nothing.
 */
function editableCopy(value: object): Record<string, unknown> {
  const members = Object.getOwnPropertyDescriptors(value);
  for (const [name, member] of Object.entries(members)) {
    members[name] = {
      value: 'get' in member || 'set' in member ? (value as Record<string, unknown>)[name] : member.value,
      enumerable: member.enumerable ?? false,
      writable: true,
      configurable: true,
    };
  }
  return Object.create(Object.getPrototypeOf(value), members) as Record<string, unknown>;
}

import pino from 'pino';

/**
 * Log lines are JSON on stderr: stdout carries only what the command prints for people and scripts
 * (the listening line, a demo key). Redaction is a second line of defence; the code never logs
 * bodies, queries or headers in the first place.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)) {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          '*.phone',
          '*.email',
          '*.first_name',
          '*.last_name',
          '*.notes',
          '*.key',
          // PostgreSQL's errors carry the data they refused: the failing row (`detail`: "Failing row
          // contains (…, notes, …)"), the JSON it could not read (`where`), a key's values.
          '*.detail',
          '*.where',
          '*.internalQuery',
          '*.cause.detail',
          '*.cause.where',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

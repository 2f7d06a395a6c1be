import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';
import { instantOfDateTime } from '../domain/time-format.ts';
import { noteBodyLimit } from './error-envelope.ts';

/**
 * What a server-rendered page's handler reads from its query string and its posted form: every field
 * as one piece of text, whatever was sent. Shared by the customer pages, the checkout and the console.
 *
 * - A name sent more than once (several services ticked, or a hand-made URL) is one field, its values
 *   joined by a newline, which no single value of ours contains: a list stays readable, and any other
 *   field so doubled is simply not one of the values it may be (a 404 or a "choose again" page, never
 *   a fault in code that expected text).
 * - Forms are urlencoded; a script may post JSON instead, taken only when every value is text or a
 *   list of text.
 * - A NUL is refused for every field at once: PostgreSQL cannot store one, and no one types it.
 */
export type Fields = Record<string, string>;

/** The longest field name quoted back in a refusal. */
const NAME_SHOWN = 40;

/**
 * Registers, inside a pages plugin: the urlencoded form parser (the API keeps its JSON-only rule), held
 * to bodyLimit and refused in its words when over it, and a hook that turns every request's query and
 * body into Fields before a handler sees them.
 */
export function acceptPageFields(app: FastifyInstance, bodyLimit: number): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => {
      try {
        done(null, fieldsOf(new URLSearchParams(String(body))));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  // A form over bodyLimit is refused naming bodyLimit (other bodies keep the server's limit).
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (/^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '')) {
      noteBodyLimit(request, bodyLimit);
    }
  });
  app.addHook('preValidation', async (request: FastifyRequest) => {
    request.query = fieldsOf(request.query);
    if (request.body !== undefined && request.body !== null) request.body = fieldsOf(request.body);
  });
}

/** Fields from name-value pairs (a form) or an object of values (a parsed query string, JSON). */
export function fieldsOf(source: unknown): Fields {
  const fields: Fields = Object.create(null);
  const add = (name: string, value: unknown) => {
    for (const text of textsOf(name, value)) {
      if (text.includes('\u0000')) {
        throw new AppError('invalid_request', `${shown(name)} holds a NUL character; send text only.`, name);
      }
      fields[name] = name in fields ? `${fields[name]}\n${text}` : text;
    }
  };
  if (source instanceof URLSearchParams) {
    for (const [name, value] of source) add(name, value);
  } else if (source !== null && typeof source === 'object' && !Array.isArray(source)) {
    for (const [name, value] of Object.entries(source)) add(name, value);
  } else if (source !== undefined && source !== null) {
    throw new AppError('invalid_request', 'A form is sent as named fields.', 'body');
  }
  return fields;
}

function textsOf(name: string, value: unknown): string[] {
  // JSON's null is a field not given, as a form would leave it out.
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  throw new AppError('invalid_request', `${shown(name)} must be text.`, name);
}

function shown(name: string): string {
  return `The field "${name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name}"`;
}

/** The latest instant a page takes (the start of year 9999): every date of the engine is written with four digits. */
const LATEST_INSTANT = Date.UTC(9999, 0, 1);

/**
 * An instant a page's field names (a time chosen from the picker), as epoch milliseconds; NaN when it
 * names none, or one outside 1970 to 9999 (Date.parse reads "+275760-09-13T00:00Z", and such an instant
 * cannot be written back as a date: a refusal then, not a fault).
 */
export function instantOf(value: string | undefined): number {
  const at = value === undefined ? Number.NaN : instantOfDateTime(value);
  return at >= 0 && at < LATEST_INSTANT ? at : Number.NaN;
}

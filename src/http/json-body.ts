import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.ts';

/**
 * Bodies are read as the contract says they are sent: JSON in UTF-8, whose strings are text. Node
 * would otherwise decode bytes that are not UTF-8 (a Latin-1 "ë") as U+FFFD, and JSON may spell a
 * lone UTF-16 surrogate ("\ud800") that no UTF-8 column can store, so SQLite would keep U+FFFD: either
 * way the caller's data would silently change (while the response still echoed what was sent). Both
 * are refused like any other invalid body. So is U+0000, which PostgreSQL cannot store in text at all
 * (and SQLite's C strings end at): no name, note or reason needs it.
 */
export function parseJsonAsText(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new AppError('invalid_request', 'The body is not valid UTF-8.', 'body'), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    if (NUL_ESCAPE.test(text)) {
      done(new AppError('invalid_request', 'The body holds a NUL character (\\u0000).', 'body'), undefined);
      return;
    }
    if (hasLoneSurrogateEscape(text)) {
      done(
        new AppError('invalid_request', 'The body holds a lone UTF-16 surrogate escape.', 'body'),
        undefined,
      );
      return;
    }
    parseJson(request, text, done);
  });
}

/** A JSON \u0000 escape that is not itself an escaped backslash followed by "u0000". */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

/** Whether JSON text has a \uD800-\uDFFF escape that is not half of a surrogate pair. */
function hasLoneSurrogateEscape(json: string): boolean {
  if (!json.includes('\\u')) return false;
  // Every escape in order, so an escaped backslash followed by "u..." is not mistaken for one.
  let lowExpectedAt = -1;
  for (const match of json.matchAll(/\\(?:u([0-9a-fA-F]{4})|[^u])/g)) {
    const unit = match[1] === undefined ? -1 : Number.parseInt(match[1], 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (lowExpectedAt !== -1) {
      if (!isLow || match.index !== lowExpectedAt) return true;
      lowExpectedAt = -1;
    } else if (isLow) {
      return true;
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      lowExpectedAt = match.index + match[0].length;
    }
  }
  return lowExpectedAt !== -1;
}

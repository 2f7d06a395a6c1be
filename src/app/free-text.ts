import { AppError } from '../domain/errors.ts';
import { LONE_SURROGATE } from '../domain/text-rules.ts';

/**
 * Free text a person wrote and the engine stores as it is (a booking's notes, a cancellation's reason,
 * a key's label): checked in the use case, whichever face it came through (REST's schema, the tools,
 * the pages, the console), so the database's own limits are never what refuses it (a 500). At most
 * `max` characters (code points, as the contract counts), and no NUL or lone surrogate, which
 * PostgreSQL cannot store.
 */
export function checkFreeText(value: string | undefined, max: number, param: string): void {
  if (value === undefined) return;
  if (value.length > max && [...value].length > max) {
    throw new AppError('invalid_request', `${param} is at most ${max} characters.`, param);
  }
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    throw new AppError(
      'invalid_request',
      `${param} holds a character that is not text (NUL or half a pair).`,
      param,
    );
  }
}

import { hash } from 'node:crypto';
import { AppError } from '../domain/errors.ts';

/**
 * Console forms that make a secret shown once (an API key, a calendar feed's address) carry a one-time
 * id the page drew. The record made takes its id from it, so the same form sent again (its answer
 * reloaded, which a browser does by posting it again; a double click) names the same record, and the
 * primary key lets it be made once; the plaintext stays in the first answer only.
 */

const FORM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The id of what a form makes: hashed with the organisation's id, so a form id copied from another
 * organisation's page names nothing of theirs; shaped as a UUID (version 8, RFC 9562's for ids made
 * this way). A form id that is not a UUID the page drew is an out-of-date form.
 */
export function idOfForm(organisationId: string, formId: string): string {
  if (!FORM_ID.test(formId)) {
    throw new AppError('invalid_request', 'This form is out of date: open its page again.', 'form_id');
  }
  const h = hash('sha256', `${organisationId}:${formId.toLowerCase()}`, 'hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The refusal of a form already sent: what it made is there, its secret was in the first answer. */
export function alreadySent(what: string): AppError {
  return new AppError(
    'conflict',
    `This form was already sent: the ${what} it made is in the list, and was shown only in the answer to it.`,
    'form_id',
  );
}

export function isAlreadySent(error: unknown): boolean {
  return error instanceof AppError && error.code === 'conflict' && error.param === 'form_id';
}

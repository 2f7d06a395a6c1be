import type { AppError } from '../../domain/errors.ts';

/**
 * A refusal in the words a customer reads on the hosted pages. The API's messages name fields and
 * formats ("phone has no country code: give it in international form") that mean nothing on a form, where national numbers work
 * too; the API keeps them, the pages say what to do.
 */
export function plainWords(error: AppError): string {
  const param = error.param;
  // A number refused for what it is (contact.ts phoneRefusal), not one that is no person's own.
  const phoneProblem = param === 'phone' ? error.details?.phoneProblem : undefined;
  if (phoneProblem === 'drama') {
    return 'That number is one kept for TV and film dramas, so it is no one’s phone. Give the number you really use.';
  }
  if (phoneProblem !== undefined) {
    return 'That phone number does not look right. Check the digits; a number from abroad starts with + and its country code.';
  }
  if (param === 'first_name') return 'Please give your first name (up to 60 characters).';
  if (param === 'last_name') return 'Please give your last name (up to 60 characters).';
  if (param === 'email' && /must be an e-mail/.test(error.message)) {
    return 'That e-mail address does not look right; check it, or give a phone number instead.';
  }
  return error.message;
}

/** plainWords for a booking form sent back with what was typed kept: what to do next, too. */
export function forPeople(error: AppError): string {
  const words = plainWords(error);
  if (words !== error.message) return words;
  if (error.param === 'form_key') return `${words} Your details are kept below: confirm to book.`;
  if (error.status === 409) {
    return `${words} Your details are kept below: choose another time and confirm again.`;
  }
  return `${words} Your details are kept below.`;
}

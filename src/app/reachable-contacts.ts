import { AppError } from '../domain/errors.ts';
import type { OutboxChannel } from '../domain/outbox.ts';
import { reachableContacts } from '../domain/public-booking-policy.ts';
import type { AppDeps } from './deps.ts';
import { countryInSentence, countryName, isTextable } from './phone-destinations.ts';
import { textedCountriesOf } from './texted-countries.ts';

/** A customer's contacts a message can reach, and how to ask for one when neither can. */
export interface Reachable {
  sms: string | null;
  email: string | null;
  /** The 400 asking for a contact a message can reach: `purpose` says what the message is for. */
  refusal(purpose: string): AppError;
}

/**
 * Where messages can reach a customer of the public pages: the phone by SMS when the organisation may
 * text it and SMS has a provider, the e-mail when e-mail has one (reachableContacts). A contact whose
 * channel has no provider on a server where another has one would never receive its message: a code
 * that never comes, an offer nobody hears of.
 */
export async function reachableContactsOf(
  deps: AppDeps,
  organisation: { id: string; catalogueVersion: number },
  contact: { phone: string | null; email: string | null },
): Promise<Reachable> {
  const texted = await textedCountriesOf(deps.db, organisation.id, organisation.catalogueVersion);
  const phoneTextable = contact.phone !== null && isTextable(contact.phone, texted);
  return {
    ...reachableContacts({ ...contact, phoneTextable }, deps.messageProviders),
    refusal: (purpose) => unreachable(texted, deps.messageProviders, purpose),
  };
}

/**
 * Whether any message can reach a client: an e-mail, or a phone the organisation may text (whatever
 * providers this server has: a waitlist offer waits in the outbox for one, as every message does).
 */
export function canBeMessaged(
  contact: { phone: string | null; email: string | null },
  texted: ReadonlySet<string>,
): boolean {
  return contact.email !== null || (contact.phone !== null && isTextable(contact.phone, texted));
}

/** The countries an organisation texts, as a sentence lists them: "the United Kingdom, Ireland". */
export function textedCountriesInWords(texted: ReadonlySet<string>): string {
  return (
    [...texted]
      .sort((a, b) => countryName(a).localeCompare(countryName(b)))
      .map(countryInSentence)
      .join(', ') || 'no country'
  );
}

function unreachable(
  texted: ReadonlySet<string>,
  providers: ReadonlySet<OutboxChannel>,
  purpose: string,
): AppError {
  const where = textedCountriesInWords(texted);
  if (providers.size > 0 && !providers.has('email')) {
    return new AppError(
      'invalid_request',
      `We send messages by text only, to numbers in ${where}: give a mobile number there, ${purpose}.`,
      'phone',
    );
  }
  if (providers.size > 0 && !providers.has('sms')) {
    return new AppError(
      'invalid_request',
      `We send messages by e-mail only: give an e-mail address, ${purpose}.`,
      'email',
    );
  }
  return new AppError(
    'invalid_request',
    `We can only send texts to numbers in ${where}; give an e-mail address too, ${purpose}.`,
    'email',
  );
}

import { phoneAsWrittenAt } from '../../app/contact.ts';
import type { Location } from '../../domain/catalogue.ts';
import { esc } from './page-shell.ts';

/**
 * A location's phone number on a customer page: a link a phone dials at a tap (`tel:` with the number
 * as stored, E.164), showing the number as it is written there ("020 7485 0000", not "+442074850000").
 * HTML; null when the location has no number.
 */
export function callLinkHtml(location: Pick<Location, 'phone' | 'country'>): string | null {
  if (!location.phone) return null;
  const shown = phoneAsWrittenAt(location.phone, location.country) ?? location.phone;
  const dialled = location.phone.replace(/[^\d+]/g, '');
  return `<a href="tel:${esc(dialled)}">${esc(shown)}</a>`;
}

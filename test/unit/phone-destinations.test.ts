import { describe, expect, it } from 'vitest';
import { countryOfPhone, isTextable, nonPersonalNumber } from '../../src/app/phone-destinations.ts';
import type { OutboxChannel } from '../../src/domain/outbox.ts';
import {
  codeState,
  proofChannel,
  reachableContacts,
  readCode,
} from '../../src/domain/public-booking-policy.ts';
import { messageProvidersOf } from '../../src/runtime.ts';

/**
 * Which numbers are texted (design.md 9.1), with libphonenumber-js's full metadata: a person's own
 * phone in a country the organisation texts, never a premium-rate, shared-cost, satellite or other
 * number that is not a person's.
 */
describe('numbers that are a person’s own', () => {
  it.each([
    ['+447400123456', null],
    ['+442074850000', null],
    ['+33612345678', null],
    ['+14155552671', null],
    ['+9779841234567', null],
    ['+449098790879', 'a premium-rate number'],
    ['+37190000001', 'a premium-rate number'],
    ['+881631700001', 'a satellite or global-service number'],
    ['+80012345678', 'a satellite or global-service number'],
    ['+448001234567', 'a freephone number'],
    ['+33810123456', 'a shared-cost number'],
    ['+447012345678', 'a call-forwarding ("personal") number'],
    ['+443001234567', 'a company (non-geographic) number'],
  ])('%s: %s', (phone, reason) => {
    expect(nonPersonalNumber(phone)).toBe(reason);
  });
});

describe('countries texted', () => {
  const uk = new Set(['GB']);
  it('texts numbers of the countries given, and of the national plans they share', () => {
    expect(isTextable('+447400123456', uk)).toBe(true);
    // A Guernsey or Jersey mobile is dialled as a UK one (+44).
    expect(countryOfPhone('+447911123456')).toBe('GG');
    expect(isTextable('+447911123456', uk)).toBe(true);
    expect(isTextable('+447797123456', uk)).toBe(true);
  });

  it('never a number abroad, of an independent country sharing a calling code, or not a person’s', () => {
    expect(isTextable('+33612345678', uk)).toBe(false);
    expect(isTextable('+33612345678', new Set(['GB', 'FR']))).toBe(true);
    // The North American plan is many countries: a US salon does not text the Dominican Republic.
    expect(isTextable('+18095551234', new Set(['US']))).toBe(false);
    expect(isTextable('+14155552671', new Set(['US']))).toBe(true);
    expect(isTextable('+449098790879', uk)).toBe(false);
    expect(isTextable('+881631700001', uk)).toBe(false);
    expect(isTextable('+447400123456', new Set())).toBe(false);
  });
});

describe('the proof of a public booking', () => {
  it('goes by text when the phone may be texted, else by e-mail, else nowhere', () => {
    const contact = { phone: '+447400123456', email: 'a@example.com' };
    const proof = (given: typeof contact & { phoneTextable: boolean }, providers: OutboxChannel[] = []) =>
      proofChannel(reachableContacts(given, new Set(providers)));
    expect(proof({ ...contact, phoneTextable: true })).toEqual({ channel: 'sms', to: contact.phone });
    expect(proof({ ...contact, phoneTextable: false })).toEqual({ channel: 'email', to: contact.email });
    expect(proof({ ...contact, email: null as never, phoneTextable: false })).toBeNull();
    // Only by a channel that has a provider, where one has: else the code would never arrive.
    expect(proof({ ...contact, phoneTextable: true }, ['email'])).toEqual({
      channel: 'email',
      to: contact.email,
    });
    expect(proof({ ...contact, phoneTextable: false }, ['sms'])).toBeNull();
    expect(proof({ ...contact, email: null as never, phoneTextable: true }, ['email'])).toBeNull();
    expect(proof({ ...contact, phoneTextable: true }, ['sms', 'email'])).toEqual({
      channel: 'sms',
      to: contact.phone,
    });
  });

  it('counts a channel as carried where the configuration names its provider', () => {
    const twilio = {
      accountSid: 'AC1',
      authToken: 't',
      from: '+447400000000',
      apiBase: 'https://api.twilio.com',
    };
    const smtp = { smtpUrl: 'smtp://mail.example:587', mailFrom: 'bookings@salon.example' };
    expect([...messageProvidersOf({ sms: null, email: null })]).toEqual([]);
    expect([...messageProvidersOf({ sms: twilio, email: null })]).toEqual(['sms']);
    expect([...messageProvidersOf({ sms: twilio, email: smtp })]).toEqual(['sms', 'email']);
  });

  it('reads a code as typed, and knows when one is spent, expired or done', () => {
    expect(readCode(' 123 456 ')).toBe('123456');
    expect(readCode('123-456')).toBe('123456');
    expect(readCode('12345')).toBeUndefined();
    expect(readCode('12345a')).toBeUndefined();
    const now = Date.parse('2026-11-23T09:00:00Z');
    const fresh = { codeExpiresAt: now + 1, tries: 4, provenAt: null };
    expect(codeState(fresh, now)).toBe('usable');
    expect(codeState({ ...fresh, tries: 5 }, now)).toBe('spent');
    expect(codeState({ ...fresh, codeExpiresAt: now }, now)).toBe('expired');
    expect(codeState({ ...fresh, tries: 5, provenAt: now - 1 }, now)).toBe('proven');
  });
});

import type { RenderedMessage } from '../domain/message-templates.ts';

/**
 * A provider that delivers one channel's messages (SMTP for e-mail, Twilio for SMS). `send` resolves
 * once the provider has accepted the message, with the provider's id for it; it rejects with a
 * DeliveryError saying whether trying again can help.
 */
export interface MessageSender {
  send(message: { id: string; to: string; rendered: RenderedMessage }): Promise<{ providerId: string }>;
  close?(): void;
  /**
   * How many sends it carries at once (its connections); more would wait in its own queue while their
   * leases run. Absent: each send starts at once.
   */
  concurrency?: number;
  /** How long one send may wait on the provider before it gives up (its timeout). */
  timeoutMs?: number;
}

/**
 * A provider's refusal or an outage. `permanent`: the same message will be refused again (a bad
 * number, a rejected address), so it is failed at once. Refused credentials are not: the operator
 * mends the setting, and the messages written meanwhile go on their next try. `reason` is the provider's
 * words with the recipient taken out: it is stored and may be logged, and personal data never is.
 */
export class DeliveryError extends Error {
  readonly permanent: boolean;

  constructor(reason: string, permanent: boolean) {
    super(reason);
    this.name = 'DeliveryError';
    this.permanent = permanent;
  }
}

/** The provider's words without the recipient, nor anything that looks like an address or a number. */
export function withoutPersonalData(text: string, recipient: string): string {
  return text
    .split(recipient)
    .join('[recipient]')
    .replace(/[^\s<>"',;:]+@[^\s<>"',;:]+/g, '[address]')
    .replace(/\+?\d[\d ()-]{6,}\d/g, '[number]')
    .slice(0, 500);
}

/** Twilio's own API, where the package's requests go unless TWILIO_API_BASE says otherwise. */
export const TWILIO_DEFAULT_BASE = 'https://api.twilio.com';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  from: string;
  /** Scheme, host and port of the Messages API (tests point it at a local stand-in). */
  apiBase: string;
}

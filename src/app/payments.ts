/**
 * Where deposits are paid: the seam a payment provider plugs into, chosen by PAYMENT_PROVIDER.
 *
 * A booking that needs a deposit opens a checkout session (a row of `checkout_sessions`, written in the
 * booking's transaction) and answers with the URL the provider gives for it (payment_url). The
 * provider then reports the payment back through the service layer (checkout-service.ts `payDeposit`),
 * which confirms the booking. With no provider configured, a booking that needs a deposit is refused
 * (503 payments_unavailable) and nothing is written; bookings without a deposit are unaffected.
 *
 * `local` is the built-in test mode: its checkout pages at /checkout/{session} on this server take
 * no money (and say so on every page); paying there marks the deposit paid. It runs only when chosen:
 * PAYMENT_PROVIDER=local, or `booking serve --demo` (`npm start`). A real provider (Stripe Checkout)
 * implements the same interface.
 */
export interface PaymentProvider {
  /** Its PAYMENT_PROVIDER value. */
  readonly name: PaymentProviderName;
  /** False for a test mode that confirms deposits without taking money. */
  readonly takesMoney: boolean;
  /** Opens the hosted checkout of a new session (a provider may call its API); the URL it is paid at. */
  openCheckout(session: CheckoutSession, publicBaseUrl: string): Promise<string>;
  /** The URL of a session already open, for a booking shown again while its deposit is due. */
  checkoutUrl(sessionId: string, publicBaseUrl: string): string;
  /**
   * Where the customer saves the card Booking Protection needs, for the booking whose page token this
   * is (a provider may call its API: setup mode). The provider reports the saved card back through
   * booking-pages.ts `settleRequirement(..., 'protection_setup', ...)`.
   */
  openCardSetup(pageToken: string, publicBaseUrl: string): Promise<string>;
}

/** What a provider needs to open a checkout for a deposit (stored as `checkout_sessions`). */
export interface CheckoutSession {
  id: string;
  bookingReference: string;
  amountMinor: number;
  currency: string;
  /** Epoch ms; the booking's hold ends then, and an unpaid checkout with it. */
  expiresAt: number;
}

export const PAYMENT_PROVIDER_NAMES = ['local', 'stripe'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDER_NAMES)[number];

/** The built-in test mode: hosted pages on this server that confirm a deposit without taking money. */
export const localCheckout: PaymentProvider = {
  name: 'local',
  takesMoney: false,
  openCheckout: async (session, publicBaseUrl) => localCheckout.checkoutUrl(session.id, publicBaseUrl),
  checkoutUrl: (sessionId, publicBaseUrl) => `${publicBaseUrl}/checkout/${encodeURIComponent(sessionId)}`,
  // The booking page's own test-mode card step (src/http/pages/manage-page.ts): no card is asked for.
  openCardSetup: async (pageToken, publicBaseUrl) =>
    `${publicBaseUrl}/p/manage/${encodeURIComponent(pageToken)}/card`,
};

/**
 * What choosing a provider reads of the configuration (config.ts's Config has it): the name, and
 * whatever settings a provider needs besides (a real provider's keys join it here).
 */
export interface PaymentSettings {
  paymentProvider: PaymentProviderName | null;
}

/**
 * The providers this version ships, by PAYMENT_PROVIDER name, each made from the settings. The HTTP
 * face mounts what a provider serves itself (the local checkout's pages, a provider's webhook) by its
 * name (src/http/build-app.ts).
 */
const PROVIDERS: Partial<Record<PaymentProviderName, (settings: PaymentSettings) => PaymentProvider>> = {
  local: () => localCheckout,
};

/**
 * The provider PAYMENT_PROVIDER names, or null when none is configured. A name this version does not
 * ship is a configuration error, said at start-up rather than at the first deposit.
 */
export function paymentProviderFor(settings: PaymentSettings): PaymentProvider | null {
  const name = settings.paymentProvider;
  if (name === null) return null;
  const make = PROVIDERS[name];
  if (!make) {
    const shipped = Object.keys(PROVIDERS).join(', ');
    throw new Error(`PAYMENT_PROVIDER=${name} is not available in this version; it ships: ${shipped}.`);
  }
  return make(settings);
}

import type { PaymentProvider, PaymentProviderName, StripeSettings } from './payment-provider.ts';

export type {
  CardSetupSession,
  ChargeOutcome,
  ChargeRequest,
  CheckoutSession,
  PaymentProvider,
  PaymentProviderName,
  RefundOutcome,
  RefundRequest,
  StripeSettings,
} from './payment-provider.ts';
export { PAYMENT_PROVIDER_NAMES } from './payment-provider.ts';

/** The built-in test mode: hosted pages on this server that confirm a deposit without taking money. */
export const localCheckout: PaymentProvider = {
  name: 'local',
  takesMoney: false,
  remote: false,
  // Its pages are on this server.
  handOverOrigins: [],
  openCheckout: async (session, publicBaseUrl) => localCheckout.checkoutUrl(session.id, publicBaseUrl),
  checkoutUrl: (sessionId, publicBaseUrl) => `${publicBaseUrl}/checkout/${encodeURIComponent(sessionId)}`,
  openCardSetup: async (setup, publicBaseUrl) =>
    `${publicBaseUrl}/card-setup/${encodeURIComponent(setup.id)}`,
  refund: async () => ({ status: 'refunded', refundRef: null }),
  chargeSavedCard: async () => ({ status: 'succeeded', paymentRef: null }),
};

/**
 * What choosing a provider reads of the configuration (config.ts's Config has it): the name, and
 * whatever settings a provider needs besides.
 */
export interface PaymentSettings {
  paymentProvider: PaymentProviderName | null;
  stripe?: StripeSettings | null;
}

/**
 * The providers this version ships, by PAYMENT_PROVIDER name, each made from the settings. The HTTP
 * face mounts what a provider serves itself (the checkout links, Stripe's webhook) by its name
 * (src/http/build-app.ts). Stripe's SDK (220 modules) is loaded only when Stripe is
 * chosen: it held 3.5 MB of heap in every server that never takes a card.
 */
const PROVIDERS: Record<PaymentProviderName, (settings: PaymentSettings) => Promise<PaymentProvider>> = {
  local: async () => localCheckout,
  stripe: async (settings) => {
    if (!settings.stripe)
      throw new Error('PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET.');
    return (await import('./stripe-payments.ts')).makeStripeProvider(settings.stripe);
  },
};

/** The provider PAYMENT_PROVIDER names, or null when none is configured. */
export async function paymentProviderFor(settings: PaymentSettings): Promise<PaymentProvider | null> {
  const name = settings.paymentProvider;
  return name === null ? null : PROVIDERS[name](settings);
}

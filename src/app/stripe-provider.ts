import type Stripe from 'stripe';
import type { PaymentProvider } from './payment-provider.ts';

/**
 * What the rest of the engine knows of PAYMENT_PROVIDER=stripe (stripe-payments.ts), without loading
 * Stripe's SDK: payments.ts loads that module, and with it the SDK, only when Stripe is the provider.
 */
export interface StripeProvider extends PaymentProvider {
  readonly name: 'stripe';
  /** The event of a webhook delivery, if its Stripe-Signature is valid for its raw body at `nowMs`. */
  verifyEvent(rawBody: Buffer, signature: string, nowMs: number): Stripe.Event;
  /**
   * The session as Stripe has it now (events may be stale or arrive out of order). `deadline`: as
   * ChargeRequest.deadline (a webhook's, stripe-webhook-service.ts WEBHOOK_WAIT_MS).
   */
  retrieveCheckoutSession(id: string, deadline?: number): Promise<Stripe.Checkout.Session>;
  retrieveSetupIntent(id: string, deadline?: number): Promise<Stripe.SetupIntent>;
}

export function isStripe(provider: PaymentProvider | null): provider is StripeProvider {
  return provider?.name === 'stripe';
}

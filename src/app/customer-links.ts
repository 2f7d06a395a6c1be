import type { PaymentProvider } from './payments.ts';

/**
 * The links a customer is sent, made in one place so that where they point can change in one place
 * (the hosted booking pages of design.md 8.4 repoint bookingPageUrl here): the deposit's checkout, and
 * the page where a pending_confirmation booking is completed.
 */
export interface CustomerLinks {
  /** Where the open checkout of a deposit is paid; null without a payment provider. */
  paymentUrl(checkoutSessionId: string): string | null;
  /**
   * Where a booking held pending_confirmation is completed; null while this version has no such page
   * (the message then gives the reference and the location's phone instead).
   */
  bookingPageUrl(booking: { reference: string }): string | null;
}

/** The links as the customer reaches this service: under PUBLIC_BASE_URL (or the serving address). */
export function customerLinks(payments: PaymentProvider | null, publicBaseUrl: string): CustomerLinks {
  return {
    paymentUrl: (sessionId) => (payments ? payments.checkoutUrl(sessionId, publicBaseUrl) : null),
    bookingPageUrl: () => null,
  };
}

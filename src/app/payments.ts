/**
 * Where deposits are paid. The engine ships one provider: the local hosted checkout served at
 * /checkout/{session} by this same server. A real provider (Stripe Checkout, Adyen, ...) implements
 * the same interface and reports payment back through the service layer's `payDeposit`.
 */
export interface PaymentProvider {
  /** The URL the customer pays a checkout session at. */
  checkoutUrl(sessionId: string, publicBaseUrl: string): string;
}

export const localCheckout: PaymentProvider = {
  checkoutUrl: (sessionId, publicBaseUrl) => `${publicBaseUrl}/checkout/${sessionId}`,
};

import { bookingPageUrl } from './booking-page-token.ts';
import { proofLinkPath } from './contact-proof.ts';
import type { PaymentProvider } from './payments.ts';

/**
 * The links a customer is given (in messages, and as payment_url and booking_page_url on every
 * Booking), made in one place so that where they point can change in one place: the deposit's
 * checkout, and the booking's own page (/p/manage/{token}), where a pending_confirmation booking is
 * completed and any booking is managed.
 */
export interface CustomerLinks {
  /** Where the open checkout of a deposit is paid; null without a payment provider. */
  paymentUrl(checkoutSessionId: string): string | null;
  /** The booking's page, by its token (booking_pages). */
  bookingPageUrl(pageToken: string): string;
  /** The link of a verification code message, which proves the contact it was sent to. */
  verifyUrl(proofToken: string): string;
}

/** The links as the customer reaches this service: under PUBLIC_BASE_URL (or the serving address). */
export function customerLinks(payments: PaymentProvider | null, publicBaseUrl: string): CustomerLinks {
  return {
    paymentUrl: (sessionId) => (payments ? payments.checkoutUrl(sessionId, publicBaseUrl) : null),
    bookingPageUrl: (token) => bookingPageUrl(publicBaseUrl, token),
    verifyUrl: (token) => `${publicBaseUrl}${proofLinkPath(token)}`,
  };
}

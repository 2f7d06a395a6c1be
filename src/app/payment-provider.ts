/**
 * Where money moves: the seam a payment provider plugs into, chosen by PAYMENT_PROVIDER.
 *
 * Every money movement of the booking lifecycle goes through one provider method:
 *
 * - deposit: a booking that needs one opens a checkout (a row of `checkout_sessions`, written in the
 *   booking's transaction) with `openCheckout`, paid at the provider's hosted page; `checkoutUrl` is
 *   the stable link to it on this server (payment_url). The provider reports the payment back (the
 *   local pages call checkout-service.ts `payDeposit`; Stripe's webhook, stripe-webhook-service.ts).
 * - Booking Protection: `openCardSetup` opens a hosted page that saves the customer's card for later
 *   fees (a `card_setups` row; card-setup-service.ts `startCardSetup` is the use case hosted pages
 *   call). The provider reports the saved card back (`completeCardSetup`).
 * - refund of a paid deposit when a cancellation is on time: `refund` (booking-changes.ts cancel).
 * - a late-cancellation or no-show fee: `chargeSavedCard`, off-session (staff-actions.ts chargeFee).
 *
 * Refunds and charges are asked with no transaction open: written first as a call, made, and their
 * outcome written after (payment-calls.ts); a call left in doubt is completed by the hold sweeper.
 *
 * Every call that creates something at the provider carries an idempotency key made from our own ids,
 * so a call repeated after a crash (the provider acted, our database never heard) returns what the
 * first one did instead of charging again.
 *
 * With no provider configured, a booking that needs a deposit is refused (503 payments_unavailable)
 * and nothing is written; bookings without a deposit are unaffected.
 *
 * `local` is the built-in test mode: its pages at /checkout/{session} on this server take no money
 * (and say so on every page); paying there marks the deposit paid, and refunds and fee charges succeed
 * without moving money. It runs only when chosen: PAYMENT_PROVIDER=local, or `booking serve --demo`
 * (`npm start`). `stripe` takes real money through Stripe Checkout and PaymentIntents.
 */
export interface PaymentProvider {
  /** Its PAYMENT_PROVIDER value. */
  readonly name: PaymentProviderName;
  /** False for a test mode that confirms deposits without taking money. */
  readonly takesMoney: boolean;
  /**
   * Its calls cross the network (Stripe): a deposit's checkout is then opened before the booking's
   * write transaction, not inside it (checkouts-opened-first.ts).
   */
  readonly remote: boolean;
  /**
   * The origins of the provider's own hosted pages (checkout, card setup) that this server's pages
   * send the customer on to; none when they are this server's own. A page whose form is answered with
   * a redirect there names them in its CSP form-action (Chromium holds a form's redirects to it).
   */
  readonly handOverOrigins: readonly string[];
  /**
   * Deposit: opens the hosted checkout of a new session (a provider may call its API, with the
   * session id as idempotency key); answers the URL where the customer pays it at the provider. The
   * caller keeps that URL (checkout_sessions.provider_url) and hands out `checkoutUrl`. `deadline`:
   * see ChargeRequest.deadline (the request's one minute, across every checkout it opens).
   */
  openCheckout(session: CheckoutSession, publicBaseUrl: string, deadline?: number): Promise<string>;
  /** The stable link of a checkout on this server (payment_url), which leads to where it is paid. */
  checkoutUrl(sessionId: string, publicBaseUrl: string): string;
  /**
   * Booking Protection: opens a hosted page that saves the customer's card for later off-session fee
   * charges, without charging it; answers the URL where the customer enters the card. `deadline`: as
   * openCheckout's.
   */
  openCardSetup(setup: CardSetupSession, publicBaseUrl: string, deadline?: number): Promise<string>;
  /**
   * Returns a paid deposit (or `amountMinor` of it): `refunded` once the provider accepted the refund,
   * `refused` with its reason when it answered no (the money stays with the salon, to be returned by
   * hand). An unreachable provider throws AppError payments_unavailable: the outcome is unknown (the
   * refund may have been made), and asking again (same key) cannot refund twice.
   */
  refund(request: RefundRequest): Promise<RefundOutcome>;
  /**
   * Charges a saved card off-session. A decline is an answer (`failed` with the provider's reason),
   * not an error; an unreachable provider throws AppError payments_unavailable (charge again later).
   */
  chargeSavedCard(request: ChargeRequest): Promise<ChargeOutcome>;
}

/** What a provider needs to open a checkout for a deposit (stored as `checkout_sessions`). */
export interface CheckoutSession {
  id: string;
  bookingReference: string;
  amountMinor: number;
  currency: string;
  /** Epoch ms; the booking's hold ends then, and an unpaid checkout with it. */
  expiresAt: number;
  /** Epoch ms: now, as the caller's clock says (a provider's own limits on lifetimes count from it). */
  createdAt: number;
  /** Where the customer lands after paying (default: this server's confirmation page). */
  successUrl?: string | undefined;
  /**
   * Where a customer who leaves without paying lands: checkout_cancel_url, else the booking's page
   * (booking-service.ts); without either, the checkout link again.
   */
  cancelUrl?: string | undefined;
  /**
   * The provider's session this one follows, which ended before the hold did (Stripe's last 24 hours
   * at most): the new one is opened under a key of its own.
   */
  replaces?: string | undefined;
}

/** What a provider needs to open a card setup (stored as `card_setups`). */
export interface CardSetupSession {
  id: string;
  bookingReference: string;
  /** The currency later fees are charged in. */
  currency: string;
  /** Epoch ms; the booking's hold ends then. */
  expiresAt: number;
  createdAt: number;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
}

export interface RefundRequest {
  /** Our id the refund is for (the checkout session): the idempotency key is made from it. */
  key: string;
  /** The provider's payment of the deposit (checkout_sessions.payment_ref). */
  paymentRef: string;
  amountMinor: number;
  currency: string;
  /** Asked before (a call in doubt, asked again): see ChargeRequest.askedBefore. */
  askedBefore?: boolean;
  /** When the request stops waiting for the provider: see ChargeRequest.deadline. */
  deadline?: number;
}

export interface ChargeRequest {
  /** Our id of what is charged (booking and fee kind): the idempotency key is made from it. */
  key: string;
  customerRef: string;
  paymentMethodRef: string;
  amountMinor: number;
  currency: string;
  description: string;
  /**
   * Asked before, its outcome never written (a call in doubt, asked again): the provider may have
   * acted, and may have forgotten the idempotency key since (Stripe keeps keys 24 hours), so what it
   * made under this key is looked for first; only if there is none is it asked anew.
   */
  askedBefore?: boolean;
  /**
   * A performance.now() instant (real time, not the booking clock) by which the provider has given up,
   * every call it makes for this included (tries, lookups), and answers payments_unavailable: the
   * request's share of the time before the sweeper takes its call over (payment-calls.ts
   * providerDeadline). None: the provider's own limits.
   */
  deadline?: number;
}

export type RefundOutcome =
  | { status: 'refunded'; refundRef: string | null }
  | { status: 'refused'; reason: string };

export type ChargeOutcome =
  | { status: 'succeeded'; paymentRef: string | null }
  | { status: 'failed'; paymentRef: string | null; reason: string };

export const PAYMENT_PROVIDER_NAMES = ['local', 'stripe'] as const;
export type PaymentProviderName = (typeof PAYMENT_PROVIDER_NAMES)[number];

/** Stripe's settings (config.ts reads them from STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE). */
export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** https://api.stripe.com unless STRIPE_API_BASE points elsewhere (tests: a local server). */
  apiBase: URL;
}

import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../../app/deps.ts';
import type { StripeProvider } from '../../app/stripe-provider.ts';
import { applyStripeEvent } from '../../app/stripe-webhook-service.ts';
import { AppError } from '../../domain/errors.ts';

/**
 * POST /webhooks/stripe: where Stripe reports payments, expiries and saved cards
 * (stripe-webhook-service.ts applies them). Outside /v1 and without an API key: the Stripe-Signature
 * header, an HMAC of the raw body with STRIPE_WEBHOOK_SECRET, is the authentication, so the body is
 * kept as the bytes Stripe signed. A bad or missing signature is 400 and changes nothing; 200 means
 * the event is applied (or was before), so Stripe stops retrying, or that it will never be: a session
 * whose amount or currency is not the deposit's (`mismatched`, logged as a warning for a person to look
 * into, with the event's id and type only); a failure to apply it now (Stripe
 * unreachable, or not answering within the delivery's WEBHOOK_WAIT_MS, while we read the session back)
 * is 503 with nothing written, answered before Stripe gives up waiting, and Stripe delivers it again.
 */
export function stripeWebhookRoutes(deps: AppDeps, stripe: StripeProvider): FastifyPluginAsync {
  return async (app) => {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    app.post('/webhooks/stripe', { schema: { hide: true } }, async (request) => {
      const signature = request.headers['stripe-signature'];
      if (typeof signature !== 'string' || signature === '') {
        throw new AppError(
          'invalid_request',
          'A Stripe webhook carries a Stripe-Signature header.',
          'Stripe-Signature',
        );
      }
      if (!Buffer.isBuffer(request.body)) {
        throw new AppError('invalid_request', 'A Stripe webhook body is JSON.', 'body');
      }
      const now = deps.clock.nowMs();
      let event: ReturnType<StripeProvider['verifyEvent']>;
      try {
        event = stripe.verifyEvent(request.body, signature, now);
      } catch {
        throw new AppError(
          'invalid_request',
          'The Stripe-Signature does not match this body (or is too old); check STRIPE_WEBHOOK_SECRET.',
          'Stripe-Signature',
        );
      }
      const outcome = await applyStripeEvent(deps.db, stripe, event, now);
      if (outcome === 'mismatched') {
        request.log.warn(
          { event_id: event.id, event_type: event.type, outcome },
          'stripe event not applied: its amount or currency is not the one asked for',
        );
      } else {
        request.log.info({ event_type: event.type, outcome }, 'stripe event');
      }
      return { received: true, outcome };
    });
  };
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The signature of a delivery (design.md 9.2): `Booking-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>">`, keyed by the endpoint's secret as it was shown (its UTF-8
 * bytes). The timestamp is signed with the body, so a receiver that refuses old ones refuses replays.
 */

/** A new endpoint's secret: 192 random bits, prefixed so that it is recognised in a config file. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/** The Booking-Signature header of `body` sent at `unixSeconds`. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmac(secret, unixSeconds, body)}`;
}

/**
 * What a receiver checks: a v1 signature of `body` with `secret`, made within `toleranceSeconds` of
 * `nowSeconds`. The receiver example in docs/webhooks.md does the same in a few lines.
 */
export function verifySignature(
  secret: string,
  header: string,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const parts = header.split(',').map((part) => part.split('=', 2) as [string, string?]);
  const t = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(hmac(secret, t, body));
  return parts.some(([key, value]) => {
    if (key !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function hmac(secret: string, unixSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
}

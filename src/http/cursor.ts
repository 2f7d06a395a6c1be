import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../domain/errors.ts';

/**
 * Pagination cursors: base64url(JSON payload) + "." + base64url(HMAC-SHA256).
 *
 * The payload names the listing it belongs to (organisation and endpoint), so a cursor cannot be
 * replayed against another listing or organisation, and it expires an hour after it was issued.
 */
export const CURSOR_TTL_MS = 60 * 60 * 1000;

interface CursorPayload<K> {
  /** The listing: organisation id and endpoint scope. */
  l: string;
  /** Expiry, epoch ms. */
  e: number;
  /** The position: the sort key of the last item returned. */
  k: K;
}

export class CursorCodec {
  readonly #secret: string;

  constructor(secret: string) {
    this.#secret = secret;
  }

  encode<K>(listing: string, position: K, nowMs: number): string {
    const payload: CursorPayload<K> = { l: listing, e: nowMs + CURSOR_TTL_MS, k: position };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.#sign(body)}`;
  }

  /** The position in `cursor`, or 400 invalid_request (param cursor) when tampered, foreign or expired. */
  decode<K>(listing: string, cursor: string, nowMs: number, isPosition: (value: unknown) => value is K): K {
    const invalid = (why: string) => new AppError('invalid_request', `The cursor is ${why}.`, 'cursor');
    const [body, signature, extra] = cursor.split('.');
    if (!body || !signature || extra !== undefined) throw invalid('malformed');
    const expected = Buffer.from(this.#sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid('not valid');
    let payload: CursorPayload<unknown>;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload<unknown>;
    } catch {
      throw invalid('malformed');
    }
    if (payload.l !== listing) throw invalid('for another listing');
    if (typeof payload.e !== 'number' || payload.e <= nowMs) throw invalid('expired; start again without it');
    if (!isPosition(payload.k)) throw invalid('malformed');
    return payload.k;
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }
}

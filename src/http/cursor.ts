import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { AppError } from '../domain/errors.ts';

/**
 * Pagination cursors: base64url(JSON payload) + "." + base64url(HMAC-SHA256).
 *
 * The payload names the listing it belongs to (organisation and endpoint), so a cursor cannot be
 * replayed against another listing or organisation, and it expires an hour after it was issued.
 * Signed, not hidden: whoever holds a cursor can read its position, so a position that must not be
 * read (a sequence every organisation's rows share, which would count another's) is sealed as well.
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

  /** As encode, the position encrypted (AES-256-GCM): the cursor tells its holder nothing of it. */
  encodeSealed<K>(listing: string, position: K, nowMs: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#sealingKey(), iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(position), 'utf8'), cipher.final()]);
    const box = Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
    return this.encode(listing, box, nowMs);
  }

  /** The position in a cursor of encodeSealed, or 400 invalid_request (param cursor) as decode. */
  decodeSealed<K>(
    listing: string,
    cursor: string,
    nowMs: number,
    isPosition: (value: unknown) => value is K,
  ): K {
    const box = Buffer.from(this.decode(listing, cursor, nowMs, isString), 'base64url');
    let position: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#sealingKey(), box.subarray(0, 12));
      decipher.setAuthTag(box.subarray(box.length - 16));
      const opened = Buffer.concat([decipher.update(box.subarray(12, box.length - 16)), decipher.final()]);
      position = JSON.parse(opened.toString('utf8'));
    } catch {
      position = undefined;
    }
    if (!isPosition(position)) throw new AppError('invalid_request', 'The cursor is malformed.', 'cursor');
    return position;
  }

  /** A key of its own for sealing, drawn from the signing secret (never the same key for both uses). */
  #sealingKey(): Buffer {
    return createHash('sha256').update(`cursor position sealing\0${this.#secret}`).digest();
  }

  #sign(body: string): string {
    return createHmac('sha256', this.#secret).update(body).digest('base64url');
  }
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/**
 * A listing's position ordered by creation: the created_at and id of the last item a page showed (the
 * waitlist's entries, the webhook endpoints), as a decoded cursor must hold it.
 */
export function isCreatedPosition(value: unknown): value is [number, string] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    Number.isSafeInteger(value[0]) &&
    typeof value[1] === 'string' &&
    value[1].length <= 40
  );
}

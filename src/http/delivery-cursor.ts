import type { CursorSecrets } from '../app/cursor-secrets.ts';
import { CursorCodec } from './cursor.ts';

/**
 * The cursor of an endpoint's deliveries log, the same over REST (`cursor`) and in the console
 * (`before`). Its position is the log's sequence, which every organisation's deliveries share: sealed
 * (CursorCodec.encodeSealed), so that the gap between two pages' cursors counts nobody else's.
 */
export async function deliveriesCursor(secrets: CursorSecrets, organisationId: string, endpointId: string) {
  const codec = new CursorCodec(await secrets.of(organisationId));
  const listing = `${organisationId}:webhook-deliveries:${endpointId.toLowerCase()}`;
  return {
    encode: (seq: number, nowMs: number) => codec.encodeSealed(listing, seq, nowMs),
    /** The position, or 400 invalid_request (param cursor) when tampered, foreign or expired. */
    decode: (cursor: string, nowMs: number) => codec.decodeSealed(listing, cursor, nowMs, isSeq),
  };
}

function isSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

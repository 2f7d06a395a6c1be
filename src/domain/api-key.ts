/**
 * API key format: `bk_` + 40 base62 characters (about 238 bits of entropy). Anything not of that
 * shape is rejected before the database is asked, so malformed keys cost nothing. Drawing and hashing
 * keys needs cryptography and lives in the service layer (src/app/api-key-crypto.ts).
 */
export const API_KEY_PREFIX = 'bk_';
export const API_KEY_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_BODY_LENGTH = 40;
const KEY_SHAPE = /^bk_[0-9A-Za-z]{40}$/;

export type ApiKeyScope = 'read' | 'read_write';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'read_write'];

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_SHAPE.test(candidate);
}

/** read_write permits everything; read permits only reads. */
export function scopeAllows(granted: ApiKeyScope, needed: ApiKeyScope): boolean {
  return granted === 'read_write' || needed === 'read';
}

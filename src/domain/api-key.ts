import { createHash, randomInt } from 'node:crypto';

/**
 * API key format: `bk_` + 40 base62 characters (about 238 bits of entropy). Anything not of that
 * shape is rejected before the database is asked, so malformed keys cost nothing.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_BODY_LENGTH = 40;
const KEY_SHAPE = /^bk_[0-9A-Za-z]{40}$/;

export type ApiKeyScope = 'read' | 'read_write';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'read_write'];

export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < KEY_BODY_LENGTH; i++) body += BASE62[randomInt(BASE62.length)];
  return `bk_${body}`;
}

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_SHAPE.test(candidate);
}

/**
 * Only this hash is stored. The key has far more entropy than a password, so a fast unsalted hash is
 * enough, and it lets the lookup be a single indexed equality (no per-row comparison to time).
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** read_write permits everything; read permits only reads. */
export function scopeAllows(granted: ApiKeyScope, needed: ApiKeyScope): boolean {
  return granted === 'read_write' || needed === 'read';
}

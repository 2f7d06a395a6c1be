import { hash, randomInt } from 'node:crypto';
import { API_KEY_ALPHABET, API_KEY_BODY_LENGTH, API_KEY_PREFIX } from '../domain/api-key.ts';

/**
 * The two places an API key meets cryptography: drawing a new key from a secure random source, and
 * the hash that is all the database ever holds of it. The key's format lives in the domain.
 */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < API_KEY_BODY_LENGTH; i++) body += API_KEY_ALPHABET[randomInt(API_KEY_ALPHABET.length)];
  return `${API_KEY_PREFIX}${body}`;
}

/**
 * Only this hash is stored. The key has far more entropy than a password, so a fast unsalted hash is
 * enough, and it lets the lookup be a single indexed equality (no per-row comparison to time). The
 * one-shot crypto.hash: a quarter of createHash's cost, paid on every request.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

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

/**
 * The id of the key a console form issues, from the form's one-time id: the same form sent again (its
 * answer reloaded, a double click) names the same key, so the database's primary key lets it be issued
 * once. Hashed with the organisation's id, so a form id copied from another organisation's page names
 * no key of theirs. Shaped as a UUID (version 8, RFC 9562's for ids made this way).
 */
export function apiKeyIdOfForm(organisationId: string, formId: string): string {
  const h = hash('sha256', `${organisationId}:${formId}`, 'hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

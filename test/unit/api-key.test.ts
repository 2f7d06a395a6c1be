import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/app/api-key-crypto.ts';
import { isWellFormedApiKey, scopeAllows } from '../../src/domain/api-key.ts';

describe('API keys', () => {
  it('are bk_ and 40 base62 characters, all different', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    for (const key of keys) expect(key).toMatch(/^bk_[0-9A-Za-z]{40}$/);
    expect(new Set(keys).size).toBe(200);
    expect(isWellFormedApiKey(keys[0]!)).toBe(true);
  });

  it.each([
    '',
    'bk_',
    `bk_${'a'.repeat(41)}`,
    `BK_${'a'.repeat(40)}`,
    `bk_${'a'.repeat(39)}-`,
    ` bk_${'a'.repeat(40)}`,
  ])('refuses the shape of %j', (candidate) => expect(isWellFormedApiKey(candidate)).toBe(false));

  it('are stored as SHA-256 hex', () => {
    expect(hashApiKey('bk_x')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('bk_x')).toBe(hashApiKey('bk_x'));
  });

  it('read permits reads only; read_write permits everything', () => {
    expect(scopeAllows('read', 'read')).toBe(true);
    expect(scopeAllows('read', 'read_write')).toBe(false);
    expect(scopeAllows('read_write', 'read')).toBe(true);
    expect(scopeAllows('read_write', 'read_write')).toBe(true);
  });
});

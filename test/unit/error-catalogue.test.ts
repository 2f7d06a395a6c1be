import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../src/domain/errors.ts';

describe('the error catalogue', () => {
  it('gives every code an HTTP status and an MCP hint', () => {
    for (const code of ERROR_CODES) {
      const entry = ERROR_CATALOGUE[code];
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.hint.length, code).toBeGreaterThan(10);
      expect(entry.hint.length, code).toBeLessThan(200);
    }
  });

  it('covers every code of the contract with the contract’s status', () => {
    const contract = {
      invalid_request: 400,
      missing_api_key: 401,
      invalid_api_key: 401,
      insufficient_scope: 403,
      not_found: 404,
      conflict: 409,
      booking_protection_required: 409,
      idempotency_key_reused: 409,
      rate_limited: 429,
      server_error: 500,
    };
    for (const [code, status] of Object.entries(contract)) {
      expect(ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE]?.status, code).toBe(status);
    }
  });

  it('is the error table of docs/api.md, row for row', () => {
    const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = page.split('\n## Errors\n')[1]?.split('\n## ')[0] ?? '';
    const rows = [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm)].map(([, code, status]) => [
      code,
      Number(status),
    ]);
    expect(rows).toEqual(ERROR_CODES.map((code) => [code, ERROR_CATALOGUE[code].status]));
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * docs/api.md's endpoint table is "every endpoint and its scope" (the README sends integrators there):
 * each operation the server's OpenAPI document describes has its row, and every row is one the server
 * has. A route added without its row (the waitlist's and the webhook endpoints' were) fails here.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const METHODS = ['get', 'post', 'patch', 'put', 'delete'];

/** `METHOD /v1/path` of each row of the table under "## Endpoints", its query string left out. */
function documentedOperations(): string[] {
  const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = page.split('\n## Endpoints\n')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\|\s*`([A-Z]+) (\/v1\/[^`?]*)[^`]*`\s*\|/gm)].map(
    ([, method, path]) => `${method} ${path}`,
  );
}

it('docs/api.md lists every operation of the OpenAPI document, and only those', async () => {
  const response = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  const paths = response.json().paths as Record<string, Record<string, unknown>>;
  const served = Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => METHODS.includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
  expect(documentedOperations().sort()).toEqual(served.sort());
});

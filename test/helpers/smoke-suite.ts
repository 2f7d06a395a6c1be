/**
 * `npm run test:smoke` (TEST_SUITE=smoke): the part of the suite that meets what differs from one
 * Node.js version to the next, on both databases: the SQLite driver (a different better-sqlite3 major on
 * Node 20, see src/data/sqlite-driver.ts) and its backups, how `booking serve` gets its V8 settings
 * (re-executed where Node can, steered at run time on Node 20: bin/server-settings.js), the
 * PostgreSQL driver, child processes and signals, the HTTP and TLS stack, the MCP SDK over HTTP and
 * stdio, the OAuth server of hosted connectors (oidc-provider: koa, jose, its fetch of metadata documents
 * over TLS), and Intl's time zones (the unit and property tests). CI runs the whole suite on Node 24 and
 * this part on Node 22 and 20 (.ci/run).
 * Paths and globs relative to the project folder, as vitest's `include` takes them.
 */
export const SMOKE = [
  'test/unit/**/*.test.ts',
  'test/property/**/*.test.ts',
  'test/integration/sqlite-driver.test.ts',
  'test/integration/database-rules.test.ts',
  'test/integration/booking-concurrency.test.ts',
  'test/integration/group-commit.test.ts',
  'test/integration/http-transport.test.ts',
  'test/integration/http-bookings.test.ts',
  'test/integration/mcp-http-api.test.ts',
  'test/e2e/mcp-json.test.ts',
  'test/e2e/mcp-oauth.test.ts',
  'test/e2e/mcp-oauth-client-metadata.test.ts',
  'test/e2e/running-sources.test.ts',
  'test/e2e/two-processes.test.ts',
  'test/e2e/graceful-shutdown.test.ts',
  'test/e2e/serve-settings.test.ts',
  'test/e2e/cli-operations.test.ts',
];

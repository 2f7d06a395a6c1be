import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file builds its own SQLite files under a temporary directory; forks keep native
    // better-sqlite3 handles out of worker threads.
    pool: 'forks',
  },
});

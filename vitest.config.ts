import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { POSTGRES_ADMIN_URL, postgresReachable } from './test/helpers/postgres-test-server.ts';
import { SMOKE } from './test/helpers/smoke-suite.ts';

const SUITES: Record<string, string[]> = { all: ['test/**/*.test.ts'], smoke: SMOKE };

/**
 * The whole suite runs twice: on SQLite (the embedded default) and on PostgreSQL (the multi-instance
 * option), each test on a fresh database of its own. PostgreSQL is the server at TEST_POSTGRES_URL
 * (default: the local one); when it does not answer, the PostgreSQL run is skipped and said so in
 * plain words, and `.ci/run` starts it first so that CI never skips it. TEST_DATABASES=sqlite (or
 * postgres) runs one of the two. TEST_SUITE=smoke runs the smoke part (test/helpers/smoke-suite.ts) instead.
 */
export default defineConfig(async () => {
  const suite = process.env.TEST_SUITE ?? 'all';
  const include = SUITES[suite];
  if (!include) throw new Error(`TEST_SUITE=${suite}: expected one of ${Object.keys(SUITES).join(', ')}`);
  const wanted = (process.env.TEST_DATABASES ?? 'sqlite,postgres').split(',');
  const postgres = wanted.includes('postgres') && (await postgresReachable());
  if (wanted.includes('postgres') && !postgres) {
    const host = new URL(POSTGRES_ADMIN_URL).host;
    process.stderr.write(
      `\n*** PostgreSQL is not reachable at ${host}: the PostgreSQL run of the suite is SKIPPED; ` +
        'only SQLite is tested. Start PostgreSQL (or set TEST_POSTGRES_URL) to run both. ***\n\n',
    );
  }
  const projects: TestProjectInlineConfiguration[] = [];
  if (wanted.includes('sqlite')) projects.push({ extends: true, test: { name: 'sqlite' } });
  if (postgres) {
    projects.push({
      extends: true,
      test: {
        name: 'postgres',
        // Unit and property tests touch no database: once, in the sqlite project, is enough.
        // (A project's exclude replaces the default one, which keeps node_modules out: kept here too,
        // or the Inspector's own packages under test/e2e/inspector would be run as tests.)
        exclude: [...configDefaults.exclude, 'test/unit/**', 'test/property/**'],
        env: { TEST_DATABASE: 'postgres' },
        globalSetup: ['test/helpers/postgres-global-setup.ts'],
      },
    });
  }
  return {
    test: {
      include,
      // A minute: with two files at once, a test that starts many processes (the CLI's) takes up to
      // three times as long as alone on a loaded two-core machine.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // Each test file builds its own databases; forks keep native better-sqlite3 handles out of
      // worker threads.
      pool: 'forks' as const,
      // Two files at once at least: most of a file's time is spent waiting (on the servers and
      // processes it starts, PostgreSQL, disk syncs, the browser), and vitest's default (one fewer
      // than the cores) ran one file at a time on a two-core machine, CI's (1,335 s against about
      // 1,750 to 2,450 s on one).
      maxWorkers: Math.max(2, availableParallelism() - 1),
      // The files of a worker share one module graph instead of a fresh one each: a fresh graph cost
      // about a second per file (the app's modules evaluated again), a quarter of the suite's time.
      // Safe because the app's state lives with what a test makes (its caches hang off its database
      // handle, its clock and settings are passed in; the process-wide memos are pure functions of
      // their keys), and every test that sets an environment variable puts it back. A file that mocks
      // a module (vi.mock) must import what uses it afresh, and forget it after: see
      // test/integration/booking-reference-draws.test.ts.
      isolate: false,
      projects,
    },
  };
});

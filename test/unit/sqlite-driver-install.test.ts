import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.ts';

/**
 * npm must not run better-sqlite3 12's own install script (a download attempt, then two minutes of C++
 * on every Node): package.json's allowScripts denies it by its exact version, the only form npm accepts
 * for a deny, and bin/build-node20-driver.js builds it on Node 20 alone
 * (docs/decisions/sqlite-driver-per-node.md). A deny naming another version than the lockfile's would
 * let the script run again, unnoticed, after the next update of the driver.
 */
describe('the Node 20 SQLite driver at install', () => {
  const read = (file: string) => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8'));
  const pkg = read('package.json') as {
    allowScripts: Record<string, boolean>;
    scripts: Record<string, string>;
    optionalDependencies: Record<string, string>;
  };
  const locked = (read('package-lock.json') as { packages: Record<string, { version: string }> }).packages[
    'node_modules/better-sqlite3-12'
  ];

  it('is an optional dependency whose own install script allowScripts denies at the locked version', () => {
    expect(pkg.optionalDependencies['better-sqlite3-12']).toMatch(/^npm:better-sqlite3@/);
    expect(locked?.version).toMatch(/^12\./);
    const denied = Object.entries(pkg.allowScripts)
      .filter(([, allowed]) => !allowed)
      .map(([spec]) => spec);
    expect(denied).toEqual([`better-sqlite3@${locked?.version}`]);
  });

  it('is built by the postinstall before anything loads it', () => {
    expect(pkg.scripts.postinstall?.split(' && ')[0]).toBe('node bin/build-node20-driver.js');
  });
});

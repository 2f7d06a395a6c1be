import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.ts';
import { SMOKE } from '../helpers/smoke-suite.ts';

/** vitest silently runs nothing for an include that matches nothing: a renamed file would drop out. */
describe('the smoke part of the suite (npm run test:smoke)', () => {
  it('names only test files and folders of tests that exist', () => {
    const matchesNothing = SMOKE.filter((entry) => {
      const folder = entry.endsWith('/**/*.test.ts') ? entry.slice(0, -'/**/*.test.ts'.length) : null;
      if (folder === null) return !entry.endsWith('.test.ts') || !existsSync(path.join(REPO_ROOT, entry));
      const absolute = path.join(REPO_ROOT, folder);
      return !existsSync(absolute) || !readdirSync(absolute, { recursive: true }).some(isTestFile);
    });
    expect(matchesNothing).toEqual([]);
    expect(SMOKE.length).toBeGreaterThan(5);
  });
});

function isTestFile(name: string | Buffer): boolean {
  return name.toString().endsWith('.test.ts');
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { freshDatabaseUrl } from '../helpers/temp-database.ts';

/**
 * `booking users create|list|disable` through the real command (design.md 8.4): the password comes on
 * stdin, never as an argument, and never appears in any output.
 */
let dir: string;
let env: Record<string, string>;
let dropDatabase: () => Promise<void>;
const PASSWORD = 'a long enough secret';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-cli-users-'));
  const database = await freshDatabaseUrl(dir);
  env = { DATABASE_URL: database.url };
  dropDatabase = database.drop;
  expect(runCli(['import', 'db/demo-catalogue.json'], env).status).toBe(0);
}, 120_000);
afterAll(async () => {
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
});

describe('booking users', () => {
  it('creates accounts from a password on stdin, lists them and disables one', () => {
    const created = runCli(
      ['users', 'create', '--org', 'northside-hair', '--email', 'Mo@Northside.test', '--role', 'owner'],
      env,
      `${PASSWORD}\n`,
    );
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(/^Created owner mo@northside\.test \([0-9a-f-]{36}\)\.\n$/);
    expect(
      runCli(
        ['users', 'create', '--org', 'northside-hair', '--email', 'desk@northside.test', '--role', 'staff'],
        env,
        PASSWORD,
      ).status,
    ).toBe(0);

    const list = runCli(['users', 'list', '--org', 'northside-hair', '--json'], env);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ email: 'desk@northside.test', role: 'staff', disabled_at: null }),
      expect.objectContaining({ email: 'mo@northside.test', role: 'owner', disabled_at: null }),
    ]);
    const disabled = runCli(
      ['users', 'disable', '--org', 'northside-hair', '--email', 'desk@northside.test'],
      env,
    );
    expect(disabled.stdout).toBe('Disabled desk@northside.test.\n');
    const text = runCli(['users', 'list', '--org', 'northside-hair'], env).stdout;
    expect(text).toMatch(/^desk@northside\.test {2}staff {2}disabled \d{4}-/m);
    expect(text).toMatch(/^mo@northside\.test {2}owner {2}active /m);
    for (const output of [created.stdout, list.stdout, text]) expect(output).not.toContain(PASSWORD);
  }, 120_000);

  it('refuses a missing or short password, a bad role and a second account with one e-mail', () => {
    const create = (stdin: string, role = 'admin', email = 'x@n.test') =>
      runCli(['users', 'create', '--org', 'northside-hair', '--email', email, '--role', role], env, stdin);
    const none = create('');
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('Give the password on stdin');
    const short = create('short\n');
    expect(short.stderr).toContain('at least 12 characters');
    const blank = create(`${' '.repeat(14)}\n`);
    expect(blank.stderr).toContain('Give the password on stdin');
    // A line break inside: the console's sign-in field could never type it.
    const twoLines = create('a long enough\npassword here\n');
    expect(twoLines.status).toBe(1);
    expect(twoLines.stderr).toContain('The password is one line');
    const role = create(PASSWORD, 'boss');
    expect(role.status).toBe(1);
    expect(role.stderr).toMatch(/Allowed choices are owner, admin, staff/);
    const again = create(PASSWORD, 'admin', 'MO@northside.test');
    expect(again.stderr).toContain('already has a user mo@northside.test');
    const org = runCli(['users', 'list', '--org', 'nowhere'], env);
    expect(org.stderr).toContain('No organisation has the slug "nowhere"');
  }, 120_000);
});

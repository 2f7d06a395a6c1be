import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, disableUser } from '../../src/app/staff-account-service.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { outcomeOf, REPO_ROOT } from '../helpers/cli.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A console password that leaked is changed with `booking users set-password` (the new one on stdin):
 * every session signed in with the old one ends at once, on every device, and only the new one signs
 * in. Before, the only way to shut the old password out was `users disable`, for good: the account
 * could never be enabled again, nor its e-mail given a new account.
 */
const OLD = 'correct horse battery';
const NEW = 'a different long secret';
const ORIGIN = 'http://localhost:80';
/** The command is a child process loading the whole CLI: slow on a busy machine. */
const CLI_TIMEOUT = 90_000;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ catalogues: [smallCatalogue()] });
  for (const email of ['owner@acme.test', 'desk@acme.test'])
    await createUser(
      t.database.db,
      { organisationSlug: 'acme-hair', email, role: 'owner', password: OLD },
      t.clock.nowMs(),
    );
});
afterAll(async () => {
  await t.close();
});

/** `booking users set-password` on the test app's database, the password piped to its stdin. */
function setPassword(email: string, password: string) {
  const child = spawn(
    process.execPath,
    ['bin/booking.js', 'users', 'set-password', '--org', 'acme-hair', '--email', email],
    { cwd: REPO_ROOT, env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: t.database.url } },
  );
  child.stdin.end(`${password}\n`);
  return outcomeOf(child);
}

const signInWith = (email: string, password: string) =>
  t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    payload: new URLSearchParams({ organisation: 'acme-hair', email, password }).toString(),
  });

it(
  'ends every session of the account and signs in with the new password only',
  async () => {
    const tablet = await signInToConsole(t, 'acme-hair', 'owner@acme.test', OLD);
    const phone = await signInToConsole(t, 'acme-hair', 'owner@acme.test', OLD);
    const colleague = await signInToConsole(t, 'acme-hair', 'desk@acme.test', OLD);

    const changed = await setPassword('Owner@Acme.test', NEW);
    expect(changed.stderr).toBe('');
    expect(changed.status).toBe(0);
    expect(changed.stdout).toBe(
      'Changed the password of owner@acme.test; its console sessions and the apps it connected were ended.\n',
    );
    expect(changed.stdout).not.toContain(NEW);

    for (const signedIn of [tablet, phone]) {
      const page = await signedIn.get('/console/diary');
      expect(page.statusCode).toBe(303);
      expect(page.headers.location).toMatch(/^\/console\/sign-in\?expired=1/);
      expect((await signedIn.post('/console/sign-out')).headers.location).toMatch(/expired=1/);
    }
    // Another account's session is not its business.
    expect((await colleague.get('/console/diary')).statusCode).toBe(200);
    expect((await signInWith('owner@acme.test', OLD)).statusCode).toBe(401);
    expect((await signInWith('owner@acme.test', NEW)).statusCode).toBe(303);
  },
  CLI_TIMEOUT,
);

it(
  'refuses a short password, an unknown account and a disabled one, changing nothing',
  async () => {
    const short = await setPassword('desk@acme.test', 'short');
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('at least 12 characters');
    const unknown = await setPassword('nobody@acme.test', NEW);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No user nobody@acme.test in acme-hair');
    await disableUser(t.database.db, 'acme-hair', 'desk@acme.test', t.clock.nowMs());
    const disabled = await setPassword('desk@acme.test', NEW);
    expect(disabled.status).toBe(1);
    expect(disabled.stderr).toContain('desk@acme.test is disabled');
    expect((await signInWith('desk@acme.test', NEW)).statusCode).toBe(401);
  },
  CLI_TIMEOUT,
);

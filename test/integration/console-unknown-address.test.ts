import { afterEach, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An address under /console that no page has (a link cut short, an old bookmark, the address of a
 * form's answer opened again, which is a GET of a POST-only address) answers the console's own "Not
 * found" page with the way back to the diary, as /p/ does for customers, never the API's JSON envelope.
 */
const PASSWORD = 'correct horse battery';
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

it('answers a page, not JSON, at an address under /console no page has', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  const desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
  for (const url of ['/console/client', '/console/bookings/NHC-AAAAAA/action', '/console/diary/']) {
    const page = await desk.get(url);
    expect(page.statusCode, url).toBe(404);
    expect(page.headers['content-type'], url).toMatch(/^text\/html/);
    expect(page.body, url).toContain('<h1>Not found</h1>');
    expect(page.body, url).toContain('href="/console/diary"');
  }
  // Signed out, the same page (nothing of the organisation in it).
  const anonymous = await t.app.inject({ method: 'GET', url: '/console/nope' });
  expect(anonymous.statusCode).toBe(404);
  expect(anonymous.headers['content-type']).toMatch(/^text\/html/);
  // The pages that are there still answer as before.
  expect((await desk.get('/console/diary')).statusCode).toBe(200);
  expect((await t.app.inject({ method: 'GET', url: '/console/sign-in' })).statusCode).toBe(200);
});

it('answers a page, not JSON, when an address under /console has a % that escapes nothing', async () => {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: '2026-11-23T09:00:00Z' });
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  const desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
  for (const url of ['/console/bookings/NHC-%zz', '/console/%E0%A4%A', '/console%']) {
    const page = await desk.get(url);
    expect(page.statusCode, url).toBe(400);
    expect(page.headers['content-type'], url).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy'], url).toBeDefined();
    expect(page.body, url).toContain('<h1>Please check</h1>');
    expect(page.body, url).toContain('every % must begin the escape');
    expect(page.body, url).toContain('href="/console/diary"');
  }
  // The API keeps its JSON envelope for the same mistake.
  const api = await t.app.inject({ method: 'GET', url: '/v1/locations/%zz' });
  expect(api.statusCode).toBe(400);
  expect(api.json().error.code).toBe('invalid_request');
});

import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The diary's current-time line, through HTTP (inject), early and late in the desk's day: the demo
 * catalogue, Camden on Monday 23 November 2026 (Amara 09:00–18:00, London on GMT), whose diary shows
 * 08:00 to 20:00 when nothing is earlier or later.
 */
const PASSWORD = 'correct horse battery';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function diaryAt(now: string): Promise<string> {
  t = await startTestApp({ catalogues: [demoCatalogue()], now });
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  const desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
  const page = await desk.get('/console/diary?location=camden&date=2026-11-23');
  expect(page.statusCode).toBe(200);
  return page.body;
}

/** The axis's hours, by label, at their tops (px). */
function axisOf(html: string): Map<string, number> {
  return new Map(
    [...html.matchAll(/<span style="top:calc\(2rem \+ (\d+)px\)">(\d\d:\d\d)<\/span>/g)].map((m) => [
      m[2]!,
      Number(m[1]),
    ]),
  );
}

function nowLineOf(html: string): { top: number; label: string } {
  const match = /<div class="now" style="top:calc\(2rem \+ (\d+)px\)" role="img" aria-label="([^"]+)"/.exec(
    html,
  );
  expect(match, 'a current-time line').not.toBeNull();
  return { top: Number(match![1]), label: match![2]! };
}

describe("the diary's current-time line", () => {
  it('is drawn at the time it is before the first hour shown, the hours widened to it, not at 08:00', async () => {
    const html = await diaryAt('2026-11-23T07:30:00Z');
    const axis = axisOf(html);
    const line = nowLineOf(html);
    expect(line.label).toBe('Now, 07:30');
    expect(axis.get('07:00')).toBeDefined();
    expect(line.top).toBe(Math.round(axis.get('07:00')! + 30 * 1.1));
  });

  it('is drawn at the time it is after the last hour shown, the hours widened to it', async () => {
    const html = await diaryAt('2026-11-23T21:15:00Z');
    const axis = axisOf(html);
    const line = nowLineOf(html);
    expect(line.label).toBe('Now, 21:15');
    expect(axis.get('21:00')).toBeDefined();
    expect(line.top).toBe(Math.round(axis.get('21:00')! + 15 * 1.1));
  });
});

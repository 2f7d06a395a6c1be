import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Time off that spans days, in the diary (inject): each day says what of it falls there. The demo
 * catalogue, Amara Okafor at Camden (London), her time off set here from Wednesday 23 December 2026
 * at 15:00 to Friday 25 December at 11:00.
 */
const PASSWORD = 'correct horse battery';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** The time-off blocks' words in Amara's column of Camden's diary on `date`. */
async function amaraOff(date: string): Promise<string[]> {
  const page = await desk.get(`/console/diary?location=camden&date=${date}`);
  expect(page.statusCode).toBe(200);
  const column = /<section class="col"[^>]*aria-label="Amara Okafor[^"]*">(.*?)<\/section>/s.exec(
    page.body,
  )![1]!;
  return [...column.matchAll(/<div class="off" [^>]*>([^<]*)<\/div>/g)].map((m) => m[1]!);
}

let desk: Awaited<ReturnType<typeof signInToConsole>>;

describe('time off over several days in the diary', () => {
  it('says its hours where it starts and ends, from or until them, and all day between', async () => {
    const catalogue = demoCatalogue() as {
      staff: { ref: string; time_off?: { start: string; end: string; reason?: string }[] }[];
    };
    catalogue.staff.find((member) => member.ref === 'amara')!.time_off = [
      { start: '2026-12-23T15:00', end: '2026-12-25T11:00', reason: 'Away' },
      { start: '2026-12-28T12:00', end: '2026-12-28T13:00' },
    ];
    t = await startTestApp({ catalogues: [catalogue], now: '2026-11-23T09:00:00Z' });
    await createUser(
      t.database.db,
      { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
      t.clock.nowMs(),
    );
    desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
    expect(await amaraOff('2026-12-23')).toEqual(['Time off from 15:00']);
    expect(await amaraOff('2026-12-24')).toEqual(['Time off all day']);
    expect(await amaraOff('2026-12-25')).toEqual(['Time off until 11:00']);
    expect(await amaraOff('2026-12-28')).toEqual(['Time off 12:00–13:00']);
  });
});

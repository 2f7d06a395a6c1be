import { afterEach, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { connectInProcess } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Review: MCP `reschedule` says "That is the time it already has, so nothing changed" whenever the
 * visit asked about keeps its time, although with scope "following" the engine moves every later
 * visit to that wall time (followingMove): a later visit moved on its own before is moved back, and
 * its customer is sent a "moved" message. The answer must not say nothing changed.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

it('does not say "nothing changed" when scope following moved a later visit', async () => {
  t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
  const mcp = await connectInProcess(t, t.keys.readWrite);
  try {
    const booked = await mcp.call('book', {
      location: 'soho',
      services: 'cut',
      staff: 'Ana',
      starts_at: '2027-03-16T10:00:00Z',
      client_id: (await catalogueIds(t.database.db)).jo,
      repeat: { every_weeks: 2, count: 3 },
    });
    const refs = (booked.series as { occurrences: { reference: string }[] }).occurrences.map((o) => o.reference);
    // The third visit alone moves to 11 am.
    const alone = await mcp.call('reschedule', { reference: refs[2], starts_at: '2027-04-13T11:00:00+01:00' });
    expect(alone, JSON.stringify(alone)).toMatchObject({ ok: true });
    // "Keep this one at 10 and put the following ones at 10 too."
    const again = await mcp.call('reschedule', {
      reference: refs[0],
      starts_at: '2027-03-16T10:00:00Z',
      scope: 'following',
    });
    expect(again, JSON.stringify(again)).toMatchObject({ ok: true });
    const third = (await t.request({ method: 'GET', url: `/v1/bookings/${refs[2]}` })).json().data;
    // The engine did change something: the third visit is back at 10 am.
    expect(third.starts_at).toBe('2027-04-13T10:00:00+01:00');
    // ...yet the caller is told nothing changed.
    expect(again.spoken).not.toMatch(/nothing changed/);
  } finally {
    await mcp.close();
  }
});

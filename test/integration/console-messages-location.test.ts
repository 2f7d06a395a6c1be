import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMessages, markMessageDone, takeMessage } from '../../src/app/message-service.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { addAcmeAccount, signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The console's Messages page of an organisation with two locations (the small catalogue: Kings
 * Cross and Soho): a message the phone agent took about one location says which, so the desk of
 * that salon knows the call back is theirs.
 */
const PASSWORD = 'correct horse battery staple';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  await addAcmeAccount(t, 'desk@acme.test', 'staff', PASSWORD);
});
afterAll(async () => {
  await t.close();
});

describe('console: messages', () => {
  it('says which location a message is about', async () => {
    const ids = await catalogueIds(t.database.db);
    await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Pat', message: 'Please call back about colour', locationSlug: 'soho' },
      t.clock.nowMs(),
    );
    await takeMessage(
      t.database.db,
      ids.organisation,
      { callerName: 'Lee', message: 'Any parking nearby?' },
      t.clock.nowMs(),
    );
    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
    const page = await desk.get('/console/messages');
    expect(page.statusCode).toBe(200);
    const cards = [...page.body.matchAll(/<div class="card">([\s\S]*?)<\/div>/g)].map((m) => m[1]!);
    const pat = cards.find((card) => card.includes('Pat'))!;
    expect(pat).toContain('Soho');
    const lee = cards.find((card) => card.includes('Lee'))!;
    expect(lee).not.toContain('Soho');
    expect(lee).not.toContain('Kings Cross');
  });
});

describe('console: many messages', () => {
  it('shows every open message and the latest 20 done ones, reading no more than those', async () => {
    const ids = await catalogueIds(t.database.db);
    const taken: string[] = [];
    for (let i = 1; i <= 25; i++) {
      t.clock.advance({ minutes: 1 });
      const message = await takeMessage(
        t.database.db,
        ids.organisation,
        { callerName: `Caller ${i}`, message: `Call back ${i}` },
        t.clock.nowMs(),
      );
      taken.push(message.id);
    }
    for (const id of taken.slice(0, 23)) await markMessageDone(t.database.db, id, t.clock.nowMs());
    const done = await listMessages(t.database.db, ids.organisation, { status: 'done', latest: 20 });
    expect(done.map((m) => m.callerName)).toEqual(Array.from({ length: 20 }, (_, i) => `Caller ${i + 4}`));
    const desk = await signInToConsole(t, 'acme-hair', 'desk@acme.test', PASSWORD);
    const page = (await desk.get('/console/messages')).body;
    const open = await listMessages(t.database.db, ids.organisation, { status: 'open' });
    expect(open.map((m) => m.callerName)).toEqual(expect.arrayContaining(['Caller 24', 'Caller 25']));
    expect(page).toContain(`<h2>Open (${open.length})</h2>`);
    for (const shown of ['Caller 24', 'Caller 25', 'Caller 23', 'Caller 4'])
      expect(page).toContain(`<strong>${shown}</strong>`);
    for (const older of ['Caller 1', 'Caller 2', 'Caller 3'])
      expect(page).not.toContain(`<strong>${older}</strong>`);
    // Done ones latest first.
    expect(page.indexOf('<strong>Caller 23</strong>')).toBeLessThan(
      page.indexOf('<strong>Caller 4</strong>'),
    );
  });
});

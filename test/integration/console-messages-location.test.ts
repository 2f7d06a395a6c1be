import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeMessage } from '../../src/app/message-service.ts';
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

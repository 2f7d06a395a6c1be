import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { type SignedIn, signInNewAccount } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A date on which the location's zone left local mean time (London, 1 December 1847: clocks 1 min
 * 15 s behind GMT until then) is answered at once by every face that takes a date, as any other
 * past date is; it used to keep the process searching for the change of the clocks for ever.
 */
let t: TestApp;
let desk: SignedIn;
let cut: string;

beforeAll(async () => {
  t = await startTestApp();
  desk = await signInNewAccount(t, 'acme-hair', 'desk@acme.test', 'staff');
  cut = (await catalogueIds(t.database.db)).services.cut!;
});
afterAll(() => t.close());

describe('the day London took GMT', () => {
  it('availability: no times, as for any past day', async () => {
    const response = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/availability?service_ids=${cut}&date=1847-12-01&days=2`,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data.slots).toEqual([]);
  });

  it("the console's diary and booking page show the day", async () => {
    for (const url of [
      '/console/diary?location=soho&date=1847-12-01',
      '/console/diary?location=soho&date=1847-11-30&view=week',
      `/console/book?location=soho&date=1847-12-01&service_id=${cut}`,
    ]) {
      const response = await desk.get(url);
      expect(response.statusCode, `${url}: ${response.body.slice(0, 300)}`).toBe(200);
    }
  });

  it('the public page offers today instead', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/p/acme-hair/soho?service_ids=${cut}&date=1847-12-01`,
    });
    expect(response.statusCode).toBeLessThan(500);
  });
});

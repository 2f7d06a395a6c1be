import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitlistEntriesPage } from '../../src/data/waitlist-repository.ts';
import { deliveriesOf } from '../../src/data/webhook-repository.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { joinForAna } from '../helpers/waitlist-fixtures.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The waitlist and a webhook endpoint's deliveries are read in the page sizes every listing reads
 * (page-query.ts), whatever size a client asks for, so that each listing is a few statements, not a
 * hundred; the pages answered are the same. Nine entries and nine deliveries; Monday 23 November 2026.
 */
const NOW = '2026-11-23T09:00:00Z';
const NAMES = ['Ada', 'Bea', 'Cy', 'Dee', 'Eve', 'Fay', 'Gus', 'Hal', 'Ivy'];

let t: TestApp;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let endpoint: string;

beforeAll(async () => {
  t = await startTestApp({
    catalogues: [smallCatalogue()],
    now: NOW,
    limits: { requestsPerMinute: 100_000 },
    webhookDestinations: { allowInsecure: true, allowPrivateNetworks: false },
  });
  for (const name of NAMES) await joinForAna(t, name);
  receiver = await startWebhookReceiver({ nowSeconds: () => Math.floor(t.clock.nowMs() / 1000) });
  const created = await t.request({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    payload: { url: receiver.url, events: ['booking.created'] },
  });
  expect(created.statusCode, created.body).toBe(201);
  endpoint = created.json().data.id;
  for (const _ of NAMES) {
    const sent = await t.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint}/test` });
    expect(sent.statusCode, sent.body).toBe(202);
  }
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

/** Every page of `url` at `limit`, following next_cursor: the ids of each. */
async function pagesOf(url: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const answer = await t.request({
      method: 'GET',
      url: `${url}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    });
    expect(answer.statusCode, answer.body).toBe(200);
    pages.push(answer.json().data.map((item: { id: string }) => item.id));
    cursor = answer.json().next_cursor;
  } while (cursor && pages.length < 20);
  return pages;
}

describe('the waitlist and the deliveries, page by page', () => {
  for (const url of ['/v1/waitlist', 'deliveries']) {
    it(`answer ${url} in full pages of the size asked, the cursor leading to the rest`, async () => {
      const path = url === 'deliveries' ? `/v1/webhook-endpoints/${endpoint}/deliveries` : url;
      const [all] = await pagesOf(path, 100);
      expect(all).toHaveLength(9);
      expect(await pagesOf(path, 1)).toEqual(all!.map((id) => [id]));
      expect(await pagesOf(path, 7)).toEqual([all!.slice(0, 7), all!.slice(7)]);
      expect(await pagesOf(path, 9)).toEqual([all]);
    });
  }

  it('read through one statement whatever the page size asked, as the other listings', async () => {
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery(args) {
        statements.push(t.database.db.getExecutor().compileQuery(args.node, args.queryId).sql);
        return args.node;
      },
      async transformResult(args) {
        return args.result;
      },
    };
    const db = t.database.db.withPlugin(recorder);
    const { organisation } = await catalogueIds(t.database.db);
    for (const limit of [1, 7]) {
      await waitlistEntriesPage(db, organisation, {}, null, limit);
      await deliveriesOf(db, organisation, endpoint, { beforeSeq: null, limit });
    }
    expect(statements).toHaveLength(4);
    expect(statements[2]).toBe(statements[0]);
    expect(statements[3]).toBe(statements[1]);
  });
});

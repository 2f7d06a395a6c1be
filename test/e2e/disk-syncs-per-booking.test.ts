import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { type RunningServer, startServer } from '../helpers/cli.ts';
import { canTraceSyncs, countSyncs, sqliteSyncs } from '../helpers/disk-syncs.ts';
import {
  providerEnv,
  type SmtpSink,
  startSmtpSink,
  startTwilioStandIn,
  type TwilioStandIn,
} from '../helpers/message-sinks.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * One durable commit per booking (issue 47): a real `booking serve` on SQLite, its confirmations sent
 * by SMS and e-mail to stand-ins of the real providers, counted with strace. Each booking's COMMIT
 * syncs the disk once; the outbox worker's claim of its messages and the record of how they went are
 * bookkeeping redone if lost, committed without a sync (docs/decisions/bookkeeping-without-disk-sync.md).
 */
const BOOKINGS = 20;

let t: TestApp;
let ids: CatalogueIds;
let smtp: SmtpSink;
let twilio: TwilioStandIn;
let server: RunningServer;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  // Only the confirmation: a reminder a day before would be due at once on the real clock's days.
  await t.database.db.updateTable('locations').set({ reminder_hours_before: 0 }).execute();
  smtp = await startSmtpSink();
  twilio = await startTwilioStandIn();
  if (onPostgres || !canTraceSyncs) return;
  server = await startServer(['--port', '0'], {
    DATABASE_URL: t.database.url,
    ...providerEnv(smtp, twilio),
  });
});
afterAll(async () => {
  await server?.stop();
  await smtp.close();
  await twilio.close();
  await t.close();
});

async function settle(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !predicate(); i += 1) await new Promise((r) => setTimeout(r, 50));
  expect(predicate(), what).toBe(true);
}

describe.skipIf(onPostgres || !canTraceSyncs)('disk syncs of a booking on SQLite', () => {
  it(`${BOOKINGS} bookings one at a time, each confirmed by SMS and e-mail, sync the disk about once each`, async () => {
    const syncs = await countSyncs(server.process.pid!);
    const headers = { authorization: `Bearer ${t.keys.readWrite}`, 'content-type': 'application/json' };
    for (let i = 0; i < BOOKINGS; i += 1) {
      // On the real clock: the first free time of the next two weeks (tests-on-the-real-calendar).
      const today = new Date().toISOString().slice(0, 10);
      const offered = await fetch(
        `${server.url}/v1/locations/soho/availability?service_ids=${ids.services.cut}&date=${today}&days=14`,
        { headers },
      );
      const [slot] = (
        (await offered.json()) as { data: { slots: { staff_id: string; starts_at: string }[] } }
      ).data.slots;
      const response = await fetch(`${server.url}/v1/bookings`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': `sync-${i}` },
        body: JSON.stringify({
          location_slug: 'soho',
          service_ids: [ids.services.cut],
          client_id: ids.jo,
          staff_id: slot!.staff_id,
          starts_at: slot!.starts_at,
        }),
      });
      expect(response.status, await response.text()).toBe(201);
      // One at a time: its messages go out before the next booking, so no claim shares its commit.
      await settle(
        () => smtp.accepted.size === i + 1 && twilio.accepted.size === i + 1,
        'both messages sent',
      );
    }
    // The outcomes of the last messages are recorded after the provider answered.
    await new Promise((r) => setTimeout(r, 500));
    const traced = await syncs.stop();
    const seen = JSON.stringify([...traced.byFile]);
    // One sync of the WAL per booking, checkpoints apart (sqliteSyncs); three per booking before
    // (the claim, the outcome).
    const { commits, checkpoints, other } = sqliteSyncs(traced);
    expect(commits, seen).toBeLessThanOrEqual(BOOKINGS);
    // (A checkpoint that could not finish leaves the WAL as it is: no new header to sync.)
    expect(commits, seen).toBeGreaterThanOrEqual(BOOKINGS - checkpoints);
    expect(checkpoints).toBeLessThanOrEqual(2);
    expect(other).toBeLessThanOrEqual(1);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IntegrityReport } from '../../src/data/integrity-check.ts';
import {
  type CrashScenarioReport,
  prepareCrashDatabase,
  runCrashScenario,
} from '../helpers/crash-scenario.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * kill -9 in the middle of a booking load: every 201 survives intact, nothing is half written, retries
 * replay what was stored, and the event log matches the bookings. On SQLite the restart recovers the
 * WAL the killed process left; on PostgreSQL the database server outlives the killed process and rolls
 * back what its connections left open. Each round runs on a fresh copy of one prepared database and
 * kills the server at another moment of the load. In the first, the client reads whatever answers
 * still reach it; in the others it abandons its outstanding requests at the kill, so requests the
 * server committed just before dying are among the unknown ones and must be settled from the store.
 * With a webhook endpoint subscribed to booking.created, the database holds one such event per
 * booking and none without one, and (first round) the receiver gets every booking that must exist,
 * those the killed server was sending included (design.md 9.2: never lost on a crash).
 */
const ROUNDS = [
  { killAfterCreated: 300, clients: 24, abandonInFlight: false },
  { killAfterCreated: 400, clients: 32, abandonInFlight: true },
  { killAfterCreated: 500, clients: 16, abandonInFlight: true },
];

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/**
 * The receiver, for one round: what it took before is forgotten, and it verifies the round's secret.
 * Waiting for every delivery can cost the round the 30 s lease of what the killed server was sending:
 * once is enough.
 */
function webhooksOfRound(awaitDelivery: boolean) {
  receiver.received.length = 0;
  return {
    url: receiver.url,
    onSecret: (secret: string) => {
      receiver.state.secret = secret;
    },
    createdReferences: awaitDelivery
      ? () =>
          new Set(
            receiver
              .ofType('booking.created')
              .filter((r) => r.signed && r.answered === 200)
              .map((r) => String(r.json.data.reference)),
          )
      : undefined,
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function expectKeptEveryPromise(report: CrashScenarioReport, round: (typeof ROUNDS)[number]): void {
  const summary = JSON.stringify({ ...report, integrity: undefined, integrityAfterRecovery: undefined });
  expect(report.problems, summary).toEqual([]);
  // The kill landed in the middle of the load, with (on SQLite) the WAL left behind for the restart.
  expect(report.answered201).toBeGreaterThanOrEqual(round.killAfterCreated - (round.abandonInFlight ? 1 : 0));
  expect(report.inFlightAtKill, summary).toBeGreaterThan(0);
  // The abandoned 201 that triggered the kill was committed before it was sent: its retry replays it.
  if (round.abandonInFlight) expect(report.committedOfInFlight, summary).toBeGreaterThan(0);
  if (onPostgres) expect(report.walBytesAtKill).toBeNull();
  else expect(report.walBytesAtKill).toBeGreaterThan(0);
  expect(report.answeredOther, summary).toBe(0);
  // Every 201 is back, unchanged; every retry replayed its answer or settled its unknown request.
  expect(report.missing).toBe(0);
  expect(report.changed).toBe(0);
  expect(report.replayMismatches).toBe(0);
  // Each answered request replayed once, each unknown one retried twice.
  expect(report.replayed).toBe(report.attempted + report.inFlightAtKill);
  // One booking per key that got a 201, each with its stored response: nothing more, nothing less.
  expect(report.keysWith201).toBe(report.answered201 + report.inFlightAtKill);
  expect(report.bookingsInDatabase).toBe(report.keysWith201);
  expect(report.storedResponses).toBe(report.keysWith201);
  // The recovered file, before any retry touched it, and the settled one keep every invariant.
  expect(brokenInvariants(report.integrityAfterRecovery), 'after recovery').toEqual([]);
  expect(report.integrityAfterRecovery.ok).toBe(true);
  expect(report.integrityAfterRecovery.bookings).toBe(report.answered201 + report.committedOfInFlight);
  expect(brokenInvariants(report.integrity), 'once settled').toEqual([]);
  expect(report.integrity.ok).toBe(true);
  expect(report.integrity.bookings).toBe(report.keysWith201);
  expect(report.integrity.liveBookings).toBe(report.keysWith201);
  // Each booking's booking.created was written with it (and, when awaited, delivered).
  expect(report.webhooks?.events).toBe(report.keysWith201);
  if (report.webhooks?.undelivered !== null) expect(report.webhooks?.undelivered).toBe(0);
}

function brokenInvariants(report: IntegrityReport) {
  return report.findings.filter((finding) => finding.violations > 0);
}

describe('crash recovery', () => {
  it('keeps every answered booking whole through kill -9 mid-load and a restart', async () => {
    const templateDir = mkdtempSync(path.join(tmpdir(), 'booking-crash-template-'));
    dirs.push(templateDir);
    // The catalogue and key are made once with the command line; each round crashes a copy.
    const prepared = await prepareCrashDatabase(templateDir);
    try {
      for (const round of ROUNDS) {
        const dir = mkdtempSync(path.join(tmpdir(), 'booking-crash-'));
        dirs.push(dir);
        const webhooks = webhooksOfRound(round === ROUNDS[0]);
        const report = await runCrashScenario({ dir, prepared, ...round, webhooks });
        const { integrity, integrityAfterRecovery, problems, ...figures } = report;
        // Sent more than once: what the killed server was sending, sent again after its lease lapsed.
        const ids = receiver.received.map((r) => r.json.id);
        const resent = ids.length - new Set(ids).size;
        console.info(
          `crash round ${JSON.stringify(round)}: ${JSON.stringify(figures)}, webhook requests ${ids.length}, resent ${resent}`,
        );
        expectKeptEveryPromise(report, round);
      }
    } finally {
      await prepared.drop();
    }
  }, 180_000);
});

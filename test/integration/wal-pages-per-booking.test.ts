import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogueIds, catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a booking's COMMIT writes on SQLite (issue 47): the pages it changed, each appended to the WAL
 * as a frame and synced with it. Every b-tree a booking writes (a table, each of its indexes) is at
 * least one page; fewer pages mean less to sync per booking and checkpoints further apart
 * (docs/decisions/pages-per-booking.md).
 */
const BOOKINGS = 8;
/** A REST booking with an Idempotency-Key, confirmed by SMS and e-mail with their reminders. */
const MOST_PAGES = 18;

let t: TestApp;
let ids: CatalogueIds;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

/** Frames in the WAL file (after its 32-byte header, each a 24-byte header and a page). */
async function walFrames(): Promise<number> {
  const pageSize = (await sql<{ page_size: number }>`PRAGMA page_size`.execute(t.database.db)).rows[0]!
    .page_size;
  const bytes = statSync(`${t.database.file}-wal`).size;
  return bytes === 0 ? 0 : (bytes - 32) / (pageSize + 24);
}

describe.skipIf(onPostgres)('pages a booking writes on SQLite', () => {
  it(`a REST booking appends at most ${MOST_PAGES} pages to the WAL`, async () => {
    const frames: number[] = [];
    for (let i = 0; i < BOOKINGS; i += 1) {
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(t.database.db);
      expect(await walFrames()).toBe(0);
      const time = `${String(9 + i).padStart(2, '0')}:00`;
      const response = await postBooking(
        t,
        {
          location_slug: 'soho',
          service_ids: [ids.services.cut],
          staff_id: ids.staff.ana,
          client_id: ids.jo,
          starts_at: `2026-11-30T${time}:00+00:00`,
        },
        { idempotencyKey: `pages-${i}` },
      );
      expect(response.statusCode, response.body).toBe(201);
      frames.push(await walFrames());
    }
    frames.sort((a, b) => a - b);
    const median = frames[Math.floor(frames.length / 2)]!;
    console.log(`WAL pages per booking: median ${median}, ${frames.join(' ')}`);
    expect(median).toBeLessThanOrEqual(MOST_PAGES);
  });
});

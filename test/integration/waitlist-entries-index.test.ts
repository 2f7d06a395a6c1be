import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every booking reads its client's waiting entries at its location (a booking that fits one ends it,
 * design.md 9.4): through the client's index (migration 0039), not every entry waiting there.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

it.skipIf(onPostgres)("reads a client's waiting entries through the client's index", async () => {
  t = await startTestApp();
  const plan = await sql<{ detail: string }>`EXPLAIN QUERY PLAN
    SELECT * FROM waitlist_entries
    WHERE organisation_id = ${'o'} AND location_id = ${'l'} AND status = 'waiting' AND client_id = ${'c'}`.execute(
    t.database.db,
  );
  expect(plan.rows.map((row) => row.detail).join('\n')).toContain('USING INDEX waitlist_entries_client');
});

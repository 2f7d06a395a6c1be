import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { bookingsAt as turnOfBookingsAt } from '../../src/data/write-locks.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAnaOnTuesday, joinForAna, TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * The waitlist worker when the database fails it mid-pass: the freed time it was offering is offered
 * at a later pass, by itself, not forgotten until some other change at the location asks again.
 */
const NOW = '2026-11-23T09:00:00Z';
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe.runIf(onPostgres)('the waitlist worker on PostgreSQL', () => {
  it('offers the freed time at the next pass after its connection was terminated while offering it', async () => {
    t = await startTestApp({ now: NOW });
    const ids = await catalogueIds(t.database.db);
    const booked = await bookAnaOnTuesday(t, ['12', '13', '14', '15', '16']);
    const { id: entryId } = await joinForAna(t, 'Ada', { times: ['afternoon'] });
    const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get('14')}/cancel` });
    expect(cancelled.statusCode, cancelled.body).toBe(200);

    const admin = new pg.Client({ connectionString: t.database.url });
    const holder = new pg.Client({ connectionString: t.database.url });
    await admin.connect();
    await holder.connect();
    try {
      // Another writer holds the location's turn: the worker's offer waits for it, and its backend goes.
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        turnOfBookingsAt(ids.locations.soho!),
      ]);
      const pass = waitlistPass(t).then(
        () => 'done',
        () => 'failed',
      );
      let pid: number | undefined;
      for (let tries = 0; tries < 500 && pid === undefined; tries++) {
        const { rows } = await admin.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND wait_event_type = 'Lock'`,
        );
        pid = rows[0]?.pid;
        if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(pid).toBeDefined();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await pass).toBe('failed');
      await holder.query('COMMIT');
    } finally {
      await holder.end();
      await admin.end();
    }

    // The worker's next passes, nothing else changed at the location: at once (the database
    // refusing still, the retry waits), then a few seconds later.
    expect(await waitlistPass(t)).toBe(0);
    t.clock.advance({ seconds: 10 });
    expect((await waitlistPass(t)) + (await waitlistPass(t))).toBe(1);
    const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${entryId}` })).json().data;
    expect(entry.offer).toMatchObject({ starts_at: `${TUESDAY}T14:00:00+00:00` });
  });
});

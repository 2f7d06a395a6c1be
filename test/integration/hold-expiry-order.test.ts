import { afterEach, describe, expect, it } from 'vitest';
import { expireHolds } from '../../src/data/hold-expiry.ts';
import { writeTransaction } from '../../src/data/write-transaction.ts';
import type { BookingStatus } from '../../src/domain/booking/state-machine.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Two writers expiring the same lapsed holds (the sweeper and the waitlist worker, or two instances)
 * take them in one order, whatever order each found them in: in opposite orders each would hold the
 * row the other waits for, and PostgreSQL would abort one of them as a deadlock. Each writer here
 * pauses after its first hold until the other has taken one too, or for 300 ms.
 */
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe.skipIf(!onPostgres)('lapsed holds expired by two writers at once', () => {
  it('expires each once, with no deadlock, whatever order each writer found them in', async () => {
    t = await startTestApp({ now: '2026-11-23T09:00:00Z' });
    const ids = await catalogueIds(t.database.db);
    const [ana, bo] = Object.values(ids.staff) as [string, string];
    const hold = (staffId: string) =>
      bookingRow(
        {
          organisationId: ids.organisation,
          locationId: Object.values(ids.locations)[0]!,
          staffId,
          clientId: ids.jo,
          startsAt: Date.parse('2026-11-24T10:00:00Z'),
          endsAt: Date.parse('2026-11-24T10:30:00Z'),
        },
        { status: 'pending_payment', hold_expires_at: Date.parse('2026-11-23T08:00:00Z') },
      );
    const rows = [hold(ana), hold(bo)];
    await t.database.db.insertInto('bookings').values(rows).execute();
    const lapsed = rows.map((r) => ({
      id: r.id,
      organisation_id: r.organisation_id,
      status: r.status as BookingStatus,
    }));

    let firsts = 0;
    let bothStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      bothStarted = resolve;
    });
    const writer = (order: typeof lapsed, actor: string) => {
      let logged = 0;
      return writeTransaction(t.database.db, (trx) =>
        expireHolds(trx, order, t.clock.nowMs(), actor, async () => {
          logged += 1;
          if (logged > 1) return;
          firsts += 1;
          if (firsts === 2) bothStarted();
          await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 300))]);
        }),
      );
    };
    const expired = await Promise.all([writer(lapsed, 'a'), writer([...lapsed].reverse(), 'b')]);
    expect(expired[0] + expired[1]).toBe(2);
    const statuses = await t.database.db
      .selectFrom('bookings')
      .select('status')
      .where('status', '=', 'expired')
      .execute();
    expect(statuses).toHaveLength(2);
  });
});

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { LIVE_STATUSES } from '../../src/domain/booking/state-machine.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Agents booking overlapping recurring series at once (design.md 9.5), on SQLite and on PostgreSQL
 * (where the requests run on separate connections): no occurrence of any series overlaps a live
 * booking of its staff member, and each series is booked whole or not at all. The small catalogue:
 * Ana does Cuts (an hour with the buffer) at Soho on Mondays and Tuesdays 09:00-17:00, Bo on
 * Wednesdays; Monday 1 March 2027, across the clock change of 28 March.
 */
const NOW = '2027-03-01T09:00:00Z';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const series = fc.record({
  /** Weeks from 8 March and the day: Monday or Tuesday of that week. */
  week: fc.integer({ min: 0, max: 3 }),
  tuesday: fc.boolean(),
  hour: fc.integer({ min: 9, max: 11 }),
  everyWeeks: fc.integer({ min: 1, max: 3 }),
  count: fc.integer({ min: 2, max: 6 }),
  named: fc.boolean(),
});

describe('concurrent recurring series', () => {
  it('never double-books an occurrence, and books each series whole or not at all', async () => {
    // The runs must see both outcomes, or the property says nothing about the race.
    const seen = { booked: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(series, { minLength: 2, maxLength: 4 }), async (asks) => {
        t = await startTestApp({ now: NOW, limits: { requestsPerMinute: 100_000 } });
        const app = t;
        try {
          const ids = await catalogueIds(app.database.db);
          const clients = await Promise.all(
            asks.map(async (_, i) => {
              const made = await app.request({
                method: 'POST',
                url: '/v1/clients',
                payload: { first_name: `Regular${i}`, last_name: 'Series', email: `regular${i}@example.com` },
              });
              return made.json().data.id as string;
            }),
          );
          const responses = await Promise.all(
            asks.map((ask, i) => {
              const day = 8 + 7 * ask.week + (ask.tuesday ? 1 : 0);
              return app.request({
                method: 'POST',
                url: '/v1/bookings',
                payload: {
                  location_slug: 'soho',
                  service_ids: [ids.services.cut],
                  ...(ask.named && { staff_id: ids.staff.ana }),
                  client_id: clients[i],
                  starts_at: `2027-03-${String(day).padStart(2, '0')}T${String(ask.hour).padStart(2, '0')}:00:00Z`,
                  repeat: { every_weeks: ask.everyWeeks, count: ask.count },
                },
              });
            }),
          );
          const rows = await app.database.db
            .selectFrom('bookings')
            .select(['client_id', 'staff_id', 'starts_at', 'blocked_until', 'status', 'series_id'])
            .execute();
          const live = rows.filter((r) => (LIVE_STATUSES as readonly string[]).includes(r.status));
          // No two live bookings of one staff member overlap.
          for (const a of live) {
            for (const b of live) {
              if (a === b || a.staff_id !== b.staff_id) continue;
              const overlap =
                Number(a.starts_at) < Number(b.blocked_until) &&
                Number(b.starts_at) < Number(a.blocked_until);
              expect(overlap, `${a.starts_at} and ${b.starts_at} overlap`).toBe(false);
            }
          }
          // Each series whole (201, count occurrences sharing one series_id) or nothing (409).
          for (const [i, response] of responses.entries()) {
            const mine = rows.filter((r) => r.client_id === clients[i]);
            if (response.statusCode === 201) {
              seen.booked += 1;
              expect(mine).toHaveLength(asks[i]!.count);
              expect(new Set(mine.map((r) => r.series_id)).size).toBe(1);
              expect(mine[0]!.series_id).toBe(response.json().data.series.id);
            } else {
              seen.refused += 1;
              expect(response.statusCode, response.body).toBe(409);
              expect(response.json().error.code).toBe('conflict');
              expect(mine).toEqual([]);
            }
          }
        } finally {
          await app.close();
          t = undefined;
        }
      }),
      { numRuns: 8, seed: 4242 },
    );
    expect(seen.booked).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });
});

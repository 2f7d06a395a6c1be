import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AvailabilityQuery } from '../../src/domain/availability/types.ts';
import { type TimeOfDay, timeOfDay } from '../../src/domain/waitlist.ts';
import { oracleSlots } from '../helpers/availability-oracle.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { startTestApp, TEST_START, type TestApp } from '../helpers/test-app.ts';
import { anaTuesdayStarts, bookAna, TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * Offered holds against everything else (design.md 9.4): whatever was booked, cancelled and asked
 * for, after the waitlist worker's pass
 * - availability equals the independent oracle's, given the database's live bookings and holds, offers
 *   included: an offered hold is busy like any hold;
 * - no returned slot overlaps an offered hold, and booking one's start for someone else is refused;
 * - each entry holds at most one offer, for a time that suits it, and no two hold the same time.
 * Ana's Tuesday at Soho in the small catalogue (09:00-17:00 London, Cut 45 + 15 minutes).
 */
const MINUTE = 60_000;
const HOURS = [9, 10, 11, 12, 13, 14, 15, 16];

let t: TestApp;
let ids: CatalogueIds;
beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
});
afterAll(async () => {
  await t.close();
});

const json = (response: { body: string }) => JSON.parse(response.body);

/** Everything of a run goes, so the next starts from an empty Tuesday. */
async function reset() {
  const db = t.database.db;
  await db.deleteFrom('waitlist_offers').execute();
  await db.deleteFrom('waitlist_rescans').execute();
  await db.deleteFrom('waitlist_entries').execute();
  await db
    .updateTable('bookings')
    .set({ status: 'cancelled', cancelled_at: t.clock.nowMs() })
    .where('status', '<>', 'cancelled')
    .execute();
}

const hourAt = (hour: number) => `${TUESDAY}T${String(hour).padStart(2, '0')}:00:00Z`;

/** Ana's free starts on Tuesday, as instants. */
const tuesdayStarts = async () => (await anaTuesdayStarts(t)).map((start) => Date.parse(start));

/** The oracle's starts from the database's live bookings of Ana (holds with their expiry). */
async function oracleStarts(): Promise<number[]> {
  const rows = await t.database.db
    .selectFrom('bookings')
    .select(['starts_at', 'ends_at', 'blocked_until', 'hold_expires_at', 'status'])
    .where('staff_id', '=', ids.staff.ana!)
    .where('status', 'in', ['confirmed', 'pending_confirmation', 'pending_payment'])
    .execute();
  const query: AvailabilityQuery = {
    timezone: 'Europe/London',
    slotIntervalMinutes: 15,
    minNoticeMinutes: 60,
    maxAdvanceDays: 60,
    closedDates: new Set(),
    services: [{ id: ids.services.cut!, durationMinutes: 45, bufferAfterMinutes: 15 }],
    staff: [
      {
        id: ids.staff.ana!,
        name: 'Ana',
        workingHours: [1, 2].map((weekday) => ({ weekday, startMinute: 540, endMinute: 1020 })),
        timeOff: [],
        bookings: rows.map((r) => ({
          startsAt: r.starts_at,
          endsAt: r.ends_at,
          blockedUntil: r.blocked_until,
          holdExpiresAt: r.status === 'confirmed' ? null : r.hold_expires_at,
        })),
      },
    ],
    fromDate: TUESDAY,
    days: 1,
    now: t.clock.nowMs(),
  };
  return oracleSlots(query).map((slot) => slot.startsAt);
}

const scenario = fc.record({
  booked: fc.subarray(HOURS),
  cancelled: fc.subarray(HOURS),
  cancelledLater: fc.subarray(HOURS),
  entries: fc.array(fc.subarray([...(['morning', 'afternoon', 'evening'] as TimeOfDay[])]), {
    minLength: 1,
    maxLength: 4,
  }),
  minutesLater: fc.integer({ min: 0, max: 30 }),
});

describe('offered holds', () => {
  it('are busy like any hold, never bookable by others, one per entry, suiting it', {
    timeout: 240_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ booked, cancelled, cancelledLater, entries, minutesLater }) => {
        t.clock.set(TEST_START);
        await reset();
        const references = new Map<number, string>();
        for (const hour of booked) references.set(hour, json(await bookAna(t, hourAt(hour))).data.reference);
        const joined: { id: string; times: TimeOfDay[] }[] = [];
        for (const [n, times] of entries.entries()) {
          const answer = await t.request({
            method: 'POST',
            url: '/v1/waitlist',
            payload: {
              location_slug: 'soho',
              service_ids: [ids.services.cut],
              staff_id: ids.staff.ana,
              client: { first_name: 'Wait', last_name: `Er${n}`, email: `waiter${n}@example.com` },
              from_date: TUESDAY,
              to_date: TUESDAY,
              times,
            },
          });
          expect(answer.statusCode, answer.body).toBe(201);
          joined.push({ id: json(answer).data.id, times });
        }
        for (const hour of cancelled) {
          const reference = references.get(hour);
          if (reference) await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
        }
        const pass = () => waitlistPass(t);
        await pass();
        t.clock.advance({ minutes: minutesLater });
        for (const hour of cancelledLater) {
          const reference = references.get(hour);
          if (reference) await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel` });
        }
        await pass();

        const starts = await tuesdayStarts();
        expect(starts).toEqual(await oracleStarts());
        const now = t.clock.nowMs();
        const offers = [];
        for (const entry of joined) {
          const read = json(await t.request({ method: 'GET', url: `/v1/waitlist/${entry.id}` })).data;
          if (!read.offer) continue;
          const at = Date.parse(read.offer.starts_at);
          expect(Date.parse(read.offer.expires_at)).toBeGreaterThan(now);
          const local = new Date(at).getUTCHours() * 60 + new Date(at).getUTCMinutes(); // London is UTC in November
          if (entry.times.length > 0) expect(entry.times).toContain(timeOfDay(local));
          offers.push(at);
        }
        expect(new Set(offers).size).toBe(offers.length);
        const held = await t.database.db
          .selectFrom('waitlist_offers as o')
          .innerJoin('bookings as b', 'b.id', 'o.booking_id')
          .select('o.entry_id')
          .where('b.status', '=', 'pending_confirmation')
          .where('b.hold_expires_at', '>', now)
          .execute();
        expect(held).toHaveLength(offers.length);
        for (const at of offers) {
          // Nothing returned overlaps the held hour (45 minutes and 15 of buffer, either side).
          expect(starts.filter((s) => s > at - 60 * MINUTE && s < at + 60 * MINUTE)).toEqual([]);
          // Its start, for Jo: refused (the API takes the instant with any offset).
          const taken = await bookAna(t, new Date(at).toISOString().replace('.000Z', 'Z'));
          expect(taken.statusCode).toBe(409);
        }
      }),
      { numRuns: 12 },
    );
  });
});

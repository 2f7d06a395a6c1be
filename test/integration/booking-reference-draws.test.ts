import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CatalogueIds } from '../helpers/booking-fixtures.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * A booking's reference is drawn at random and the unique index decides (insertNewBooking): one taken
 * already is drawn again, within the same request and transaction. The draws are scripted here.
 *
 * The suite runs without per-file isolation (vitest.config.ts): the modules may have been loaded by
 * another file in this worker before the mock was registered. So the modules are reset and the app is
 * imported afresh, after the mock, in beforeAll.
 */
const draws: string[] = [];
vi.mock('../../src/app/booking-reference.ts', async (original) => {
  const actual = await original<typeof import('../../src/app/booking-reference.ts')>();
  return {
    ...actual,
    generateReference: (prefix: string) => draws.shift() ?? actual.generateReference(prefix),
  };
});

let t: TestApp;
let ids: CatalogueIds;
let postBooking: typeof import('../helpers/booking-fixtures.ts').postBooking;
beforeAll(async () => {
  vi.resetModules();
  const fixtures = await import('../helpers/booking-fixtures.ts');
  const { startTestApp } = await import('../helpers/test-app.ts');
  postBooking = fixtures.postBooking;
  t = await startTestApp();
  ids = await fixtures.catalogueIds(t.database.db);
});
// The app loaded above would keep the mocked draw for the files this worker runs next: they get a
// fresh graph without the mock.
afterAll(async () => {
  await t.close();
  draws.length = 0;
  vi.doUnmock('../../src/app/booking-reference.ts');
  vi.resetModules();
});

const book = (startsAt: string, idempotencyKey?: string) =>
  postBooking(
    t,
    {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: startsAt,
    },
    idempotencyKey === undefined ? {} : { idempotencyKey },
  );

describe('a booking reference', () => {
  it('taken already is drawn again, and the booking is made once', async () => {
    draws.push('AC-TAKEN2');
    const first = await book('2026-11-30T09:00:00+00:00');
    expect(first.statusCode).toBe(201);
    expect(first.json().data.reference).toBe('AC-TAKEN2');

    draws.push('AC-TAKEN2', 'AC-TAKEN2', 'AC-FRESH3');
    const second = await book('2026-11-30T11:00:00+00:00');
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().data.reference).toBe('AC-FRESH3');
    expect(draws).toEqual([]);

    const rows = await t.database.db
      .selectFrom('bookings')
      .select(['reference', 'starts_at'])
      .where('reference', 'in', ['AC-TAKEN2', 'AC-FRESH3'])
      .orderBy('starts_at')
      .execute();
    expect(rows.map((r) => r.reference)).toEqual(['AC-TAKEN2', 'AC-FRESH3']);
    const messages = await t.database.db
      .selectFrom('outbox')
      .select('reference')
      .where('reference', '=', 'AC-FRESH3')
      .execute();
    expect(messages.length).toBeGreaterThan(0);
  });

  it('taken already, with an Idempotency-Key: the key is read again with the new draw, and one booking is made', async () => {
    // On PostgreSQL the taken reference ends the transaction (its COMMIT went with the write) and the
    // unit of work runs again, the key's record read again in it; on SQLite it is drawn again inside.
    draws.push('AC-TAKEN4');
    expect((await book('2026-11-30T13:00:00+00:00')).statusCode).toBe(201);
    draws.push('AC-TAKEN4', 'AC-FRESH5');
    const made = await book('2026-11-30T14:00:00+00:00', 'draws-1');
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().data.reference).toBe('AC-FRESH5');
    expect(draws).toEqual([]);
    const again = await book('2026-11-30T14:00:00+00:00', 'draws-1');
    expect(again.json()).toEqual(made.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    const at = await t.database.db
      .selectFrom('bookings')
      .select('reference')
      .where('starts_at', '=', Date.parse('2026-11-30T14:00:00Z'))
      .execute();
    expect(at).toEqual([{ reference: 'AC-FRESH5' }]);
  });
});

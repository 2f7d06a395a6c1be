import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReplayedRefusal } from '../../src/mcp/booking-api.ts';
import { HttpBookingApi } from '../../src/mcp/http-api.ts';
import { InProcessBookingApi, principalOfKey } from '../../src/mcp/in-process-api.ts';
import { countBookings } from '../helpers/booking-fixtures.ts';
import { demoMcp } from '../helpers/mcp-harness.ts';

/**
 * A refused `book` asked again: the refusal stored under the request's Idempotency-Key is not the
 * answer once the slot is free again, and while it stands it still says why, with alternatives. The
 * clock stands at Monday 23 November 2026, 09:00 in London; Ben works at Camden on Thursdays.
 */
const demo = demoMcp();
let origin: string;
beforeAll(async () => {
  await demo.t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(demo.t.app.server.address() as AddressInfo).port}`;
});

const FIRST_CALLER = { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' };
const SECOND_CALLER = { first_name: 'Al', last_name: 'Ng', email: 'al@example.com' };

describe('book, refused and asked again', () => {
  it('explains a refusal it replays, and books once the slot is free again', async () => {
    const slot = {
      location: 'camden',
      services: 'cut',
      staff: 'Ben',
      starts_at: '2026-11-26T16:00:00+00:00',
    };
    const first = await demo.mcp.call('book', { ...slot, client: FIRST_CALLER });
    expect(first.ok).toBe(true);

    const refused = await demo.mcp.call('book', { ...slot, client: SECOND_CALLER });
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.hint).toMatch(/already booked/);
    expect(refused.alternatives).toHaveLength(3);

    // The same request again, at once and a little later: still taken, and still said why.
    for (const seconds of [0, 3, 12]) {
      demo.t.clock.advance({ seconds });
      const again = await demo.mcp.call('book', { ...slot, client: SECOND_CALLER });
      expect(again).toMatchObject({ ok: false, code: 'conflict', hint: refused.hint });
      expect(again.alternatives).toEqual(refused.alternatives);
    }

    await demo.mcp.call('cancel', { reference: first.booking.reference });
    demo.t.clock.advance({ seconds: 10 });
    const before = await countBookings(demo.t.database.db);
    // Identical calls made together still make one booking between them.
    const retries = await Promise.all(
      Array.from({ length: 4 }, () => demo.mcp.call('book', { ...slot, client: SECOND_CALLER })),
    );
    for (const retry of retries) {
      expect(retry).toMatchObject({ ok: true, status: 'confirmed' });
      expect(retry.booking.reference).toBe(retries[0].booking.reference);
    }
    expect(await countBookings(demo.t.database.db)).toBe(before + 1);
  });

  it('tells a replayed refusal from a refusal made now, in process and over HTTP, with its reason', async () => {
    const inProcess = await InProcessBookingApi.forToolCall(
      demo.t.deps,
      await principalOfKey(demo.t.deps, demo.t.keys.readWrite),
      {
        publicBaseUrl: origin,
      },
    );
    const overHttp = new HttpBookingApi({ baseUrl: `${origin}/v1`, apiKey: demo.t.keys.readWrite });
    const jo = await inProcess.findClient({ phone: '+447911123456' });
    const body = {
      location_slug: 'camden',
      service_ids: [(await inProcess.listServices('camden')).find((s) => s.name === 'Cut & blow-dry')!.id],
      client_id: jo!.id,
      // Before the clock: too soon (a refusal with a reason and details).
      starts_at: '2026-11-23T08:00:00+00:00',
    };
    for (const [api, key] of [
      [inProcess, 'refusal-in-process'],
      [overHttp, 'refusal-over-http'],
    ] as const) {
      const now = await api.createBooking(body, key).catch((error: unknown) => error);
      expect(now).not.toBeInstanceOf(ReplayedRefusal);
      expect(now).toMatchObject({ code: 'conflict', reason: 'too_soon' });
      const replayed = await api.createBooking(body, key).catch((error: unknown) => error);
      expect(replayed).toBeInstanceOf(ReplayedRefusal);
      expect(replayed).toMatchObject({
        code: 'conflict',
        reason: 'too_soon',
        details: (now as ReplayedRefusal).details,
      });
    }
  });
});

describe('book and join_waitlist for a client_id no client has', () => {
  it('say the id is unknown and how to find the caller, not "check the details with the caller"', async () => {
    const unknown = '0b7e4c1a-0000-4000-8000-000000000000';
    const booked = await demo.mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: '2026-11-26T17:00:00+00:00',
      client_id: unknown,
    });
    const waiting = await demo.mcp.call('join_waitlist', {
      location: 'camden',
      services: 'cut',
      client_id: unknown,
      from_date: 'tomorrow',
      to_date: 'friday',
    });
    for (const refused of [booked, waiting]) {
      expect(refused).toMatchObject({ ok: false, code: 'not_found' });
      expect(refused.hint).toMatch(/^No client has that client_id; .*lookup_client.*client/);
    }
  });
});

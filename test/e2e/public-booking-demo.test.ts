import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { runCliAsync, startServer } from '../helpers/cli.ts';
import { eachTestServes } from '../helpers/served-database.ts';

/**
 * A newcomer's public booking, as the README tells it: `npm start` (`booking serve --demo`) on an empty
 * database, a booking on /p/northside-hair, the code read from `booking outbox list` (the demo sends
 * nothing: its worker logs each message with its words), typed on the booking's page, and the booking
 * confirmed through REST with the key the server printed. The real processes, over real HTTP.
 */
const served = eachTestServes('booking-public-demo-');

describe('the demo’s public booking page, end to end', () => {
  it('books, shows the code step, and confirms with the code the outbox logged', async () => {
    served.server = await startServer(['--demo', '--port', '0'], served.env);
    const { url } = served.server;
    const key = /shown only once\): (bk_\w+)/.exec(served.server.stdout())?.[1];
    expect(key).toBeDefined();
    const api = async (path: string) => {
      const response = await fetch(`${url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: never }).data;
    };
    const services: { id: string; name: string }[] = await api('/locations/camden/services');
    const cut = services.find((s) => s.name === 'Cut & blow-dry')!;
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
    const { slots }: { slots: { starts_at: string }[] } = await api(
      `/locations/camden/availability?service_ids=${cut.id}&date=${from}&days=7`,
    );
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      redirect: 'manual' as const,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
      body: new URLSearchParams(fields).toString(),
    });
    const booked = await fetch(
      `${url}/p/northside-hair/book`,
      form({
        location: 'camden',
        services: cut.id,
        starts_at: new Date(Date.parse(slots[0]!.starts_at)).toISOString(),
        first_name: 'Rosa',
        last_name: 'Parks',
        phone: '07400 123456',
      }),
    );
    expect(booked.status).toBe(303);
    const page = booked.headers.get('location')!;
    const held = await (await fetch(`${url}${page}`)).text();
    expect(held).toContain('Confirm it is you');
    const reference = /<strong>(NHC-[0-9A-Z]{6})<\/strong>/.exec(held)![1]!;
    expect((await api(`/bookings/${reference}`)) as { status: string }).toMatchObject({
      status: 'pending_confirmation',
    });

    // The demo's worker logs the code within a second or so; the operator reads it on the command line.
    let code: string | undefined;
    for (let i = 0; i < 30 && code === undefined; i++) {
      const listed = await runCliAsync(['outbox', 'list', '--org', 'northside-hair'], served.env);
      expect(listed.status).toBe(0);
      code = new RegExp(`verification_code +${reference}[^\\n]*\\n +says: .*code is (\\d{6})`).exec(
        listed.stdout,
      )?.[1];
      if (code === undefined) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(code).toBeDefined();
    const verified = await fetch(`${url}${page}/verify`, form({ code: code! }));
    expect(verified.status).toBe(303);
    expect((await api(`/bookings/${reference}`)) as { status: string }).toMatchObject({
      status: 'confirmed',
    });
    expect(await (await fetch(`${url}${page}`)).text()).toContain('Booking confirmed');
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBookingApi } from '../../src/mcp/http-api.ts';
import { resolveServices, resolveStaff } from '../../src/mcp/resolution.ts';
import {
  connectInProcess,
  demoCatalogue,
  type Era,
  type Json,
  type McpHarness,
} from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * How the tools match what a caller says (design.md 8.2, "Matching"), through the SDK's client on
 * the demo catalogue, whose aliases carry the everyday words ("haircut", "blow dry", "trim",
 * "colour", "beard", "patch test"). The clock stands at Monday 23 November 2026, 09:00 in London.
 * At Camden: Amara Okafor (cut, colour, consultation) and Ben Carter (cut, beard); Chloé Martin works
 * only at Islington. The colour consultation is booked in person only.
 */
const TUESDAY = { location: 'camden', date: 'tomorrow' };

describe.each<Era>(['legacy', 'modern'])('matching names through the MCP client (%s protocol)', (era) => {
  let t: TestApp;
  let mcp: McpHarness;
  beforeAll(async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
    mcp = await connectInProcess(t, t.keys.readWrite, era);
  });
  afterAll(async () => {
    await mcp.close();
    await t.close();
  });

  const slots = (args: Json) => mcp.call('find_slots', { ...TUESDAY, ...args });
  // The services as matched, as the answer says them: "Cut & blow-dry and Full colour take 2 hours 30 minutes".
  const servicesOf = (result: Json) =>
    /\. ([^.]+) takes? \d[^.]* and costs? /.exec(result.spoken)?.[1]?.split(/, | and /);

  it('reads everyday words through the catalogue aliases', async () => {
    for (const said of [
      'haircut',
      'hair cut',
      'blowdry',
      'blow-dry',
      'mens cut',
      "a men's cut, please",
      'cut',
    ]) {
      const result = await slots({ services: said });
      expect(result.ok, said).toBe(true);
      expect(servicesOf(result), said).toEqual(['Cut & blow-dry']);
    }
    expect(servicesOf(await slots({ services: 'beard' }))).toEqual(['Beard trim']);
  });

  it('books two services back to back for "cut and colour"', async () => {
    const result = await slots({ services: 'cut and colour' });
    expect(result.ok).toBe(true);
    expect(result.spoken).toContain(
      ' Cut & blow-dry and Full colour take 2 hours 30 minutes and cost 150 pounds.',
    );
    expect(servicesOf(result)).toEqual(['Cut & blow-dry', 'Full colour']);
    // Only Amara does both.
    expect(new Set(result.slots.map((s: Json) => s.staff_name))).toEqual(new Set(['Amara Okafor']));
    expect(servicesOf(await slots({ services: ['colour & haircut'] }))).toEqual([
      'Full colour',
      'Cut & blow-dry',
    ]);
  });

  it('asks about "trim" where it could be the beard trim, and takes the cut where it cannot', async () => {
    const camden = await slots({ services: 'trim' });
    expect(camden).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Cut & blow-dry', 'Beard trim'] });
    expect(camden.hint).toBe(
      '"trim" could be several services; ask the caller which: Cut & blow-dry or Beard trim.',
    );
    const islington = await mcp.call('find_slots', {
      location: 'islington',
      services: 'trim',
      date: 'wednesday',
    });
    expect(islington.ok).toBe(true);
    expect(servicesOf(islington)).toEqual(['Cut & blow-dry']);
  });

  it('takes "colour" as the full colour and never offers the in-person consultation', async () => {
    expect(servicesOf(await slots({ services: 'colour' }))).toEqual(['Full colour']);
    expect(servicesOf(await slots({ services: 'color' }))).toEqual(['Full colour']);
    expect(servicesOf(await slots({ services: 'colur' }))).toEqual(['Full colour']);
    for (const said of ['colour consultation', 'consultation', 'patch test']) {
      const result = await slots({ services: said });
      expect(result, said).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(result.hint, said).toBe(
        "Colour consultation is not booked on this line: the salon's team books it themselves; offer to take a message for them, or give the salon's number, 0 2 0, 7 4 8 5, 0 0 0 0.",
      );
    }
  });

  it('gives an unknown service up to three bookable choices', async () => {
    const result = await slots({ services: 'perm' });
    expect(result).toMatchObject({ ok: false, code: 'not_found' });
    expect(result.choices).toHaveLength(3);
    expect([...result.choices].sort()).toEqual(['Beard trim', 'Cut & blow-dry', 'Full colour']);
    expect(result.hint).toBe(
      `Northside Camden does not offer "perm"; the closest are ${result.choices[0]}, ${result.choices[1]} or ${result.choices[2]}: ask whether one of those will do.`,
    );
    const highlights = await slots({ services: 'highlights' });
    expect(highlights).toMatchObject({ ok: false, code: 'not_found' });
    expect(highlights.choices).not.toContain('Colour consultation');
  });

  it('forgives typos and sound-alikes in a stylist’s name', async () => {
    for (const said of ['Amara Okafur', 'amara okafor', 'Amra', 'okafor', 'Amara O']) {
      const result = await slots({ services: 'cut', staff: said });
      expect(result.ok, said).toBe(true);
      expect(new Set(result.slots.map((s: Json) => s.staff_name)), said).toEqual(new Set(['Amara Okafor']));
    }
    const chloe = await mcp.call('find_slots', {
      location: 'islington',
      services: 'colour',
      staff: 'Kloey Martin',
      date: 'tuesday',
    });
    expect(chloe.slots[0].staff_name).toBe('Chloé Martin');
  });

  it('names the location where a stylist works instead of "nobody called that"', async () => {
    for (const said of ['Chloe', 'Chloé Martin', 'chloe martin']) {
      const result = await slots({ services: 'cut', staff: said });
      expect(result, said).toMatchObject({ ok: false, code: 'not_found', choices: ['Northside Islington'] });
      expect(result.hint, said).toBe(
        'Chloé Martin works at Northside Islington, not Northside Camden; offer to book there, or with Amara Okafor or Ben Carter here.',
      );
    }
    // Only those here who do the service are offered instead.
    const colour = await slots({ services: 'colour', staff: 'Chloe' });
    expect(colour.hint).toMatch(/offer to book there, or with Amara Okafor here\.$/);
    // And the other way round, with the service Amara does at Camden.
    const amara = await mcp.call('find_slots', {
      location: 'islington',
      services: 'cut',
      staff: 'Amara',
      date: 'wednesday',
    });
    expect(amara).toMatchObject({ ok: false, code: 'not_found', choices: ['Northside Camden'] });
    expect(amara.hint).toMatch(/^Amara Okafor works at Northside Camden, not Northside Islington;/);
  });

  it('gives an unknown stylist the closest names as choices', async () => {
    const result = await slots({ services: 'cut', staff: 'Zed' });
    expect(result).toMatchObject({ ok: false, code: 'not_found' });
    expect(result.hint).toBe('Nobody called "Zed" works here; the team is Amara Okafor and Ben Carter.');
    expect([...result.choices].sort()).toEqual(['Amara Okafor', 'Ben Carter']);
  });

  it('offers choices for a name of nothing but filler words', async () => {
    // "a" is dropped as a filler word: nothing is left to match, and the team is offered instead.
    const staff = await slots({ services: 'cut', staff: 'a' });
    expect(staff).toMatchObject({ ok: false, code: 'not_found' });
    expect([...staff.choices].sort()).toEqual(['Amara Okafor', 'Ben Carter']);
    // Only those who do the services asked for.
    const colour = await slots({ services: 'colour', staff: 'a' });
    expect(colour).toMatchObject({ ok: false, code: 'not_found', choices: ['Amara Okafor'] });
    const service = await slots({ services: 'the' });
    expect(service).toMatchObject({ ok: false, code: 'not_found' });
    expect([...service.choices].sort()).toEqual(['Beard trim', 'Cut & blow-dry', 'Full colour']);
  });

  it('books what it matched: "haircut" with "Amara Okafur"', async () => {
    const offered = await slots({ services: 'haircut', staff: 'Amara Okafur', time_of_day: 'afternoon' });
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'haircut',
      staff: 'Amara Okafur',
      starts_at: offered.slots[era === 'legacy' ? 0 : 1].starts_at,
      client: {
        first_name: 'Noor',
        last_name: 'Haddad',
        phone: era === 'legacy' ? '07911 123458' : '07911 123459',
      },
    });
    expect(booked, JSON.stringify(booked)).toMatchObject({
      ok: true,
      booking: { staff_name: 'Amara Okafor' },
    });
    expect(booked.booking.service_names).toEqual(['Cut & blow-dry']);
  });
});

describe('matching on a catalogue without aliases', () => {
  let t: TestApp;
  let mcp: McpHarness;
  beforeAll(async () => {
    const bare = demoCatalogue() as Json;
    for (const service of bare.services) delete service.aliases;
    t = await startTestApp({ catalogues: [bare], limits: { requestsPerMinute: 100_000 } });
    mcp = await connectInProcess(t, t.keys.readWrite);
  });
  afterAll(async () => {
    await mcp.close();
    await t.close();
  });

  const slots = (args: Json) => mcp.call('find_slots', { ...TUESDAY, ...args });

  it('offers a word of a longer name for confirmation instead of taking it', async () => {
    const trim = await slots({ services: 'trim' });
    expect(trim).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Beard trim'] });
    expect(trim.hint).toBe(
      '"trim" is not quite a name here; ask the caller whether they mean the service Beard trim.',
    );
    const colour = await slots({ services: 'colour' });
    expect(colour).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Full colour'] });
    const haircut = await slots({ services: 'haircut' });
    expect(haircut).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Cut & blow-dry'] });
    // The whole name, or nearly, needs no confirmation.
    expect((await slots({ services: 'cut and blowdry' })).ok).toBe(true);
    expect((await slots({ services: 'full color' })).ok).toBe(true);
  });

  it('asks about each part of "cut and colour" that is only a word of a name', async () => {
    const result = await slots({ services: 'cut and colour' });
    expect(result).toMatchObject({ ok: false, code: 'ambiguous', choices: ['Cut & blow-dry'] });
    expect(result.hint).toMatch(/^"cut" is not quite a name here;/);
  });
});

describe('matching over HTTP (booking mcp --base-url)', () => {
  it('reads the aliases from the REST listings, and an older instance without them lists none', async () => {
    const t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as { port: number };
      const api = new HttpBookingApi({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: t.keys.read });
      const [camden] = await api.listLocations();
      const place = { location: camden!, zone: 'Europe/London', locale: 'en-GB' as const, phoneSpoken: null };
      const [cut] = await resolveServices(api, place, 'blow dry');
      expect(cut!.name).toBe('Cut & blow-dry');
      const amara = await resolveStaff(api, place, 'Amara Okafur', [cut!]);
      expect(amara.name).toBe('Amara Okafor');

      const older: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        const body = (await response.json()) as Json;
        if (Array.isArray(body.data)) for (const item of body.data) delete item.aliases;
        return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
      };
      const old = new HttpBookingApi({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        apiKey: t.keys.read,
        fetch: older,
      });
      const services = await old.listServices('camden');
      expect(services.map((s) => s.aliases)).toEqual([[], [], [], []]);
      expect((await old.listStaff('camden')).every((s) => Array.isArray(s.aliases))).toBe(true);
    } finally {
      await t.close();
    }
  });
});

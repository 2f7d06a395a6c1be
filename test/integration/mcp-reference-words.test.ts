import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, type Json, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { KATHMANDU } from '../helpers/world-catalogues.ts';

/**
 * A booking reference whose prefix (or code) is itself a word of the spelling alphabet, through the
 * SDK's client: "golf" is the letter G when a caller spells with it, and the prefix GOLF when that is
 * the salon's. The Golf Salon's references start GOLF-, the G Salon's G-; each has a booking with the
 * code 2DSDKB, and the Golf Salon one whose code starts with PAPA.
 */
function salon(slug: string, prefix: string, references: readonly string[]): unknown {
  const copy = structuredClone(KATHMANDU) as Json;
  Object.assign(copy.organisation, { slug, name: `${prefix} Salon`, booking_reference_prefix: prefix });
  copy.bookings = references.map((reference, i) => ({
    reference,
    location: 'thamel',
    services: ['cut'],
    staff: 'sita',
    client: 'regular',
    starts_at: `2026-11-24T1${i}:00:00`,
    status: 'confirmed',
    notes: null,
    deposit_paid: false,
  }));
  return copy;
}

let t: TestApp;
let golf: McpHarness;
let g: McpHarness;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: [
      salon('golf-salon', 'GOLF', ['GOLF-2DSDKB', 'GOLF-PAPA2X']),
      salon('g-salon', 'G', ['G-2DSDKB']),
    ],
  });
  golf = await connectInProcess(t, await t.keyFor('golf-salon'));
  g = await connectInProcess(t, await t.keyFor('g-salon'));
});
afterAll(async () => {
  await golf?.close();
  await g?.close();
  await t.close();
});

const found = async (mcp: McpHarness, said: string) => {
  const answer = await mcp.call('get_booking', { reference: said });
  return answer.ok ? answer.booking.reference : answer.code;
};

describe('a reference with a spelling-alphabet word in it', () => {
  it('reads the word as itself when that is the reference on file', async () => {
    for (const said of [
      'GOLF-2DSDKB',
      'golf 2dsdkb',
      'Golf dash 2DSDKB',
      'golf dash two d s delta k b',
      'G O L F dash 2 D S D K B',
    ]) {
      expect(await found(golf, said), said).toBe('GOLF-2DSDKB');
    }
    for (const said of ['GOLF-PAPA2X', 'golf papa2x', 'golf dash papa 2 x', 'PAPA2X', 'papa-2x']) {
      expect(await found(golf, said), said).toBe('GOLF-PAPA2X');
    }
    // Spelled, "papa" is P: no booking has the code P... here.
    expect(await found(golf, 'golf dash papa alfa papa alfa 2 x')).toBe('GOLF-PAPA2X');
  });

  it('reads a reference spelled word by word, prefix and all, in the spelling alphabet', async () => {
    const spelled = 'golf oscar lima foxtrot dash two delta sierra delta kilo bravo';
    expect(spelled.length).toBeGreaterThan(60);
    expect(await found(golf, spelled)).toBe('GOLF-2DSDKB');
    expect(await found(g, 'golf dash two delta sierra delta kilo bravo')).toBe('G-2DSDKB');
    const message = await g.call('take_message', {
      caller_name: 'Ram',
      message: 'Please call me back about my booking.',
      reference: 'golf dash two delta sierra delta kilo bravo',
    });
    expect(message.ok).toBe(true);
  });

  it('reads the word as its letter when that is the reference on file', async () => {
    for (const said of ['golf 2dsdkb', 'golf dash 2 d s delta k b', 'G-2DSDKB', '2DSDKB']) {
      expect(await found(g, said), said).toBe('G-2DSDKB');
    }
  });

  it('is read the same way by REST', async () => {
    const key = await t.keyFor('golf-salon');
    const response = await t.request({ method: 'GET', url: '/v1/bookings/GOLF-2DSDKB', key });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.reference).toBe('GOLF-2DSDKB');
  });

  it('finds nothing when neither reading is on file', async () => {
    expect(await found(golf, 'golf dash 2 d s d k c')).toBe('not_found');
    expect(await found(g, 'golf papa2x')).toBe('not_found');
  });
});

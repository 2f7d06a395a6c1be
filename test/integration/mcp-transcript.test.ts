import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoWithProtectedBooking } from '../helpers/live-call-fixtures.ts';
import { connectInProcess, type Json, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The transcript in docs/mcp.md ("Two calls, end to end") is played here through the MCP client on
 * the demo salon with a fixed clock, and the doc must show exactly what the tools answered: a new
 * caller books, then a known caller cancels late at the protected branch and hears the fee first.
 * After a deliberate change of wording, `UPDATE_DOCS=1 npx vitest run test/integration/mcp-transcript`
 * rewrites the block.
 */
const DOC = new URL('../../docs/mcp.md', import.meta.url);
const START = '<!-- transcript:start (written by test/integration/mcp-transcript.test.ts) -->';
const END = '<!-- transcript:end -->';
const SAMPLE_REFERENCE = 'NHC-7KQ2MX';
const SAMPLE_REFERENCE_SPOKEN = 'N H C dash 7 K Q 2 M X';

let t: TestApp;
let mcp: McpHarness;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoWithProtectedBooking()],
    now: '2026-11-23T09:00:00Z',
    limits: { requestsPerMinute: 100_000 },
  });
  mcp = await connectInProcess(t, t.keys.readWrite);
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

/** One exchange: what the caller says, the tool call the agent makes, and the answer's key fields. */
async function turn(lines: string[], said: string, tool: string, args: Json, show: (answer: Json) => Json) {
  const answer = await mcp.call(tool, args);
  lines.push(said.startsWith('*') ? said : `**Caller:** ${said}`, '');
  lines.push(
    '```text',
    `→ ${tool} ${JSON.stringify(args)}`,
    `← ${JSON.stringify(show(answer), null, 2)}`,
    '```',
    '',
  );
  return answer;
}

it('docs/mcp.md shows the two calls exactly as the tools answer them', async () => {
  const lines: string[] = ['*Call 1, Monday 23 November 2026, 9:00 am in London: a new caller.*', ''];
  const found = await turn(
    lines,
    'Hi, could I get a haircut at Camden tomorrow afternoon?',
    'find_slots',
    { location: 'camden', services: 'haircut', date: 'tomorrow', time_of_day: 'afternoon', limit: 3 },
    (a) => ({
      ok: a.ok,
      slots: a.slots.map((s: Json) => `${s.staff_name}: ${s.starts_at}`),
      spoken: a.spoken,
    }),
  );
  const slot = found.slots[1];
  expect([slot.starts_at, slot.staff_name]).toEqual(['2026-11-24T12:30:00+00:00', 'Ben Carter']);
  const booked = await turn(
    lines,
    "Half twelve with Ben, please. It's Sam Lee, 07911 123457.",
    'book',
    {
      location: 'camden',
      services: 'haircut',
      starts_at: slot.starts_at,
      client: { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' },
    },
    (a) => ({ ok: a.ok, status: a.status, spoken: a.spoken }),
  );
  expect(booked.status).toBe('confirmed');
  // A new booking's reference is drawn at random: the doc shows a sample one in its place.
  const drawn = booked.booking as { reference: string; reference_spoken: string };
  const sample = (text: string) =>
    text
      .replaceAll(drawn.reference, SAMPLE_REFERENCE)
      .replaceAll(drawn.reference_spoken, SAMPLE_REFERENCE_SPOKEN);

  t.clock.set('2026-11-23T16:30:00Z');
  lines.push('*Call 2, the same day at 4:30 pm: Jo Bloggs, from her own phone.*', '');
  const jo = await turn(
    lines,
    "I need to cancel tomorrow's appointment at Islington, I'm not well.",
    'lookup_client',
    { phone: '+447911123456' },
    (a) => ({
      ok: a.ok,
      client: `${a.client.first_name} ${a.client.last_name}`,
      upcoming_bookings: a.upcoming_bookings.map((b: Json) => b.reference),
      spoken: a.spoken,
    }),
  );
  const { reference } = jo.upcoming_bookings[0];
  const change = (a: Json) => ({
    ok: a.ok,
    dry_run: a.dry_run,
    late: a.late,
    fee: a.fee,
    spoken: a.spoken,
    ...(a.hint && { hint: a.hint }),
  });
  const dry = await turn(
    lines,
    '*Before cancelling, the agent asks what it would mean:*',
    'cancel',
    { reference, dry_run: true },
    change,
  );
  expect(dry.fee.spoken).toBe('31 pounds');
  await turn(lines, 'Yes, cancel it anyway.', 'cancel', { reference, reason: 'Caller unwell' }, change);

  const transcript = sample(lines.join('\n').trimEnd());
  const doc = readFileSync(DOC, 'utf8');
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  expect(from, `docs/mcp.md has no ${START} … ${END} block`).toBeGreaterThan(-1);
  const written = `${doc.slice(0, from + START.length)}\n\n${transcript}\n\n${doc.slice(to)}`;
  if (process.env.UPDATE_DOCS === '1') writeFileSync(DOC, written);
  else expect(doc).toBe(written);
});

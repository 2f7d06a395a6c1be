import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/mcp/build-server.ts';
import { ANSWER_ENVELOPE } from '../../src/mcp/tool-kit.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import {
  connectInProcess,
  type Era,
  type Json,
  type McpHarness,
  TOOL_NAMES,
} from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna } from '../helpers/waitlist-fixtures.ts';

/**
 * Every tool's answers, its successes and its refusals (ok false), agree with the outputSchema
 * tools/list gives it (docs/decisions/mcp-output-schemas.md), as a host that validates structuredContent
 * checks them. Twice: the SDK's client validates each answer against the schema it listed (the harness
 * lists the tools before its first call, so every call of every MCP test is checked so), and here each
 * is also checked, with the SDK's own validator, against that schema closed: its members, the envelope
 * every answer has and the failure members the tool declares, and nothing else. A member a tool answers
 * with that its schema leaves out (join_waitlist's caller_supplied, once) fails here. The small
 * catalogue: Ana does Cuts at Soho, London, on Mondays and Tuesdays 09:00-17:00; Monday 1 March 2027,
 * 09:00.
 */
const NOW = '2027-03-01T09:00:00Z';
const TUESDAY_WEEK = '2027-03-09';

/** The members of the envelope and of the failures, with the types docs/mcp.md gives them. */
const ENVELOPE: Record<string, Json> = {
  ok: { type: 'boolean' },
  code: { type: 'string' },
  hint: { type: 'string' },
  detail: { type: 'string' },
};
const FAILURE_MEMBERS: Record<string, Json> = {
  choices: { type: 'array' },
  alternatives: { type: 'array' },
  reason: { type: 'string' },
  clashes: { type: 'array' },
};

const validators = new AjvJsonSchemaValidator();

/** The listed schema, closed: what it lists, the envelope and the tool's failure members, nothing else. */
function closedSchema(listed: Tool) {
  const spec = TOOLS.find((tool) => tool.name === listed.name)!;
  const failure = Object.fromEntries((spec.failureMembers ?? []).map((m) => [m, FAILURE_MEMBERS[m]]));
  expect(Object.keys(ENVELOPE).sort()).toEqual([...ANSWER_ENVELOPE].sort());
  const schema = listed.outputSchema as Json;
  return {
    ...schema,
    properties: { ...schema.properties, ...ENVELOPE, ...failure },
    additionalProperties: false,
  };
}

describe.each(['legacy', 'modern'] as Era[])(
  'every tool answers as its outputSchema says (%s protocol)',
  (era) => {
    let t: TestApp;
    let mcp: McpHarness;
    let closed: Map<string, (value: unknown) => { valid: boolean; errorMessage?: string }>;
    /** Which tools answered ok true, and which ok false, here. */
    const seen = new Set<string>();

    beforeAll(async () => {
      t = await startTestApp({ now: NOW });
      mcp = await connectInProcess(t, t.keys.readWrite, era);
      const { tools } = await mcp.client.listTools();
      closed = new Map(tools.map((tool) => [tool.name, validators.getValidator(closedSchema(tool))]));
    });
    afterAll(async () => {
      await mcp?.close();
      await t?.close();
    });

    /** The tool's answer (never an MCP error), checked against its closed schema. */
    const answer = async (name: string, args: Record<string, unknown>, ok: boolean): Promise<Json> => {
      const result: CallToolResult = await mcp.raw(name, args);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      const content = result.structuredContent as Json;
      expect(content.ok, `${name}: ${JSON.stringify(content)}`).toBe(ok);
      const verdict = closed.get(name)!(content);
      expect(verdict.valid, `${name} answered ${JSON.stringify(content)}: ${verdict.errorMessage}`).toBe(
        true,
      );
      seen.add(`${name} ${ok}`);
      return content;
    };

    it('answers the reading tools as listed, found or not', async () => {
      await answer('list_locations', {}, true);
      await answer('get_location_info', { location: 'soho' }, true);
      await answer('get_location_info', { location: 'nowhere at all' }, false);
      await answer('list_services', { location: 'soho' }, true);
      await answer('list_services', { location: 'nowhere at all' }, false);
      await answer('find_slots', { location: 'soho', services: 'cut', date: TUESDAY_WEEK }, true);
      // Nobody does it: the services to choose from.
      await answer('find_slots', { location: 'soho', services: 'pedicure', date: TUESDAY_WEEK }, false);
      // Ana works Mondays and Tuesdays: the nearest free times, and why.
      const refused = await answer(
        'find_slots',
        { location: 'soho', services: 'cut', staff: 'Ana', date: '2027-03-10' },
        false,
      );
      expect(refused.alternatives?.length ?? 0).toBeGreaterThan(0);
      await answer('lookup_client', { phone: '+447911123456' }, true);
      await answer('lookup_client', { phone: '+447911000999' }, false);
    });

    it('answers the writing tools as listed, done or refused', async () => {
      const ids = await catalogueIds(t.database.db);
      const client = { first_name: 'Ola', last_name: 'Schema', phone: '07911 228831' };
      await answer('register_client', client, true);
      // The phone on file under another name: answered, with a hint.
      const mismatch = await answer('register_client', { ...client, first_name: 'Tom' }, true);
      expect(mismatch.name_mismatch).toBe(true);
      // A number with digits missing: asked for again.
      await answer('register_client', { ...client, phone: '07911 4561' }, false);

      const starts = `${TUESDAY_WEEK}T10:00:00Z`;
      const ask = { location: 'soho', services: 'cut', staff: 'Ana', starts_at: starts };
      const booked = await answer('book', { ...ask, client }, true);
      expect(booked.caller_supplied).toEqual(['booking.client_name']);
      // Taken meanwhile: the nearest free times, and why.
      const taken = await answer('book', { ...ask, client_id: ids.jo }, false);
      expect(taken).toMatchObject({ reason: 'slot_unavailable' });
      // A name on file under another: that name to choose, marked as a caller's.
      const other = { ...client, first_name: 'Tom' };
      const named = await answer(
        'book',
        { ...ask, starts_at: `${TUESDAY_WEEK}T12:00:00Z`, client: other },
        false,
      );
      expect(named).toMatchObject({ code: 'ambiguous', caller_supplied: ['choices'] });
      // A series with a date not free: the clashes.
      expect((await bookAna(t, '2027-03-16T11:00:00Z')).statusCode).toBe(201);
      const clash = await answer(
        'book',
        {
          ...ask,
          starts_at: `${TUESDAY_WEEK}T11:00:00Z`,
          client_id: ids.jo,
          repeat: { every_weeks: 1, count: 2 },
        },
        false,
      );
      expect(clash.clashes).toHaveLength(1);

      const reference = booked.booking.reference;
      await answer('get_booking', { reference }, true);
      await answer('get_booking', { reference: 'AC-ZZZ-ZZZ' }, false);
      await answer('reschedule', { reference, starts_at: `${TUESDAY_WEEK}T14:00:00Z`, dry_run: true }, true);
      await answer('reschedule', { reference, starts_at: `${TUESDAY_WEEK}T10:00:00Z` }, true);
      await answer('reschedule', { reference, starts_at: '2027-03-16T11:00:00Z' }, false);
      await answer('send_link', { reference }, true);
      await answer('send_link', { reference: 'AC-ZZZ-ZZZ' }, false);
      await answer('cancel', { reference, dry_run: true }, true);
      await answer('cancel', { reference, reason: 'Moving away' }, true);
      await answer('cancel', { reference: 'AC-ZZZ-ZZZ' }, false);

      const waiting = { location: 'soho', services: 'cut', from_date: TUESDAY_WEEK, to_date: TUESDAY_WEEK };
      await answer('join_waitlist', { ...waiting, client }, true);
      // Already waiting for that.
      await answer('join_waitlist', { ...waiting, client }, false);
      // A name on file under another: that name to choose, marked as a caller's, as book marks it.
      const unnamed = await answer('join_waitlist', { ...waiting, client: other }, false);
      expect(unnamed).toMatchObject({ code: 'ambiguous', caller_supplied: ['choices'] });

      const message = { caller_name: 'Ola', phone: '07911 228831', message: 'Please call me back.' };
      await answer('take_message', { ...message, location: 'soho' }, true);
      await answer('take_message', { ...message, location: 'nowhere at all' }, false);
    });

    it('has had each tool answer both ways (list_locations refuses only a key over its rate)', () => {
      for (const name of TOOL_NAMES) {
        expect(seen, name).toContain(`${name} true`);
        if (name !== 'list_locations') expect(seen, name).toContain(`${name} false`);
      }
    });
  },
);

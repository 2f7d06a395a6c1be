import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { addAcmeAccount, signInToConsole } from '../helpers/console-session.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A booking's event log in the console names who made each change: a change an app connected
 * through the OAuth consent page made over MCP (design.md 9.3) is said to be that app's, by the name
 * the Connectors page shows, not a "phone agent" with a key the API keys page has never listed.
 */
const PASSWORD = 'correct horse battery staple';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
  await addAcmeAccount(t, 'owner@acme.test', 'owner', PASSWORD);
});
afterAll(async () => {
  await t.close();
});

describe('console: who made a change', () => {
  it('names a connected app by its name in the event log', async () => {
    const { db } = t.database;
    const ids = await catalogueIds(db);
    const booked = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.ana,
        client_id: ids.jo,
        starts_at: '2027-03-02T10:00:00Z',
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const { reference } = JSON.parse(booked.body).data;
    // As a connector's MCP call writes its changes (in-process-api.ts: mcp:<principal id>).
    const owner = await db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'owner@acme.test')
      .executeTakeFirstOrThrow();
    const connectorId = randomUUID();
    await db
      .insertInto('oauth_connectors')
      .values({
        id: connectorId,
        organisation_id: ids.organisation,
        client_id: 'https://assistant.example/client.json',
        client_name: 'Helpful Assistant',
        scope: 'bookings:write',
        granted_by: owner.id,
        created_at: t.clock.nowMs(),
        last_used_at: null,
        revoked_at: null,
      })
      .execute();
    const booking = await db
      .selectFrom('bookings')
      .select('id')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    // The log is append-only: a later change (the booking's notes, say) by the connector.
    await db
      .insertInto('booking_events')
      .values({
        organisation_id: ids.organisation,
        booking_id: booking.id,
        seq: 2,
        from_status: 'confirmed',
        to_status: 'confirmed',
        actor: `mcp:${connectorId}`,
        occurred_at: t.clock.nowMs(),
        details: null,
      })
      .execute();

    const signedIn = await signInToConsole(t, 'acme-hair', 'owner@acme.test', PASSWORD);
    const page = await signedIn.get(`/console/bookings/${reference}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Connected app Helpful Assistant');
    expect(page.body).not.toContain('Phone agent (key');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import type { Era } from '../helpers/mcp-harness.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { HostAuth, type Person, signInAndConnect } from '../helpers/oauth-flow.ts';

/**
 * OAuth sign-in for hosted MCP connectors (design.md 9.3), end to end: the official SDK 2.x client's
 * OAuth support (discovery from the 401, registration, PKCE, the code exchange, refresh) against the
 * server on a real port, the consent page filled over real HTTP as a browser would.
 */
let server: ListeningApp;
const PASSWORD = 'correct horse battery';
const owner: Person = {
  organisation: 'northside-hair',
  email: 'owner@northside.example',
  password: PASSWORD,
};

beforeAll(async () => {
  server = await startListeningApp();
  const now = server.t.clock.nowMs();
  await createUser(
    server.t.database.db,
    { organisationSlug: 'northside-hair', email: owner.email, role: 'owner', password: PASSWORD },
    now,
  );
  await createUser(
    server.t.database.db,
    {
      organisationSlug: 'northside-hair',
      email: 'staff@northside.example',
      role: 'staff',
      password: PASSWORD,
    },
    now,
  );
});
afterAll(async () => {
  await server?.t.close();
});

describe.each<Era>(['modern', 'legacy'])('the SDK client signs in with OAuth (%s protocol)', (era) => {
  it('registers, signs in on the consent page, and calls the tools as the organisation', async () => {
    const mcpUrl = new URL('/mcp', server.origin);
    const auth = new HostAuth();
    const client = await signInAndConnect(mcpUrl, auth, { ...owner, scope: 'bookings:write' }, era);
    const result = await client.callTool({ name: 'list_locations', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.structuredContent)).toContain('camden');
    await client.close();
  });
});

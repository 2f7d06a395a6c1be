import { afterEach, describe, expect, it } from 'vitest';
import { READ_TOOL_NAMES, TOOL_NAMES } from '../helpers/mcp-harness.ts';
import {
  type ConnectedClient,
  connectSse,
  connectStreamableHttp,
  type ListeningApp,
  startListeningApp,
} from '../helpers/mcp-servers.ts';

/**
 * A server loads the MCP protocol (the SDK and the tools) with its first MCP request, not at start
 * (src/http/mcp-routes.ts): the callers who arrive while it loads, on either transport and either
 * protocol generation, are all answered by the one protocol it loads.
 */
let server: ListeningApp | undefined;
const clients: ConnectedClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await server?.t.close();
  server = undefined;
});

describe('the first MCP requests a server receives', () => {
  it('are all answered, arriving together on every transport', async () => {
    server = await startListeningApp();
    const { origin, t } = server;
    const connecting = await Promise.allSettled([
      connectStreamableHttp(origin, t.keys.readWrite, 'modern'),
      connectStreamableHttp(origin, t.keys.readWrite, 'legacy'),
      connectSse(origin, t.keys.readWrite),
      connectStreamableHttp(origin, t.keys.read, 'modern'),
    ]);
    const connected = connecting.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
    clients.push(...connected);
    expect(connecting.filter((each) => each.status === 'rejected')).toEqual([]);
    for (const [i, client] of connected.entries()) {
      const { tools } = await client.client.listTools();
      // The last is a read key's: it sees the tools it can use (design.md 9.3).
      expect(tools.map((tool) => tool.name)).toEqual(i === 3 ? READ_TOOL_NAMES : TOOL_NAMES);
      const locations = await client.call('list_locations');
      expect(JSON.stringify(locations)).toContain('camden');
      expect(client.errors).toEqual([]);
    }
  });
});

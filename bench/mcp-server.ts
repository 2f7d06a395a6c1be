/**
 * The full stack for the mcp-round-trips benchmark: the real app (`buildApp`: host check, key
 * authentication, the Streamable HTTP transport at POST /mcp, the tools, the service layer, SQLite
 * through Kysely) with the production wiring of src/runtime.ts but a clock fixed at MCP_SCENARIO.now
 * and no logger, on the demo catalogue (bench/lib/mcp-database.ts). Runs as a child process: see
 * bench/lib/server-process.ts.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../src/app/clock.ts';
import { createAppDeps } from '../src/app/deps.ts';
import { serveFromChild } from './lib/child.ts';
import { listenFullStack } from './lib/full-stack.ts';
import { createMcpBenchDatabase, MCP_SCENARIO } from './lib/mcp-database.ts';

export interface McpServerInfo {
  origin: string;
  writeKey: string;
  /** The demo client Jo Bloggs in this server's database. */
  clientId: string;
}

serveFromChild<null, McpServerInfo>(async () => {
  const { database, writeKey, clientId } = await createMcpBenchDatabase();
  const deps = createAppDeps({
    db: database.db,
    // Fixed, as on the in-process side: both answer the same questions with the same data.
    clock: new ManualClock(MCP_SCENARIO.now),
    secret: randomBytes(32).toString('base64url'),
  });
  const { origin, close } = await listenFullStack(deps, () => database.dispose());
  return { info: { origin, writeKey, clientId }, close };
});

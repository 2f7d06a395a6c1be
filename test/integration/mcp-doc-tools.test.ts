import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectInProcess, type McpHarness } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The tool table of docs/mcp.md ("Tools and their answers") is what a host author reads before
 * connecting: it names every tool a read_write key is given, in the server's order, each with the
 * arguments its input schema takes. A tool left out of it (get_location_info and take_message were)
 * or an argument renamed fails here.
 */
let t: TestApp;
let mcp: McpHarness;
beforeAll(async () => {
  t = await startTestApp();
  mcp = await connectInProcess(t, t.keys.readWrite);
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

/** Each row's `name {arg?, arg, a? \| b {...}}` as [name, its argument names in the order given]. */
function documentedTools(): [string, string[]][] {
  const page = readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
  const section = page.split('\n## Tools and their answers\n')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\|\s*`([a-z_]+) \{(.*?)\}`\s*\|/gm)].map(([, name, args]) => [
    name!,
    args!
      .replace(/\{[^}]*\}/g, '')
      .split(/,|\\\|/)
      .map((arg) => arg.trim().replace(/\?$/, ''))
      .filter((arg) => arg !== ''),
  ]);
}

it('docs/mcp.md names every tool with the arguments of its input schema', async () => {
  const { tools } = await mcp.client.listTools();
  const listed = tools.map((tool): [string, string[]] => [
    tool.name,
    Object.keys(tool.inputSchema.properties ?? {}),
  ]);
  expect(documentedTools()).toEqual(listed);
});

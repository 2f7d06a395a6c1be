import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Era } from '../helpers/mcp-harness.ts';
import { connectStreamableHttp, type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

/**
 * design.md 9.3: tools/list shows a read-only credential only the tools it can use. A tools/call naming
 * no tool answers with the tools there are: to a read key, the same tools its tools/list shows (the
 * write tools it was never shown were listed to it there, and an agent reading them tried them).
 */
let server: ListeningApp;

beforeAll(async () => {
  server = await startListeningApp();
});
afterAll(async () => {
  await server?.t.close();
});

describe.each<Era>(['legacy', 'modern'])('a tools/call naming no tool (%s)', (era) => {
  /** The tools a key's tools/list shows, and the names the refusal of an unknown tool gives it. */
  async function namesFor(key: string) {
    const agent = await connectStreamableHttp(server.origin, key, era);
    try {
      const listed = (await agent.client.listTools()).tools.map((tool) => tool.name);
      const refusal = await agent.client.callTool({ name: 'book_now', arguments: {} }).then(
        () => expect.unreachable('a tool no server has was run'),
        (error: Error) => error.message,
      );
      const named = /the tools are (.*)\.$/.exec(refusal)?.[1]?.split(', ');
      return { listed, named, refusal };
    } finally {
      await agent.close();
    }
  }

  it('names to a read key only the tools its tools/list shows', async () => {
    const { listed, named, refusal } = await namesFor(server.t.keys.read);
    expect(refusal).toContain('No tool is called "book_now"');
    expect(listed).not.toContain('book');
    expect(named).toEqual(listed);
    expect(refusal).not.toMatch(/\bbook\b|\bcancel\b/);
  });

  it('names every tool to a read_write key', async () => {
    const { listed, named } = await namesFor(server.t.keys.readWrite);
    expect(listed).toContain('book');
    expect(named).toEqual(listed);
  });
});

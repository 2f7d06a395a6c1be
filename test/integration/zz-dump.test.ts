import { writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { connectInProcess } from '../helpers/mcp-harness.ts';
import { startTestApp } from '../helpers/test-app.ts';

it('dumps', async () => {
  const t = await startTestApp();
  const texts: string[] = [];
  const mcp = await connectInProcess(t, t.keys.readWrite, 'modern', (x) => texts.push(x));
  const listing = await mcp.client.listTools();
  writeFileSync('/tmp/dump/tools.json', JSON.stringify(listing, null, 1));
  const answer = texts.find((x) => x.includes('"tools":['))!;
  writeFileSync('/tmp/dump/answer.txt', answer);
  console.log('bare', JSON.stringify(listing).length, 'answer', answer.length);
  await mcp.close();
  await t.close();
});

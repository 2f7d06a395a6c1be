#!/usr/bin/env node
// The `booking` command. The sources are TypeScript run as they are, so there is no build step: Node
// 22.18 and later strip the types itself (process.features.typescript); older Node (20) goes through
// tsx. Stripping needs only erasable syntax (tsconfig's erasableSyntaxOnly keeps the sources so) and
// starts about twice as fast as tsx, whose loader answers every import from a thread of its own.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../src/cli.ts');

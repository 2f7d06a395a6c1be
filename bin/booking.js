#!/usr/bin/env node
// The `booking` command. The sources are TypeScript run as they are, so there is no build step: Node
// 22.18 and later strip the types itself (process.features.typescript); older Node (20) goes through
// tsx. Stripping needs only erasable syntax (tsconfig's erasableSyntaxOnly keeps the sources so) and
// starts about twice as fast as tsx, whose loader answers every import from a thread of its own.
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { execWithServerSettings } from './server-settings.js';

// `booking serve` (and so `npm start`) runs with the V8 and allocator settings of server-settings.js,
// re-executing itself in place with them before anything is loaded.
if (process.argv[2] === 'serve') execWithServerSettings();

// Node 22.1+ keeps, between runs, V8's compiled code and the TypeScript it stripped, keyed by each
// file's contents: a run whose sources are unchanged never loads the stripper (swc compiled to
// WebAssembly, whose memory grows with every file it strips: 30 to 40 MB more for a server that stays
// up). In the project's own node_modules, not a temporary folder other users can write to; where that
// cannot be written, Node goes on without the cache.
module.enableCompileCache?.(
  fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url)),
);

// Node strips types only outside node_modules: a copy of the project installed into another one's
// node_modules (from a git URL or a tarball) goes through tsx, as Node 20 does.
const nodeStripsOurTypes = process.features.typescript && !import.meta.url.includes('/node_modules/');
if (!nodeStripsOurTypes) {
  const { register } = await import('tsx/esm/api');
  register();
  // tsx turns source maps on for every module; ours are what stack traces need. Those of node_modules
  // (the MCP SDK's alone carry 2 MB of sources) would be parsed and kept for nothing (Node 22.14+).
  // Stripped types need no maps: they leave every line where it was.
  module.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: false });
}
await import('../src/cli.ts');

#!/usr/bin/env node
// The `booking` command. The sources are TypeScript run through tsx, so there is no build step.
import module from 'node:module';
import { register } from 'tsx/esm/api';
import { execWithServerSettings } from './server-settings.js';

// `booking serve` (and so `npm start`) runs with the V8 and allocator settings of server-settings.js,
// re-executing itself in place with them before anything is loaded.
if (process.argv[2] === 'serve') execWithServerSettings();

register();
// tsx turns source maps on for every module; ours are what stack traces need. Those of node_modules
// (the MCP SDK's alone carry 2 MB of sources) would be parsed and kept for nothing (Node 22.14+).
module.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: false });
await import('../src/cli.ts');

#!/usr/bin/env node
// The `booking` command. The sources are TypeScript with no build step to run first: every Node runs a
// bundle of them that this file makes when they change (bin/bundle.js, bin/sources.js). Node 24 could
// strip their types itself, but some 500 modules resolved and read one by one start every command about
// 0.2 s later than one bundle does (docs/decisions/no-build-step.md).
import module from 'node:module';
import { BUNDLE_STARTED, bundledEntry, forgetBundle } from './bundle.js';
import { mapBundleStackTraces } from './bundle-stack-traces.js';
import { execWithServerSettings } from './server-settings.js';
import { BUNDLE_CACHE, COMPILE_CACHE, ENTRY, MCP_ENTRY, STDIO_BUNDLE_CACHE } from './sources.js';

// `booking serve` (and so `npm start`) runs with the V8 and allocator settings of server-settings.js,
// re-executing itself in place with them before anything is loaded.
if (process.argv[2] === 'serve') execWithServerSettings();

// Node 22.1+ keeps V8's compiled code of the bundle between runs, keyed by its contents: npm install
// fills it for `booking mcp` (bin/prepare-sources.js), the first run of the other commands for theirs
// (a server's V8 flags key a cache of their own). In the project's own node_modules, not a temporary
// folder other users can write to; where that cannot be written, Node goes on without it.
module.enableCompileCache?.(COMPILE_CACHE);

// The bundle is made by esbuild when the sources change and kept in node_modules/.cache, rather than
// run through tsx's loader, whose thread and heap cost 20 to 30 MB in a server
// (docs/decisions/no-build-step.md). Where the bundle cannot be made or loaded, tsx runs the sources as
// they are, and says so.
//
// `booking mcp`, started by an MCP host that waits for its first answer, runs a bundle of that command
// alone (src/cli/mcp-cli.ts) that holds the packages it loads too: one file to read instead of some 800
// modules to resolve (docs/decisions/stdio-first-answer.md). The other commands' bundle holds the same
// packages: a server that loads them as one file rather than some 500 modules peaks a few MB lower
// (docs/decisions/memory-under-load.md).
const stdio = process.argv[2] === 'mcp';
const { runCli } = stdio
  ? await loadBundled(MCP_ENTRY, STDIO_BUNDLE_CACHE, { packagesInside: true })
  : await loadBundled(ENTRY, BUNDLE_CACHE, { packagesInside: true });
await runCli(process.argv);

/** The sources' entry module, from the bundle; through tsx, saying so, where it cannot be made or loaded. */
async function loadBundled(entry, cacheDir, options) {
  let bundle;
  try {
    bundle = await bundledEntry(entry, cacheDir, options);
    mapBundleStackTraces(bundle.dirUrl);
    return await import(bundle.entryUrl);
  } catch (error) {
    // Once the bundle runs, its errors are its own (loading it runs no command).
    if (globalThis[BUNDLE_STARTED]) throw error;
    // A bundle that would not load (a file cut short on disk, say) is built afresh next time.
    if (bundle) forgetBundle(cacheDir);
    // Node's own formatting again, which tsx's source maps go through.
    Error.prepareStackTrace = undefined;
    process.stderr.write(`booking: running the sources through tsx (no bundle: ${firstLine(error)})\n`);
    return loadThroughTsx();
  }
}

function firstLine(error) {
  return String(error instanceof Error ? error.message : error).split('\n')[0];
}

async function loadThroughTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  // tsx turns source maps on for every module; ours are what stack traces need. Those of node_modules
  // (the MCP SDK's alone carry 2 MB of sources) would be parsed and kept for nothing (Node 22.14+).
  module.setSourceMapsSupport?.(true, { nodeModules: false, generatedCode: false });
  return import('../src/cli.ts');
}

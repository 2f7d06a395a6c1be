// npm install's last step (postinstall): makes the sources ready to run before `booking` first runs,
// so that no server pays for it later: the bundles of the commands and of `booking mcp`, the latter
// loaded once so that Node's compile cache (22.1+) keeps V8's code for it. Nothing here can fail the
// install: whatever is not ready is made by the first run that needs it.

import module from 'node:module';
import { bundledEntry } from './bundle.js';
import { BUNDLE_CACHE, COMPILE_CACHE, ENTRY, MCP_ENTRY, STDIO_BUNDLE_CACHE } from './sources.js';

/** The longest the preparation may take before the install goes on without it. */
const TIME_LIMIT_MS = 120_000;

// Whatever a module loaded here does later, or fails at, is not the install's concern.
process.on('uncaughtException', () => undefined);
process.on('unhandledRejection', () => undefined);
setTimeout(() => process.exit(0), TIME_LIMIT_MS).unref();

try {
  // As bin/booking.js loads it: with the packages of PACKAGES_INSIDE.
  await bundledEntry(ENTRY, BUNDLE_CACHE, { packagesInside: true });
} catch {
  // Made by the first run instead.
}
// `booking mcp`'s bundle, loaded once so that Node's compile cache (22.1+) keeps V8's code for it: a
// host's first call is then answered as soon as the process can.
try {
  module.enableCompileCache?.(COMPILE_CACHE);
  const { entryUrl } = await bundledEntry(MCP_ENTRY, STDIO_BUNDLE_CACHE, { packagesInside: true });
  await import(entryUrl);
} catch {
  // Made by the first `booking mcp` instead.
}
// Written now, and nothing a module left running keeps the install waiting.
module.flushCompileCache?.();
process.exit(0);

// Where `booking`'s sources and their bundles are: shared by bin/booking.js, which runs them, and
// bin/prepare-sources.js, which npm install runs to make them ready. Plain JavaScript.

import { fileURLToPath } from 'node:url';

/** The module whose `runCli` is the `booking` command. */
export const ENTRY = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

/** Where Node (22.1+) keeps the code V8 compiled for the bundles, between runs. */
export const COMPILE_CACHE = fileURLToPath(
  new URL('../node_modules/.cache/node-compile-cache', import.meta.url),
);

/** Where the bundle of the sources is kept (bin/bundle.js). */
export const BUNDLE_CACHE = fileURLToPath(new URL('../node_modules/.cache/booking-bundle/', import.meta.url));

/** The module whose `runCli` is `booking mcp` alone: the entry of its bundle. */
export const MCP_ENTRY = fileURLToPath(new URL('../src/cli/mcp-cli.ts', import.meta.url));

/** Where the bundle `booking mcp` runs on every Node is kept: the sources with their packages (bin/bundle.js). */
export const STDIO_BUNDLE_CACHE = fileURLToPath(
  new URL('../node_modules/.cache/booking-stdio-bundle/', import.meta.url),
);

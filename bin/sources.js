// Where `booking`'s sources are and how this Node runs them: shared by bin/booking.js, which runs
// them, and bin/prepare-sources.js, which npm install runs to make them ready. Plain JavaScript.

import { fileURLToPath } from 'node:url';

/** The module whose `runCli` is the `booking` command. */
export const ENTRY = fileURLToPath(new URL('../src/cli.ts', import.meta.url));

/**
 * Whether Node runs the sources itself, stripping their types: where it can (22.18 and later, not
 * under node_modules, where it refuses to: a copy of the project installed into another one's) and
 * keeps what it stripped in its compile cache (24; 22 strips every file again in every process, with a
 * stripper of 17 to 44 MB: checked on 22.23.3 and 24.21.0). Elsewhere `booking` runs a bundle of them
 * (bin/bundle.js).
 */
export const NODE_STRIPS_OUR_TYPES =
  Boolean(process.features.typescript) &&
  Number(process.versions.node.split('.')[0]) >= 24 &&
  !import.meta.url.includes('/node_modules/');

/** Where Node (22.1+) keeps the TypeScript it stripped and the code V8 compiled, between runs. */
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

// npm install's last step (postinstall): makes the sources ready to run before `booking` first runs,
// so that no server pays for it later. Where Node strips their types, every source is loaded once
// with Node's compile cache on, which keeps the stripped TypeScript and V8's code: a later process
// then never loads Node's type stripper (a WebAssembly module whose memory grows with every file it
// strips, 17 to 44 MB), even for the modules a server loads late (the MCP protocol, at its first MCP
// request; docs/decisions/memory-under-load.md). Node keeps a cache per set of V8 flags, and
// `booking serve` runs with flags of its own (bin/server-settings.js), so it is loaded twice: here,
// for the other commands, and again in a process started with the server's flags. Elsewhere it builds
// the bundle. Nothing here can fail the install: whatever is not ready is made by the first run that
// needs it.

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundledEntry } from './bundle.js';
import { SERVER_V8_FLAGS } from './server-settings.js';
import {
  BUNDLE_CACHE,
  COMPILE_CACHE,
  ENTRY,
  MCP_ENTRY,
  NODE_STRIPS_OUR_TYPES,
  STDIO_BUNDLE_CACHE,
} from './sources.js';

/** Given to the second run, the one with the server's flags. */
const AS_SERVER = '--as-server';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The longest the preparation may take before the install goes on without it. */
const TIME_LIMIT_MS = 120_000;

// Whatever a module loaded here does later, or fails at, is not the install's concern.
process.on('uncaughtException', () => undefined);
process.on('unhandledRejection', () => undefined);
setTimeout(() => process.exit(0), TIME_LIMIT_MS).unref();

try {
  if (NODE_STRIPS_OUR_TYPES) {
    module.enableCompileCache?.(COMPILE_CACHE);
    // Loading a module runs no command (src/cli.ts exports runCli); one that fails to load is left
    // to its first run.
    for (const file of typeScriptFiles(path.join(ROOT, 'src'), path.join(ROOT, 'db', 'migrations'))) {
      await import(pathToFileURL(file).href).catch(() => undefined);
    }
    if (!process.argv.includes(AS_SERVER)) {
      spawnSync(process.execPath, [...SERVER_V8_FLAGS, fileURLToPath(import.meta.url), AS_SERVER], {
        stdio: 'ignore',
        timeout: TIME_LIMIT_MS,
        killSignal: 'SIGKILL',
      });
    }
  } else {
    // As bin/booking.js loads it: with the packages of PACKAGES_INSIDE.
    await bundledEntry(ENTRY, BUNDLE_CACHE, { packagesInside: true });
  }
} catch {
  // Made by the first run instead.
}
// `booking mcp`'s bundle, on every Node, loaded once so that Node's compile cache (22.1+) keeps V8's
// code for it: a host's first call is then answered as soon as the process can.
if (!process.argv.includes(AS_SERVER)) {
  try {
    module.enableCompileCache?.(COMPILE_CACHE);
    const { entryUrl } = await bundledEntry(MCP_ENTRY, STDIO_BUNDLE_CACHE, { packagesInside: true });
    await import(entryUrl);
  } catch {
    // Made by the first `booking mcp` instead.
  }
}
// Written now, and nothing a module left running keeps the install waiting.
module.flushCompileCache?.();
process.exit(0);

function typeScriptFiles(...dirs) {
  return dirs.flatMap((dir) =>
    readdirSync(dir, { recursive: true })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => path.join(dir, name)),
  );
}

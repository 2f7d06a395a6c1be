#!/usr/bin/env node
// npm install's first step (postinstall), which does something on Node 20 only: builds better-sqlite3 12,
// the SQLite driver there (src/data/sqlite-driver.ts), from its C++ sources with npm's node-gyp.
// package.json's allowScripts keeps npm from running that package's own install script, which runs on
// every Node: it would first try to download a binary from GitHub, then compile one, which on Node 22
// and 24 (which load better-sqlite3 13, shipped prebuilt) takes two minutes and a C++ compiler for a
// driver never loaded (docs/decisions/sqlite-driver-per-node.md). On Node 20 a driver that does not
// build fails the install, saying why: nothing would run without it.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const DRIVER = 'better-sqlite3-12';

/** Node 20 lacks Node-API 10, the rule src/data/sqlite-driver.ts chooses the driver by. */
const nodeNeedsDriver12 = Number(process.versions.napi) < 10;

if (nodeNeedsDriver12) {
  const require = createRequire(import.meta.url);
  if (!loads(require)) build(path.dirname(require.resolve(`${DRIVER}/package.json`)));
}

/**
 * Whether the driver is already built for this Node (npm 10, which ignores allowScripts, runs its own
 * script). Its binary is loaded at the first database opened, not at require.
 */
function loads(require) {
  try {
    const Database = require(DRIVER);
    new Database(':memory:').close();
    return true;
  } catch {
    return false;
  }
}

function build(driverDir) {
  // npm gives its scripts the path of its own node-gyp; run by hand, node-gyp is looked up on PATH.
  const nodeGyp = process.env.npm_config_node_gyp;
  const [command, args] = nodeGyp
    ? [process.execPath, [nodeGyp, 'rebuild', '--release']]
    : ['node-gyp', ['rebuild', '--release']];
  const result = spawnSync(command, args, { cwd: driverDir, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(
      `booking: could not build ${DRIVER} (better-sqlite3 12), the SQLite driver on Node ${process.versions.node}: ` +
        'it needs a C++ compiler, make and python3. Node 22 and 24 need none of them.\n',
    );
    process.exit(1);
  }
}

// Preloaded into a `booking serve` under test (NODE_OPTIONS=--require): as it exits, writes the
// modules of Node's own it loaded (process.moduleLoadList) to the file named by LOADED_BUILTINS_FILE
// (test/e2e/running-sources.test.ts). Only for `serve`: the other commands a test runs leave it alone.
const { writeFileSync } = require('node:fs');

if (process.argv.includes('serve') && process.env.LOADED_BUILTINS_FILE) {
  process.once('exit', () =>
    writeFileSync(process.env.LOADED_BUILTINS_FILE, process.moduleLoadList.join('\n')),
  );
}

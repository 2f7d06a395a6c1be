// Preloaded into a `booking serve` under test (NODE_OPTIONS=--require): on SIGUSR2 it writes what the
// young generation of the process's heap can hold (V8's own figures, used and available, in bytes) to
// the file named by YOUNG_GENERATION_FILE (test/e2e/serve-settings.test.ts). Only for `serve`: the
// other commands a test runs leave it alone.
const { writeFileSync } = require('node:fs');
const v8 = require('node:v8');

if (process.argv.includes('serve') && process.env.YOUNG_GENERATION_FILE) {
  process.on('SIGUSR2', () => {
    const space = v8.getHeapSpaceStatistics().find((each) => each.space_name === 'new_space');
    writeFileSync(
      process.env.YOUNG_GENERATION_FILE,
      String(space.space_used_size + space.space_available_size),
    );
  });
}

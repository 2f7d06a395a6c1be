import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * The SQLite driver on the Node.js that runs the suite (CI runs it on each supported version, see
 * .ci/run). better-sqlite3 up to 12 wraps its statements in node::ObjectWrap, whose header in Node
 * 24.19 and later aborts the process when the garbage collector frees one (nodejs/node#65446): servers
 * and test workers died at random on Node 24. The workload runs in a child process so that an abort
 * fails this test instead of killing the test worker.
 */
describe.skipIf(onPostgres)('the SQLite driver on this Node.js', () => {
  it('lives through the garbage collection of thousands of statements made by the database layer', () => {
    const database = pathToFileURL(path.join(REPO_ROOT, 'src/data/database.ts')).href;
    // Each query has its own text, so each is a new prepared statement; the statement cache keeps
    // the last 500 and lets the others go to the garbage collector, which the arrays keep busy.
    const workload = `
      import { sql } from 'kysely';
      import { openDatabase } from ${JSON.stringify(database)};
      const { db, close } = openDatabase('sqlite::memory:');
      let garbage = [];
      for (let n = 0; n < 20000; n++) {
        const { rows } = await sql.raw('select ' + n + ' as n').execute(db);
        if (rows[0].n !== n) throw new Error('select ' + n + ' answered ' + rows[0].n);
        garbage.push(new Array(100).fill(n));
      }
      garbage = null;
      await close();
      console.log('20000 statements, closed');
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', workload], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ signal: result.signal, status: result.status, stderr: result.stderr }).toEqual({
      signal: null,
      status: 0,
      stderr: '',
    });
    expect(result.stdout.trim()).toBe('20000 statements, closed');
  });
});

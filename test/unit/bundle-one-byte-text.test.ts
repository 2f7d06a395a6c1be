import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { bundledEntry } from '../../bin/bundle.js';
import { BUNDLE_CACHE, ENTRY, MCP_ENTRY, STDIO_BUNDLE_CACHE } from '../../bin/sources.js';

/**
 * V8 keeps every module's source for as long as the process lives, at one byte a character, or two
 * for the whole module once a single character in it is above U+00FF (a 1 MB chunk held as 2 MB:
 * docs/decisions/memory-under-load.md). esbuild writes such characters as escapes in strings, but not
 * in a regular expression or a tagged template (whose raw text the tag may read): there the sources
 * must write the escape themselves (`\u2019`, not ’). Checked on the bundles the commands really run.
 */
it.each([
  ['booking serve and the other commands', ENTRY, BUNDLE_CACHE],
  ['booking mcp', MCP_ENTRY, STDIO_BUNDLE_CACHE],
])(
  '%s: every chunk of the bundle is text of one byte a character',
  async (_name, entry, cache) => {
    const { entryUrl } = await bundledEntry(entry, cache, { packagesInside: true });
    const entryFile = fileURLToPath(entryUrl);
    const manifest = JSON.parse(readFileSync(`${entryFile}.json`, 'utf8')) as { outputs: string[] };
    const wide: string[] = [];
    for (const output of manifest.outputs.filter((name) => name.endsWith('.mjs'))) {
      const text = readFileSync(path.join(path.dirname(entryFile), output), 'utf8');
      for (const found of text.matchAll(/[\u0100-\u{10ffff}]/gu)) {
        wide.push(
          `${output}: ${JSON.stringify(text.slice(Math.max(0, found.index - 60), found.index + 20))}`,
        );
      }
    }
    expect(wide).toEqual([]);
  },
  120_000,
);

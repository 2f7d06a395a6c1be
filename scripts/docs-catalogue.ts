import { readFileSync, writeFileSync } from 'node:fs';
import {
  catalogueFieldReference,
  catalogueJsonSchema,
} from '../src/app/catalogue-import/format/json-schema.ts';

/**
 * Writes docs/catalogue.schema.json and docs/catalogue-fields.md from the import schema; with --check,
 * writes nothing and exits 1 when either differs from what the schema gives (test/unit has the same check).
 */
const files = [
  {
    url: new URL('../docs/catalogue.schema.json', import.meta.url),
    text: `${JSON.stringify(catalogueJsonSchema(), null, 2)}\n`,
  },
  { url: new URL('../docs/catalogue-fields.md', import.meta.url), text: catalogueFieldReference() },
];
const check = process.argv.includes('--check');
let stale = 0;
for (const { url, text } of files) {
  const current = (() => {
    try {
      return readFileSync(url, 'utf8');
    } catch {
      return undefined;
    }
  })();
  if (current === text) continue;
  if (check) {
    console.error(`${url.pathname} is out of date: run npm run docs:catalogue`);
    stale += 1;
  } else {
    writeFileSync(url, text);
    console.log(`wrote ${url.pathname}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;

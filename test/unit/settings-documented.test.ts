import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Variables the code reads that are not settings of the engine (Node's and libpq's own). */
const NOT_SETTINGS = new Set(['NODE_OPTIONS', 'PGOPTIONS']);

function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const file = path.join(folder, name);
    if (statSync(file).isDirectory()) return sources(file);
    return /\.(ts|js)$/.test(name) ? [file] : [];
  });
}

/** Every environment variable src/ and bin/ read: `env.NAME` and `env['NAME']`. */
function settingsRead(): string[] {
  const names = new Set<string>();
  for (const file of [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'bin'))]) {
    for (const match of readFileSync(file, 'utf8').matchAll(/env(?:\.|\[['"])([A-Z][A-Z0-9_]+)/g))
      names.add(match[1]!);
  }
  return [...names].filter((name) => !NOT_SETTINGS.has(name)).sort();
}

describe('every setting the engine reads', () => {
  const settings = settingsRead();

  it('is found in the sources (the scan works)', () => {
    expect(settings).toEqual(expect.arrayContaining(['DATABASE_URL', 'PUBLIC_BASE_URL', 'TRUST_PROXY']));
  });

  it('is in .env.example, and nothing else is', () => {
    const example = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^#?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!).sort();
    expect(listed).toEqual(settings);
  });

  it('is explained in the configuration table of docs/operating.md', () => {
    const page = readFileSync(path.join(ROOT, 'docs/operating.md'), 'utf8');
    const table = page.split('\n## Configuration\n')[1]?.split('\n## ')[0] ?? '';
    for (const name of settings) expect(table, name).toMatch(new RegExp(`^\\| [^|]*\`${name}\``, 'm'));
  });
});

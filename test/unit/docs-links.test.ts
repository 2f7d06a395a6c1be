import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The Markdown pages a user reads: the top-level ones and everything under docs/. */
function pages(): string[] {
  const top = readdirSync(ROOT).filter((name) => name.endsWith('.md'));
  const walk = (folder: string): string[] =>
    readdirSync(path.join(ROOT, folder)).flatMap((name) => {
      const file = path.join(folder, name);
      if (statSync(path.join(ROOT, file)).isDirectory()) return walk(file);
      return name.endsWith('.md') ? [file] : [];
    });
  return [...top, ...walk('docs')];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Relative links and image sources of a page, outside code blocks and code spans. */
function links(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [
    ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/<img [^>]*src="([^"]+)"/g)].map((m) => m[1]!),
  ];
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('the Markdown pages', () => {
  const all = pages();

  it('are found', () => {
    expect(all).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/decisions/README.md']));
  });

  it.each(all)('%s links only to files and headings that exist', (page) => {
    const dead: string[] = [];
    for (const target of links(readFileSync(path.join(ROOT, page), 'utf8'))) {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file ? path.resolve(ROOT, path.dirname(page), decodeURI(file)) : path.join(ROOT, page);
      if (!existsSync(resolved)) {
        dead.push(target);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor))
        dead.push(target);
    }
    expect(dead).toEqual([]);
  });
});

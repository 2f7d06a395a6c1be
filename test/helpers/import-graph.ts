import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The import graph of the sources, for the architecture test: every module specifier a file names
 * (static imports and exports, type-only ones included, and dynamic `import()`), read with the
 * TypeScript compiler's own pre-processor rather than a regular expression.
 */
export interface SourceFile {
  /** Path relative to the repository root, with forward slashes, e.g. `src/mcp/build-server.ts`. */
  file: string;
  /** What the file imports: a repository-relative path for a relative import, else the package name. */
  imports: string[];
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every .ts file under `dir` (repository-relative), with what it imports. */
export function readSources(dir = 'src'): SourceFile[] {
  return listTypeScript(path.join(ROOT, dir)).map((absolute) => {
    const file = toPosix(path.relative(ROOT, absolute));
    return { file, imports: importsOf(file, readFileSync(absolute, 'utf8')) };
  });
}

/** The imports of one file's text, resolved as readSources resolves them. */
export function importsOf(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map(({ fileName }) =>
    fileName.startsWith('.')
      ? toPosix(path.posix.join(path.posix.dirname(file), fileName))
      : packageOf(fileName),
  );
}

/** `@scope/name/sub` -> `@scope/name`, `luxon/x` -> `luxon`, `node:fs` stays `node:fs`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function listTypeScript(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    // node_modules: test/e2e/inspector has its own npm project.
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : listTypeScript(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Every import circle among `sources` (each as the files around it, first repeated at the end). */
export function importCircles(sources: readonly SourceFile[]): string[][] {
  const edges = new Map(sources.map((s) => [s.file, s.imports.filter((i) => i.endsWith('.ts'))]));
  const circles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string) => {
    const at = onPath.indexOf(file);
    if (at >= 0) {
      circles.push([...onPath.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const next of edges.get(file) ?? []) visit(next);
    onPath.pop();
    done.add(file);
  };
  for (const file of edges.keys()) visit(file);
  return circles;
}

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
  /**
   * What of that is loaded with the file, as `imports` names it: the static imports and re-exports but
   * those declared type-only (`import type`, erased), without the dynamic `import()`s.
   */
  loadsWith: string[];
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every .ts file under `dir` (repository-relative), with what it imports. */
export function readSources(dir = 'src'): SourceFile[] {
  return listTypeScript(path.join(ROOT, dir)).map((absolute) => {
    const file = toPosix(path.relative(ROOT, absolute));
    const text = readFileSync(absolute, 'utf8');
    return { file, imports: importsOf(file, text), loadsWith: loadedWith(file, text) };
  });
}

/** The imports of one file's text, resolved as readSources resolves them. */
export function importsOf(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map(({ fileName }) => resolved(file, fileName));
}

/** The static imports of one file's text that are not type-only, resolved as readSources resolves them. */
export function loadedWith(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    const loaded =
      (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) ||
      (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && !statement.isTypeOnly);
    const specifier = loaded ? statement.moduleSpecifier : undefined;
    return specifier && ts.isStringLiteral(specifier) ? [resolved(file, specifier.text)] : [];
  });
}

function resolved(file: string, specifier: string): string {
  return specifier.startsWith('.')
    ? toPosix(path.posix.join(path.posix.dirname(file), specifier))
    : packageOf(specifier);
}

/** Every file and package loaded when `entry` is, through static imports (itself included). */
export function loadedFrom(entry: string, sources: readonly SourceFile[]): Set<string> {
  const byFile = new Map(sources.map((s) => [s.file, s.loadsWith]));
  const loaded = new Set<string>();
  const visit = (name: string) => {
    if (loaded.has(name)) return;
    loaded.add(name);
    for (const next of byFile.get(name) ?? []) visit(next);
  };
  visit(entry);
  return loaded;
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

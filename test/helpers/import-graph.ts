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

/** A binding a file takes from a module: `name` as the module exports it, or `*` for the whole module. */
export interface ImportedName {
  /** The module, resolved as readSources resolves imports. */
  from: string;
  name: string;
}

/**
 * The bindings a file's text takes from other modules, type-only ones included: named imports (under
 * their exported name, whatever the local alias), re-exports, `* as` namespaces and `export *` (as
 * `*`), and dynamic `import()`s (as `*`: whatever the code then reads of the module).
 */
export function importedNames(file: string, text: string): ImportedName[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const names: ImportedName[] = [];
  const take = (from: string, bindings: ts.NamedImportBindings | ts.NamedExportBindings | undefined) => {
    if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
      for (const element of bindings.elements) {
        names.push({ from, name: (element.propertyName ?? element.name).text });
      }
    } else {
      // `* as x`, `export *`, `export * as x`: the whole module.
      names.push({ from, name: '*' });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const from = resolved(file, node.moduleSpecifier.text);
      const clause = node.importClause;
      if (clause?.name) names.push({ from, name: 'default' });
      if (clause?.namedBindings) take(from, clause.namedBindings);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      take(resolved(file, node.moduleSpecifier.text), node.exportClause);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      names.push({ from: resolved(file, node.arguments[0].text), name: '*' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

/**
 * importedNames of the .ts files under `dir` (repository-relative) whose text names `mentioning` (a
 * module's file name, say: a file that never writes it imports nothing from it), by file. Parsing
 * only those keeps the architecture test quick.
 */
export function readImportedNames(dir: string, mentioning: string): Map<string, ImportedName[]> {
  const names = new Map<string, ImportedName[]>();
  for (const absolute of listTypeScript(path.join(ROOT, dir))) {
    const text = readFileSync(absolute, 'utf8');
    if (!text.includes(mentioning)) continue;
    const file = toPosix(path.relative(ROOT, absolute));
    names.set(file, importedNames(file, text));
  }
  return names;
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

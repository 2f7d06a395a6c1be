// The sources bundled into ES modules, which `booking` runs on every Node: bin/sources.js;
// docs/decisions/no-build-step.md. Plain JavaScript: bin/booking.js reads it before TypeScript can be loaded.

import { createHash, randomUUID } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The file that says which build holds the current sources; each build also keeps a copy as `<entry>.json`. */
const MANIFEST = 'manifest.json';

/**
 * A file no live build names is removed once it is this old, so that a build being written can
 * finish. A process that read the manifest just before a newer build replaced it, and had not yet
 * marked the build it read, may find that build's older files gone: it then runs through tsx once,
 * and forgets the manifest, so the next run builds afresh (bin/booking.js).
 */
const STALE_AFTER_MS = 10 * 60 * 1000;

/** Set by every file of a bundle as it starts to run: until then, a failed import is a bundle that could not load. */
export const BUNDLE_STARTED = Symbol.for('booking.bundle.started');

/**
 * A bundle of `entry` (a TypeScript file) and every source it imports, kept in `cacheDir` (a folder in
 * a node_modules, so that its imports of packages resolve from there): the build the manifest names
 * when every source it was made from is unchanged (compared by content) and its files are there (its
 * source maps, only for stack traces, may be gone), else a new one, built with esbuild, every file
 * named by its content. Packages stay outside it; what the sources import on demand (`await
 * import('./x.ts')`) is a chunk of its own, still loaded only when asked for. Several processes may
 * build at once: every file is written under a temporary name, flushed and renamed into place, the
 * manifest last, so a reader sees a whole build or the previous one. Each process marks the build it
 * runs, and a build is removed only once no process alive has marked it (a server may load a chunk
 * days after it started: the MCP protocol, at its first MCP request). Returns the entry's URL and the
 * folder's (its real path, which Node names the modules by). Throws when the folder cannot be written
 * or is not in a node_modules, when esbuild cannot be loaded, and on the sources' syntax errors.
 *
 * With `packagesInside`, the packages of PACKAGES_INSIDE are bundled too (`booking mcp`: a host waits
 * for its first answer; docs/decisions/stdio-first-answer.md). A folder holds builds of one kind.
 */
export async function bundledEntry(entry, cacheDir, { packagesInside = false } = {}) {
  mkdirSync(cacheDir, { recursive: true });
  const dir = realpathSync(cacheDir);
  if (path.basename(path.dirname(path.dirname(dir))) !== 'node_modules') {
    throw new Error(`${dir} is not in a node_modules folder: the bundle's packages would not be found`);
  }
  accessSync(dir, constants.W_OK);
  let manifest = readJson(path.join(dir, MANIFEST));
  if (!isCurrent(manifest, entry, dir, packagesInside)) {
    manifest = await build(entry, dir, packagesInside);
    removeUnusedBuilds(dir, manifest);
  }
  markInUse(dir, manifest.entry);
  return {
    entryUrl: pathToFileURL(path.join(dir, manifest.entry)).href,
    dirUrl: pathToFileURL(`${dir}/`).href,
  };
}

/** Makes the next run build afresh (a build that could not be loaded: cut short on disk, say). */
export function forgetBundle(cacheDir) {
  rmSync(path.join(cacheDir, MANIFEST), { force: true });
}

/** What a bundle depends on besides its sources and tsconfig: this file, which holds the options it is built with. */
const RECIPE = hash(readFileSync(fileURLToPath(import.meta.url)));

function isCurrent(manifest, entry, dir, packagesInside) {
  return (
    manifest?.recipe === RECIPE &&
    manifest.entryPoint === entry &&
    Boolean(manifest.packagesInside) === packagesInside &&
    manifest.outputs.every((name) => name.endsWith('.map') || existsSync(path.join(dir, name))) &&
    sourcesUnchanged(manifest.inputs)
  );
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Whether every source file still has the content the bundle was made from (a removed one has not). */
function sourcesUnchanged(inputs) {
  try {
    return Object.entries(inputs).every(([file, digest]) =>
      digest.startsWith('stat:') ? statDigest(file) === digest : hash(readFileSync(file)) === digest,
    );
  } catch {
    return false;
  }
}

/**
 * How a file the bundle was made from is recognised as unchanged: a source by its content; a package's
 * file, and with packagesInside every file, by its size and time of change (`stat:...`), which npm sets
 * anew for every file it installs and an editor for every file it saves. Reading and hashing the 5 MB of
 * the packages and 3 MB of sources at every start would cost a stdio server 30 ms of its first answer
 * (a file saved unchanged then rebuilds its bundle, once).
 */
function isPackageFile(file, projectDir) {
  const parts = path.relative(projectDir, file).split(path.sep);
  // Outside the project: a package beside it, the project being one itself (installed from a tarball).
  return parts[0] === '..' || parts.includes('node_modules');
}

function statDigest(file) {
  const { size, mtimeMs } = statSync(file);
  return `stat:${size}:${mtimeMs}`;
}

function hash(contents) {
  return createHash('sha256').update(contents).digest('hex');
}

/**
 * The packages `booking mcp` loads before its first answer that are made of many modules (kysely alone
 * is 262 files): bundled, Node resolves and reads one file instead of some 800. The other commands'
 * bundle holds them too: imported as separate modules, zod, kysely and libphonenumber-js cost a process 8 MB more RSS
 * than bundled (each module's record, and the C++ memory of loading it that the allocator keeps), and esbuild
 * leaves out what is never imported (zod's 64 locales). The others (natives; pino, whose transports
 * run files of its own in worker threads; fastify and its plugins) stay outside, imported from
 * node_modules as usual.
 */
const PACKAGES_INSIDE = [
  'kysely',
  'zod',
  'libphonenumber-js',
  'uuid',
  'commander',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/core',
  // The packages that import zod or the MCP core themselves, so that there is one copy of each.
  'fastify-type-provider-zod',
  '@modelcontextprotocol/server-legacy',
];

/** Leaves every package outside the bundle but those of PACKAGES_INSIDE. */
const packagesOutsideButThose = {
  name: 'packages-outside-but-those',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const inside = PACKAGES_INSIDE.some((name) => args.path === name || args.path.startsWith(`${name}/`));
      return inside ? undefined : { path: args.path, external: true };
    });
  },
};

async function build(entry, dir, packagesInside) {
  const esbuild = await import('esbuild');
  const inputs = {};
  // esbuild reads the sources' tsconfig.json too (how class fields are defined, for one); read before
  // the build, so that an edit made while it runs is seen by the next run.
  const tsconfig = nearest('tsconfig.json', path.dirname(entry));
  if (tsconfig) inputs[tsconfig] = hash(readFileSync(tsconfig));
  const result = await esbuild
    .build({
      entryPoints: { cli: entry },
      outdir: dir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      ...(packagesInside ? {} : { packages: 'external' }),
      // Named by content, so a build never overwrites a file of another that a process may still load.
      entryNames: '[name]-[hash]',
      chunkNames: 'chunk-[hash]',
      // ES modules whatever package.json says: Node looks for the module type no further up than
      // node_modules, where the bundle is kept.
      outExtension: { '.js': '.mjs' },
      banner: {
        js: [
          // CommonJS packages inside the bundle call require (for Node's own modules).
          ...(packagesInside ? ["import { createRequire as __bundleRequire } from 'node:module';"] : []),
          ...(packagesInside ? ['const require = __bundleRequire(import.meta.url);'] : []),
          `globalThis[Symbol.for(${JSON.stringify(BUNDLE_STARTED.description)})] = true;`,
        ].join(' '),
      },
      // Functions and classes keep their names where esbuild must rename one of two alike (`AppError2`):
      // errors, logs and stack traces read them.
      keepNames: true,
      // V8 keeps every module's source for as long as the process lives: without comments and
      // indentation the server's bundle holds 2.5 MB instead of 4, and no comment with a character above
      // U+00FF (a JSDoc dash) makes V8 store a whole chunk at two bytes a character. Stack traces are
      // mapped back to the sources' lines and columns all the same.
      minifyWhitespace: true,
      // For stack traces (bin/bundle-stack-traces.js), read only when one is written; no comment in the
      // bundle, so Node never loads it (and, with it, the maps of every package).
      sourcemap: 'external',
      sourcesContent: false,
      metafile: true,
      write: false,
      logLevel: 'silent',
      plugins: [
        ...(packagesInside ? [packagesOutsideButThose] : []),
        sourcesAsWritten(inputs, packagesInside ? null : path.dirname(tsconfig ?? entry)),
      ],
    })
    // esbuild builds in a process of its own, kept for the next build: there is none.
    .finally(() => esbuild.stop());
  // The entry's own output: a module imported on demand is an entry point of its chunk too.
  const entryOutput = Object.entries(result.metafile.outputs).find(
    ([, output]) =>
      output.entryPoint !== undefined && path.resolve(output.entryPoint) === path.resolve(entry),
  );
  const manifest = {
    recipe: RECIPE,
    esbuild: esbuild.version,
    entryPoint: entry,
    packagesInside,
    entry: path.basename(entryOutput[0]),
    outputs: result.outputFiles.map((file) => path.basename(file.path)),
    inputs,
  };
  for (const file of result.outputFiles) writeWhole(file.path, file.contents);
  writeWhole(path.join(dir, `${manifest.entry}.json`), JSON.stringify(manifest));
  writeWhole(path.join(dir, MANIFEST), JSON.stringify(manifest));
  return manifest;
}

/**
 * Loads each source as written, noting its digest for the manifest, with `import.meta` replaced by a
 * call of the same length to a function appended to the file, which gives the values `url`,
 * `filename` and `dirname` have in the source file (in the bundle they would name the bundle, and the
 * sources find files beside them by them: the migrations, the pages, packages loaded on demand with
 * createRequire). Same length, so that the source map's columns stay those of the file as written.
 * Any other use of `import.meta` fails the build. `projectDir` null: every input is recognised by
 * size and time of change (see statDigest).
 */
function sourcesAsWritten(inputs, projectDir) {
  return {
    name: 'sources-as-written',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        const bytes = readFileSync(args.path);
        inputs[args.path] =
          projectDir === null || isPackageFile(args.path, projectDir) ? statDigest(args.path) : hash(bytes);
        const text = bytes.toString('utf8');
        const unsupported = /\bimport\.meta\b(?!\.(url|filename|dirname)\b)/.exec(text);
        if (unsupported)
          throw new Error(`${args.path}: only import.meta.url, .filename and .dirname can be bundled`);
        const loader = /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js';
        if (!/\bimport\.meta\b/.test(text)) return { contents: text, loader };
        const meta = {
          url: pathToFileURL(args.path).href,
          filename: args.path,
          dirname: path.dirname(args.path),
        };
        const contents = `${text.replace(/\bimport\.meta\b/g, `${META}()`)}\nfunction ${META}() { return ${JSON.stringify(meta)}; }\n`;
        return { contents, loader };
      });
    },
  };
}

/** The function `import.meta` becomes: as long as `import.meta`. */
const META = '__iMeta__';

/** The file called `name` in `dir` or the closest folder above it; null if there is none. */
function nearest(name, dir) {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, name))) return path.join(at, name);
    if (path.dirname(at) === at) return null;
  }
}

/** Writes under a temporary name, flushed to disk, then renames: readers see the whole file or none. */
function writeWhole(file, contents) {
  const temporary = `${file}.${randomUUID()}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, contents);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

/** The marker of a process running a build: `<entry>.<pid>.in-use`. */
const IN_USE = /^(.+)\.(\d+)\.in-use$/;

/** Marks the build whose entry is `entry` as run by this process, until it exits. */
function markInUse(dir, entry) {
  const marker = path.join(dir, `${entry}.${process.pid}.in-use`);
  writeFileSync(marker, '');
  process.once('exit', () => rmSync(marker, { force: true }));
}

/**
 * Removes the files of builds no process alive runs (by its marker; a process that died without
 * removing its marker is found by its id), once they are old enough that no process can be about to
 * mark them. Best effort: what cannot be removed now is removed by a later build.
 */
function removeUnusedBuilds(dir, current) {
  try {
    const names = readdirSync(dir);
    const live = new Set([current.entry]);
    const keep = new Set([MANIFEST]);
    for (const name of names) {
      const marker = IN_USE.exec(name);
      if (marker && isAlive(Number(marker[2]))) {
        live.add(marker[1]);
        keep.add(name);
      }
    }
    for (const entry of live) {
      keep.add(`${entry}.json`);
      for (const output of readJson(path.join(dir, `${entry}.json`))?.outputs ?? []) keep.add(output);
    }
    const now = Date.now();
    for (const name of names.filter((each) => !keep.has(each))) {
      const file = path.join(dir, name);
      try {
        if (IN_USE.test(name) || now - statSync(file).mtimeMs > STALE_AFTER_MS) rmSync(file, { force: true });
      } catch {
        // Removed by another process meanwhile.
      }
    }
  } catch {
    // The folder cannot be listed now: a later build removes what this one leaves.
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // Alive, but another user's.
    return error.code === 'EPERM';
  }
}

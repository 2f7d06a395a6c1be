// Stack traces that name the sources, not the bundle (bin/bundle.js). Node's own source maps
// (--enable-source-maps) would do it, but they are one switch for every module: Node 20 would then
// read and keep the maps every package ships, 16 MB more under load (docs/decisions/no-build-step.md). Here only the bundle's maps are read, when a stack trace passes through the bundle.

import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Frames already placed, kept so that a repeated trace does not read a map again. */
const PLACED_FRAMES = 2_000;

/**
 * Formats stack traces as Node does (Error.prototype.toString, then a line per frame), with every
 * frame in a file under `bundleDirUrl` given its place in the source instead. A parsed map is about
 * ten times its file (11 MB for the whole bundle's), so it is held only weakly: a burst of traces
 * reads it once, and a server that logs an error now and then does not keep it.
 */
export function mapBundleStackTraces(bundleDirUrl) {
  const maps = new Map();
  const placed = new Map();
  const mapOf = (fileUrl) => {
    let map = maps.get(fileUrl)?.deref();
    if (map === undefined) {
      map = readMap(fileUrl);
      maps.set(fileUrl, new WeakRef(map ?? NO_MAP));
    }
    return map === NO_MAP ? null : map;
  };
  const place = (site) => {
    const text = String(site);
    const file = site.getFileName();
    if (!file?.startsWith(bundleDirUrl)) return text;
    let mapped = placed.get(text);
    if (mapped === undefined) {
      mapped = frameInSource(site, text, mapOf);
      if (placed.size >= PLACED_FRAMES) placed.delete(placed.keys().next().value);
      placed.set(text, mapped);
    }
    return mapped;
  };
  Error.prepareStackTrace = (error, callSites) =>
    headerOf(error) + callSites.map((site) => `\n    at ${place(site)}`).join('');
}

/** Stands for a map that could not be read, so that it is not read again at every frame. */
const NO_MAP = {};

function headerOf(error) {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return '<error>';
  }
}

function frameInSource(site, text, mapOf) {
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (line == null || column == null) return text;
  const origin = mapOf(file)?.findEntry(line - 1, column - 1);
  if (!origin?.originalSource) return text;
  const source = new URL(origin.originalSource, file).href;
  return text.replace(
    `${file}:${line}:${column}`,
    `${source}:${origin.originalLine + 1}:${origin.originalColumn + 1}`,
  );
}

/** The bundle file's map, written beside it; null if it is gone (the frame keeps the bundle's place). */
function readMap(fileUrl) {
  try {
    return new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(fileUrl)}.map`, 'utf8')));
  } catch {
    return null;
  }
}

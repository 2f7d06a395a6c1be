import type { ImportedName, SourceFile } from './import-graph.ts';

/**
 * The layering of docs/architecture.md as data: which layer each source file belongs to, and which
 * layers (and, for the pure ones, which packages) it may import. The architecture test checks every
 * import of src/ against it.
 */
export type Layer = 'domain' | 'contract' | 'data' | 'app' | 'mcp' | 'http' | 'cli';

interface Rule {
  /** Layers this layer may import (itself included). */
  layers: readonly Layer[];
  /** Packages it may import; undefined: any package. */
  packages?: readonly string[];
}

export const RULES: Readonly<Record<Layer, Rule>> = {
  // Pure: plain values and functions, luxon for time zones, nothing else (no I/O, not even node:crypto).
  domain: { layers: ['domain'], packages: ['luxon'] },
  // The public resource shapes (zod schemas, types, presenters) shared by both faces and the use cases.
  contract: { layers: ['contract', 'domain'], packages: ['zod'] },
  // Storage: Kysely over SQLite or PostgreSQL; it never calls up into use cases.
  data: { layers: ['data', 'domain'] },
  // The service layer: one function per use case.
  app: { layers: ['app', 'contract', 'data', 'domain'] },
  // The faces call the service layer, never storage, and never each other.
  mcp: { layers: ['mcp', 'app', 'contract', 'domain'] },
  http: { layers: ['http', 'app', 'contract', 'domain'] },
  // The composition root: the `booking` command wires everything.
  cli: { layers: ['cli', 'http', 'mcp', 'app', 'contract', 'data', 'domain'] },
};

/**
 * The one file of the HTTP face that reaches into src/mcp: the MCP protocol behind the endpoints, which
 * mcp-routes.ts loads on the first MCP request.
 */
export const MCP_MOUNT = 'src/http/mcp-protocol.ts';

/** The layer of a repository-relative source path, or undefined outside src/ (db/migrations, packages). */
export function layerOf(file: string): Layer | undefined {
  const match = /^src\/([^/]+)(\/|\.ts$)/.exec(file);
  if (!match) return undefined;
  const top = match[1]!;
  if (top === 'cli' || top === 'runtime') return 'cli';
  return (Object.keys(RULES) as Layer[]).includes(top as Layer) ? (top as Layer) : undefined;
}

/** Every import of `sources` that crosses a forbidden arrow, as "file -> import (why)". */
export function layerViolations(sources: readonly SourceFile[]): string[] {
  const violations: string[] = [];
  for (const { file, imports } of sources) {
    const from = layerOf(file);
    if (!from) {
      violations.push(`${file} (a file outside every layer: put it in one)`);
      continue;
    }
    const rule = RULES[from];
    for (const imported of imports) {
      if (imported.startsWith('src/')) {
        const to = layerOf(imported);
        const allowed =
          (to !== undefined && rule.layers.includes(to)) ||
          (from === 'http' && to === 'mcp' && file === MCP_MOUNT);
        if (!allowed) violations.push(`${file} -> ${imported} (${from} may not import ${to ?? 'that'})`);
      } else if (imported.startsWith('db/')) {
        if (from !== 'data' && from !== 'cli')
          violations.push(`${file} -> ${imported} (only data reads the schema)`);
      } else if (rule.packages && !rule.packages.includes(imported)) {
        violations.push(`${file} -> ${imported} (${from} may import only ${rule.packages.join(', ')})`);
      }
    }
  }
  return violations;
}

/**
 * The catalogue import's own order (src/app/catalogue-import): format < validation, storage <
 * import-catalogue.ts; storage never imports validation (nor the use case), validation never storage.
 */
const CATALOGUE = 'src/app/catalogue-import/';
const CATALOGUE_ROLES: Readonly<Record<string, readonly string[]>> = {
  format: ['format'],
  validation: ['validation', 'format'],
  storage: ['storage', 'format'],
  'import-catalogue.ts': ['import-catalogue.ts', 'validation', 'storage', 'format'],
};

export function catalogueViolations(sources: readonly SourceFile[]): string[] {
  const roleOf = (file: string) => file.slice(CATALOGUE.length).split('/')[0]!;
  const violations: string[] = [];
  for (const { file, imports } of sources) {
    if (!file.startsWith(CATALOGUE)) continue;
    const allowed = CATALOGUE_ROLES[roleOf(file)];
    if (!allowed) {
      violations.push(`${file} (not in format/, validation/, storage/ or import-catalogue.ts)`);
      continue;
    }
    for (const imported of imports) {
      if (imported.startsWith(CATALOGUE) && !allowed.includes(roleOf(imported))) {
        violations.push(`${file} -> ${imported} (${roleOf(file)} may not import ${roleOf(imported)})`);
      }
    }
  }
  return violations;
}

/**
 * Functions of the data layer that write a booking's history, each open to one file of the service
 * layer, its door: a change written through them anywhere else would skip what the door does with it,
 * above all the webhook event integrators are promised in the change's transaction (design.md 9.2).
 */
export const DOORS: readonly { module: string; name: string; door: string; because: string }[] = [
  {
    module: 'src/data/booking-repository.ts',
    name: 'appendEvent',
    door: 'src/app/booking-event-log.ts',
    because: "a booking's change is logged with logBookingEvent, which writes its webhook event",
  },
  {
    module: 'src/data/booking-repository.ts',
    name: 'insertNewBooking',
    door: 'src/app/booking-service.ts',
    because: 'a booking is created by createBooking, which writes booking.created',
  },
];

/** Every file that takes a door's function (or its whole module, which hands it over) but the door. */
export function doorViolations(names: ReadonlyMap<string, readonly ImportedName[]>): string[] {
  const violations: string[] = [];
  for (const [file, imported] of names) {
    for (const { module, name, door, because } of DOORS) {
      if (file === door || file === module) continue;
      const taken = imported.find((i) => i.from === module && (i.name === name || i.name === '*'));
      if (taken) {
        violations.push(
          `${file} -> ${module} ${taken.name === '*' ? `(the whole module, ${name} with it)` : name}: only ${door} may (${because})`,
        );
      }
    }
  }
  return violations;
}

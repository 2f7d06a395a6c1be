import { describe, expect, it } from 'vitest';
import {
  importCircles,
  importedNames,
  importsOf,
  loadedFrom,
  loadedWith,
  readImportedNames,
  readSources,
  type SourceFile,
} from '../helpers/import-graph.ts';
import { catalogueViolations, doorViolations, layerViolations } from '../helpers/layer-rules.ts';

/** The layering of docs/architecture.md, kept by a test: each arrow a file may not cross fails it. */
describe('architecture', () => {
  const sources = readSources('src');

  it('reads the sources', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.find((s) => s.file === 'src/cli.ts')?.imports).toContain('commander');
  });

  it('keeps every import of src/ inside its layer’s arrows', () => {
    expect(layerViolations(sources)).toEqual([]);
  });

  it('keeps the catalogue import’s order: format, then validation and storage, then the use case', () => {
    expect(catalogueViolations(sources)).toEqual([]);
  });

  // No face or use case can change a booking without its webhook event (design.md 9.2).
  it('lets only booking-event-log.ts append to a booking’s log, and only booking-service.ts create one', () => {
    const names = readImportedNames('src', 'booking-repository');
    expect(names.get('src/app/booking-event-log.ts')).toContainEqual({
      from: 'src/data/booking-repository.ts',
      name: 'appendEvent',
    });
    expect(doorViolations(names)).toEqual([]);
  });

  it('has no import circle in src/', () => {
    expect(importCircles(sources)).toEqual([]);
  });

  // What a process holds is what it loaded (docs/decisions/memory-under-load.md).
  it('starts `booking serve` without the MCP protocol, which its first MCP request loads', () => {
    const atStart = [...loadedFrom('src/cli/serve-command.ts', sources)];
    expect(atStart).toContain('fastify');
    expect(atStart.filter((name) => /^@modelcontextprotocol\/|^src\/mcp\//.test(name))).toEqual([]);
    expect(atStart).not.toContain('src/http/mcp-protocol.ts');
    // Nor ical.js, which the first external calendar to read loads.
    expect(atStart).not.toContain('ical.js');
  });

  it('starts every other command without the HTTP face or the MCP SDK', () => {
    const atStart = [...loadedFrom('src/cli.ts', sources)];
    expect(atStart).toContain('commander');
    expect(
      atStart.filter((name) => /^fastify$|^@modelcontextprotocol\/|^src\/(http|mcp)\//.test(name)),
    ).toEqual([]);
  });

  it('reads what a file loads with it: static imports that are not type-only', () => {
    const file = 'src/http/x.ts';
    const text = [
      "import type { A } from './a.ts';",
      "import { type B, c } from './b.ts';",
      "import { type D } from './d.ts';",
      "export type { E } from './e.ts';",
      "export { f } from './f.ts';",
      "const g = await import('./g.ts');",
    ].join('\n');
    expect(loadedWith(file, text)).toEqual(['src/http/b.ts', 'src/http/d.ts', 'src/http/f.ts']);
  });

  describe('fails on a forbidden arrow', () => {
    const one = (file: string, text: string): SourceFile[] => [
      { file, imports: importsOf(file, text), loadsWith: loadedWith(file, text) },
    ];

    it.each([
      [
        'src/mcp/tools/x.ts',
        "import { buildApp } from '../../http/build-app.ts';",
        'mcp may not import http',
      ],
      [
        'src/data/x.ts',
        "import type { Principal } from '../app/api-key-service.ts';",
        'data may not import app',
      ],
      ['src/domain/x.ts', "import { z } from 'zod';", 'domain may import only luxon'],
      ['src/domain/x.ts', "import { randomInt } from 'node:crypto';", 'domain may import only luxon'],
      ['src/domain/x.ts', "import type { Db } from '../data/database.ts';", 'domain may not import data'],
      [
        'src/http/routes/x.ts',
        "import { TOOLS } from '../../mcp/build-server.ts';",
        'http may not import mcp',
      ],
      [
        'src/http/x.ts',
        "export { bookTool } from '../mcp/tools/booking-tools.ts';",
        'http may not import mcp',
      ],
      ['src/mcp/x.ts', "const m = await import('../data/database.ts');", 'mcp may not import data'],
      ['src/contract/x.ts', "import type { AppDeps } from '../app/deps.ts';", 'contract may not import app'],
      ['src/app/x.ts', "import { buildApp } from '../http/build-app.ts';", 'app may not import http'],
    ])('%s: %s', (file, text, why) => {
      expect(layerViolations(one(file, text)).join('\n')).toContain(why);
    });

    it('allows the one place that mounts the MCP routes', () => {
      const mount = one(
        'src/http/mcp-protocol.ts',
        "import { buildMcpServer } from '../mcp/build-server.ts';",
      );
      expect(layerViolations(mount)).toEqual([]);
    });

    it('refuses storage code that calls up into the catalogue validation', () => {
      const file = 'src/app/catalogue-import/storage/x.ts';
      const storage = one(file, "import { validateCatalogue } from '../validation/validate.ts';");
      expect(catalogueViolations(storage).join('\n')).toContain('storage may not import validation');
    });

    it.each([
      ["import { appendEvent } from '../data/booking-repository.ts';", 'appendEvent'],
      ["import { appendEvent as log } from '../data/booking-repository.ts';", 'appendEvent'],
      ["import type { appendEvent } from '../data/booking-repository.ts';", 'appendEvent'],
      ["import * as bookings from '../data/booking-repository.ts';", 'the whole module'],
      ["export { appendEvent } from '../data/booking-repository.ts';", 'appendEvent'],
      ["export * from '../data/booking-repository.ts';", 'the whole module'],
      ["const { appendEvent } = await import('../data/booking-repository.ts');", 'the whole module'],
      ["import { insertNewBooking } from '../data/booking-repository.ts';", 'insertNewBooking'],
    ])('refuses a booking change past its door: %s', (text, what) => {
      const file = 'src/app/x.ts';
      expect(doorViolations(new Map([[file, importedNames(file, text)]])).join('\n')).toContain(what);
    });

    it('lets a use case read bookings, and the door append', () => {
      const reads = "import { findBookingById, updateBooking } from '../data/booking-repository.ts';";
      const door = "import { appendEvent } from '../data/booking-repository.ts';";
      expect(
        doorViolations(
          new Map([
            ['src/app/x.ts', importedNames('src/app/x.ts', reads)],
            ['src/app/booking-event-log.ts', importedNames('src/app/booking-event-log.ts', door)],
          ]),
        ),
      ).toEqual([]);
    });

    it('finds a circle', () => {
      const circle: SourceFile[] = [
        { file: 'src/a.ts', imports: ['src/b.ts'], loadsWith: [] },
        { file: 'src/b.ts', imports: ['src/c.ts'], loadsWith: [] },
        { file: 'src/c.ts', imports: ['src/a.ts'], loadsWith: [] },
      ];
      expect(importCircles(circle)).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/a.ts']]);
    });
  });
});

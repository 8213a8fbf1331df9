import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { beforeAll, describe, expect, it } from 'vitest';

// The layers of functions/ (docs/architecture.md), lowest first: a file may import its own layer and the
// layers below it, never one above. control/ and gateway/ are the two application halves of one layer.
const LAYERS: Record<string, number> = {
  core: 0,
  store: 1,
  providers: 1,
  guardrails: 2,
  gateway: 3,
  control: 3,
  // The OpenAPI document describes both halves: it reads control/'s body tables and core/'s operations.
  openapi: 3,
  middleware: 4,
  handlers: 5,
};

const root = fileURLToPath(new URL('../..', import.meta.url));
let graph: Record<string, string[]>;
let circles: string[][];

beforeAll(async () => {
  const result = await madge(['functions', 'lib', 'local'], {
    baseDir: root,
    fileExtensions: ['ts'],
    tsConfig: `${root}tsconfig.json`,
  });
  graph = result.obj();
  circles = result.circular();
}, 60_000);

const layerOf = (file: string) => {
  const m = /^functions\/([^/]+)\//.exec(file);
  return m?.[1] === undefined ? undefined : LAYERS[m[1]];
};

describe('the import graph', () => {
  it('has no circle', () => {
    expect(circles).toEqual([]);
  });

  it('reads every folder of functions/ as a known layer', () => {
    const unknown = Object.keys(graph).filter((f) => f.startsWith('functions/') && layerOf(f) === undefined);
    expect(unknown).toEqual([]);
  });

  it('keeps core/ free of imports from the rest of the project', () => {
    const outward = Object.entries(graph).flatMap(([file, deps]) =>
      file.startsWith('functions/core/')
        ? deps.filter((d) => !d.startsWith('functions/core/')).map((d) => `${file} -> ${d}`)
        : [],
    );
    expect(outward).toEqual([]);
  });

  it('never imports a higher layer', () => {
    const upward = Object.entries(graph).flatMap(([file, deps]) => {
      const own = layerOf(file);
      if (own === undefined) return [];
      return deps.filter((d) => (layerOf(d) ?? -1) > own).map((d) => `${file} -> ${d}`);
    });
    expect(upward).toEqual([]);
  });
});

describe('configuration', () => {
  it('is read from the environment only by core/settings.ts', () => {
    const files = readdirSync(join(root, 'functions'), { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    const readers = files.filter(
      (f) =>
        f !== join('core', 'settings.ts') &&
        readFileSync(join(root, 'functions', f), 'utf8').includes('process.env'),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(readers).toEqual([]);
  });
});

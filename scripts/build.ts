// `npm run build`: bundles each function group exactly as the stack does, into dist/<group>/index.mjs with
// its esbuild metafile beside it, and prints the bundle sizes (what cold start and deploy pay for).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildDashboard } from '../dashboard/build';
import { FUNCTION_GROUPS, REALTIME_FUNCTIONS } from '../functions/core/operations';
import { LOG_EXPORT_ENTRY } from '../lib/analytics';
import { BUNDLE_FILE_NAME, BUNDLED_ASSETS, esbuildOptions, startupBytes, totalBytes } from '../lib/bundling';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

// Function URL groups, the realtime functions and the log export: everything the stack deploys.
const ENTRIES: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries({ ...FUNCTION_GROUPS, ...REALTIME_FUNCTIONS }).map(([name, def]) => [name, def.entry]),
  ),
  logExport: LOG_EXPORT_ENTRY,
};

interface Row {
  group: string;
  file: string;
  /** What a cold start loads: index.mjs and the chunks it imports statically. */
  startupKb: number;
  /** Everything in the package: lazy chunks and static files too. */
  kb: number;
}

async function bundle(group: string): Promise<Row> {
  const outdir = join(dist, group);
  await mkdir(outdir, { recursive: true });
  const entry = ENTRIES[group];
  if (!entry) throw new Error(`no entry for ${group}`);
  const result = await build(esbuildOptions(join(root, entry), outdir));
  const metafile = result.metafile;
  if (!metafile) throw new Error(`esbuild returned no metafile for ${group}`);
  await writeFile(join(dist, group, 'meta.json'), JSON.stringify(metafile));
  // Only the bundle itself: a source map, when enabled, is not loaded unless --enable-source-maps.
  let bytes = totalBytes(metafile);
  // Static files ship in the same deployment package, so they count towards its size.
  const folder = (BUNDLED_ASSETS as Record<string, string | undefined>)[group];
  if (folder) {
    const files = await buildDashboard(join(dist, group, folder));
    bytes += files.reduce((sum, f) => sum + f.bytes, 0);
    for (const f of files) {
      console.log(
        `${group}: ${folder}/${f.name} ${(f.bytes / 1024).toFixed(1)} KB, gzip ${(f.gzipBytes / 1024).toFixed(1)} KB`,
      );
    }
  }
  return {
    group,
    file: relative(root, join(outdir, BUNDLE_FILE_NAME)),
    startupKb: startupBytes(metafile) / 1024,
    kb: bytes / 1024,
  };
}

async function main(): Promise<void> {
  const groups = Object.keys(ENTRIES);
  const rows = await Promise.all(groups.map(bundle));
  const width = Math.max(...rows.map((r) => r.file.length), 'bundle'.length);
  console.log(
    `${'group'.padEnd(10)} ${'bundle'.padEnd(width)} ${'cold start (KB)'.padStart(16)} ${'package (KB)'.padStart(13)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.group.padEnd(10)} ${r.file.padEnd(width)} ${r.startupKb.toFixed(1).padStart(16)} ${r.kb.toFixed(1).padStart(13)}`,
    );
  }
  const total = rows.reduce((sum, r) => sum + r.kb, 0);
  console.log(
    `${'total'.padEnd(10)} ${''.padEnd(width)} ${''.padStart(16)} ${total.toFixed(1).padStart(13)}`,
  );
}

main().catch((error: unknown) => {
  // esbuild has already printed its diagnostics; anything else is shown here.
  if (!(error instanceof Error && 'errors' in error)) console.error(error);
  process.exitCode = 1;
});

// `tsx scripts/bundle-function.ts <entry> <out dir> [--sourcemap]`: bundles one handler with code splitting
// into <out dir> (index.mjs and its lazy chunks). The stack runs it after NodejsFunction's own single-file
// build (lib/bundling.ts), replacing that index.mjs, so deployed and `npm run build` bundles are the same.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_FILE_NAME, esbuildOptions } from '../lib/bundling';

const [entry, outdir] = process.argv.slice(2);
if (!entry || !outdir) throw new Error('usage: bundle-function.ts <entry> <out dir> [--sourcemap]');
const sourceMaps = process.argv.includes('--sourcemap');
await rm(join(outdir, BUNDLE_FILE_NAME), { force: true });
await rm(join(outdir, `${BUNDLE_FILE_NAME}.map`), { force: true });
await build({ ...esbuildOptions(entry, outdir, sourceMaps), metafile: false });

// Builds the web dashboard into one folder: index.html and content-hashed JS and CSS. Used by the local
// server at start (into the data dir), by `npm run build`, and by the stack's bundling of the dashboard
// function (`tsx dashboard/build.ts <out dir>`), so every runtime serves the same files.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The URL path the dashboard function serves; asset links are absolute under it. */
export const DASHBOARD_PATH = '/dashboard';

export interface BuiltFile {
  name: string;
  bytes: number;
  gzipBytes: number;
}

function indexHtml(script: string, style: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>LLM gateway dashboard</title>
<link rel="icon" href="data:,">
${style ? `<link rel="stylesheet" href="${DASHBOARD_PATH}/${style}">\n` : ''}<script type="module" src="${DASHBOARD_PATH}/${script}"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`;
}

/** Builds the dashboard into `outDir` (emptied first); returns each file with its size. */
export async function buildDashboard(outDir: string): Promise<BuiltFile[]> {
  const result = await build({
    entryPoints: [join(HERE, 'src', 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    // Browsers of the last few years: native ESM, optional chaining, class fields.
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: outDir,
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const files = new Map<string, Uint8Array>();
  for (const output of result.outputFiles) files.set(basename(output.path), output.contents);
  const names = [...files.keys()];
  const script = names.find((n) => n.endsWith('.js'));
  if (!script) throw new Error('the dashboard build produced no script');
  files.set(
    'index.html',
    Buffer.from(
      indexHtml(
        script,
        names.find((n) => n.endsWith('.css')),
      ),
    ),
  );

  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await Promise.all([...files].map(([name, contents]) => writeFile(join(outDir, name), contents)));
  return [...files].map(([name, contents]) => ({
    name,
    bytes: contents.byteLength,
    gzipBytes: gzipSync(contents).byteLength,
  }));
}

// Run as a script: `tsx dashboard/build.ts <out dir>`.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error('usage: tsx dashboard/build.ts <out dir>');
    process.exit(2);
  }
  buildDashboard(resolve(outDir)).then(
    (files) => {
      for (const f of files) console.log(`${f.name}  ${f.bytes} bytes, ${f.gzipBytes} gzipped`);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

import { build } from 'esbuild';
import { esbuildOptions, startupBytes, totalBytes } from './lib/bundling';
import { writeFileSync } from 'node:fs';
const group = process.argv[2] ?? 'functions/handlers/chat.ts';
const r = await build({ ...esbuildOptions(group, '/tmp/bb/split', false), logLevel: 'error' });
const m = r.metafile!;
writeFileSync('/tmp/bb/meta-split.json', JSON.stringify(m));
for (const [p, o] of Object.entries(m.outputs)) console.log(p, (o.bytes/1024).toFixed(1), o.imports.map(i=>i.kind+':'+i.path).join(' '));
console.log('startup', (startupBytes(m)/1024).toFixed(1), 'total', (totalBytes(m)/1024).toFixed(1));

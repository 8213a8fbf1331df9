import { build } from 'esbuild';
import { esbuildOptions, startupBytes } from './lib/bundling';
const stubs = process.argv.slice(2);
const o = esbuildOptions('functions/handlers/chat.ts', '/tmp/bb/stub', false);
const plugins = [{ name: 'stub', setup(b: any) { b.onResolve({ filter: new RegExp('^(' + stubs.map(s => s.replace(/[/.]/g, '\\$&')).join('|') + ')$') }, (a: any) => ({ path: a.path, namespace: 'stub' })); b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export const EventStreamCodec = class {}; export default {}; export const Sha256 = class {}', loader: 'js' })); } }];
const r = await build({ ...o, plugins, logLevel: 'error' });
console.log(stubs.join(','), (startupBytes(r.metafile!) / 1024).toFixed(1));

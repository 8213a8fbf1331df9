import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_GROUPS } from '../../functions/core/operations';
import { BUNDLE_FILE_NAME, esbuildOptions } from '../../lib/bundling';

// The chat function built as deployed and imported in a fresh Node process, as a cold start does: it
// loads, and it leaves out what it does not use of Node itself. On Node 22 and later an ESM import of
// `node:http` would load Node's bundled undici (about 25 ms; functions/core/node-http.ts); Node 20's
// `http` has no such getters, and there bundle-budget.test.ts's check of the bundle's imports holds it.

const root = join(import.meta.dirname, '../..');
const outDir = mkdtempSync(join(tmpdir(), 'gateway-cold-'));

beforeAll(async () => {
  await build({
    ...esbuildOptions(join(root, FUNCTION_GROUPS.chat.entry), outDir, false),
    absWorkingDir: root,
  });
}, 60_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('the chat function at a cold start', () => {
  it("imports in a fresh process without Node's undici, HTTP/2, zlib or worker threads", () => {
    const script = [
      'globalThis.awslambda={streamifyResponse:(h)=>h,HttpResponseStream:{from:(s)=>s}};',
      `const m=await import(${JSON.stringify(join(outDir, BUNDLE_FILE_NAME))});`,
      'console.log(JSON.stringify({handler:typeof m.handler,modules:process.moduleLoadList}));',
    ].join('');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, TABLE_CONTROL: 'c', TABLE_LOGS: 'l', AWS_REGION: 'us-east-1' },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    const { handler, modules } = JSON.parse(run.stdout) as { handler: string; modules: string[] };
    expect(handler).toBe('function');
    // Loaded, so the list is the one the bundle's imports made.
    expect(modules).toContain('NativeModule _http_client');
    expect(modules.filter((m) => /undici|http2|zlib|worker_threads/.test(m))).toEqual([]);
  });
});

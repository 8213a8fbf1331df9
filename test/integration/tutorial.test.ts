import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai';
import { type StartedProcess, startLocalProcess } from '../support/local-process';

// The README's tutorial, run as a newcomer runs it: `npm start` on a fresh data dir, then every block
// tagged `sh tutorial` in one shell, in order, and every `ts tutorial file=<name>` block saved under its
// name. The only changes: the printed admin key, the server's port, and a fake Ollama for the real one.

interface Block {
  lang: 'sh' | 'ts';
  file?: string;
  code: string;
}

function tutorialBlocks(): Block[] {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const blocks: Block[] = [];
  for (const m of readme.matchAll(/```(sh|ts) tutorial([^\n]*)\n([\s\S]*?)```/g)) {
    const file = /file=(\S+)/.exec(m[2] ?? '')?.[1];
    blocks.push({ lang: m[1] as 'sh' | 'ts', file, code: m[3] ?? '' });
  }
  return blocks;
}

let fake: FakeOpenAI;
let gateway: StartedProcess;
let dataDir: string;
let workDir: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  dataDir = mkdtempSync(join(tmpdir(), 'gateway-tutorial-'));
  // Inside the repository, so that `npx tsx hello.ts` finds `openai` as a reader's checkout does.
  mkdirSync(join(process.cwd(), 'test-output'), { recursive: true });
  workDir = mkdtempSync(join(process.cwd(), 'test-output', 'tutorial-'));
  gateway = await startLocalProcess({ GATEWAY_DATA_DIR: dataDir, GATEWAY_LOG_LEVEL: 'warn' });
});
afterAll(async () => {
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

describe('the README tutorial', () => {
  it('runs from npm start to a logged call and a refused budget, as written', async () => {
    const blocks = tutorialBlocks();
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(6);
    const adminKey = /export GATEWAY_ADMIN_KEY=(gwk_\S+)/.exec(gateway.output())?.[1];
    expect(adminKey, 'npm start prints the export line').toBeTruthy();
    const root = gateway.url.replace(/\/v1$/, '');
    const fakeRoot = fake.url.replace(/\/v1$/, '');
    const local = (code: string) =>
      code
        .replaceAll('gwk_paste_the_printed_key_here', adminKey as string)
        .replaceAll('http://localhost:8787', root)
        .replaceAll('http://localhost:11434', fakeRoot);

    let script = 'set -euo pipefail\n';
    let step = 0;
    for (const block of blocks) {
      if (block.lang === 'ts') {
        writeFileSync(join(workDir, block.file ?? `step-${step}.ts`), local(block.code));
        continue;
      }
      // A marker with the time (ms) before each step, for the transcript.
      script += `printf '\\n### command block %s at %s ms\\n' ${++step} "$(date +%s%3N)"\n${local(block.code)}\n`;
    }
    script += `printf '\\n### end at %s ms\\n' "$(date +%s%3N)"\n`;
    // Not spawnSync: the fake provider answers from this process's event loop.
    const child = spawn('bash', ['-c', script], {
      cwd: workDir,
      env: { ...process.env, PATH: `${join(process.cwd(), 'node_modules', '.bin')}:${process.env.PATH}` },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    writeFileSync(join(process.cwd(), 'test-output', 'tutorial-transcript.txt'), `${out}\n${err}`);
    expect(status, err).toBe(0);

    // Step 5 and 6: the fake provider answered through the virtual key, whole and streamed.
    expect(out).toContain('Echo: Say hello');
    expect(out).toContain('Echo: Count to three');
    expect(fake.requests.every((r) => r.headers.authorization === 'Bearer ollama')).toBe(true);
    // Step 7: the three calls are in the logs, with their model and cost.
    const logLines = out.split('\n').filter((l) => / llama3\.2 200 /.test(l));
    expect(logLines).toHaveLength(3);
    expect(logLines.some((l) => l.endsWith('stream'))).toBe(true);
    // Step 8: the budget refuses the call before it is sent.
    const served = fake.requests.length;
    expect(out).toContain('HTTP 412');
    expect(out).toContain('"code":"budget_exceeded"');
    expect(fake.requests).toHaveLength(served);
  }, 150_000);
});

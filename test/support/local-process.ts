import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { sleep } from './fake-openai';

// The local runtime as a user runs it (`npm start` runs local/main.ts), in a child process.

export interface StartedProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `node --import tsx <args>` from the project's root, collecting what it prints on both streams. */
function spawnTsx(
  args: string[],
  env: NodeJS.ProcessEnv,
  detached = false,
): { child: ChildProcessByStdio<null, Readable, Readable>; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: process.cwd(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  let out = '';
  const collect = (d: Buffer) => {
    out += d;
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return { child, output: () => out };
}

/** Starts `local/main.ts` with the environment given and waits for its listening line. */
export async function startLocalProcess(env: Record<string, string>): Promise<StartedProcess> {
  const { child, output } = spawnTsx(
    ['local/main.ts'],
    // An in-process gateway of the same test file leaves its DynamoDB endpoint in process.env.
    { ...process.env, PORT: '0', GATEWAY_ADMIN_KEY: '', DYNAMODB_ENDPOINT: '', ...env },
  );
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  for (let i = 0; i < 300; i++) {
    const m = /listening on (http:\/\/[\d.]+:\d+\/v1)/.exec(output());
    if (m?.[1]) {
      await sleep(50); // the admin key line follows the listening line
      return { child, url: m[1], output, exited };
    }
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`gateway did not start:\n${output()}`);
}

/** Waits until the process has printed text matching `pattern`. */
export async function waitForOutput(started: StartedProcess, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (pattern.test(started.output())) return;
    await sleep(25);
  }
  throw new Error(`no output matching ${pattern}:\n${started.output()}`);
}

/**
 * Runs `node --import tsx <args>` to its end (a bench, a script) and gives its exit code and output. The
 * script runs in a process group of its own: if it has not ended within `timeoutMs`, the whole group (the
 * servers it started included) is killed and the promise rejects with what it printed.
 */
export function runScript(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const { child, output } = spawnTsx(args, { ...process.env, ...env }, true);
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`${args.join(' ')} did not end within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out: output() });
    });
  });
}

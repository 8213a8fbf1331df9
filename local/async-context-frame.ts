// The local server keeps each invocation's log context (request id, Lambda context) in an
// AsyncLocalStorage, as Powertools does on Lambda when one environment serves several invocations at once.
// Until Node 24 that storage runs a hook on every promise and async resource; Node 22 has the cheaper
// implementation (AsyncContextFrame, the default from Node 24) behind `--experimental-async-context-frame`.
// On Node 22 with that flag, the gateway's overhead and CPU per request fell 5-14% in interleaved runs
// (docs/performance.md, "Which Node"). So `npm start` on Node 22 restarts itself with the flag before it
// loads anything else: `process.execve` (Node 22.15 and later) replaces the process in place, with the
// same id, standard streams and arguments, so whoever started it (a shell, tsx, a test) sees no
// difference.
// `GATEWAY_ASYNC_CONTEXT_FRAME=0` keeps the process as it was started.

import { parseSettings } from '../functions/core/settings';

export const ASYNC_CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

export interface RuntimeFacts {
  nodeVersion: string;
  execPath: string;
  execArgv: readonly string[];
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  execve: Execve | undefined;
}

/** The arguments to restart this process with, or undefined when it should go on as it is. */
export function restartArguments(facts: RuntimeFacts): string[] | undefined {
  if (Number(facts.nodeVersion.replace(/^v/, '').split('.')[0]) !== 22) return undefined;
  if (!facts.execve || !wanted(facts.env)) return undefined;
  const given = [...facts.execArgv, ...(facts.env.NODE_OPTIONS ?? '').split(/\s+/)];
  // Asked for either way already (the restarted process has it in its own arguments).
  if (given.some((arg) => arg.endsWith('async-context-frame'))) return undefined;
  return [facts.execPath, ASYNC_CONTEXT_FRAME_FLAG, ...facts.execArgv, ...facts.argv.slice(1)];
}

/** The setting, read as every setting is; a variable that is not valid leaves it to the start to name. */
function wanted(env: NodeJS.ProcessEnv): boolean {
  try {
    return parseSettings(env).asyncContextFrame;
  } catch {
    return false;
  }
}

/** Restarts this process with AsyncContextFrame where that helps (see above); otherwise returns. */
export function useAsyncContextFrame(): void {
  const execve = (process as unknown as { execve?: Execve }).execve;
  const args = restartArguments({
    nodeVersion: process.version,
    execPath: process.execPath,
    execArgv: process.execArgv,
    argv: process.argv,
    env: process.env,
    execve,
  });
  if (!args || !execve) return;
  try {
    execve.call(process, process.execPath, args, process.env);
  } catch {
    // Not available on this platform, or refused: go on as started.
  }
}

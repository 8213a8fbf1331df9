import { describe, expect, it } from 'vitest';
import {
  ASYNC_CONTEXT_FRAME_FLAG,
  type RuntimeFacts,
  restartArguments,
} from '../../local/async-context-frame';

// `npm start` on Node 22 restarts itself with AsyncContextFrame (local/async-context-frame.ts). CI runs
// one Node version, so the decision is tested here for each; local-runtime.test.ts checks the restart
// (or its absence) on whichever Node runs it, and it passed on Node 20.20.2, 22.23.3 and 24.21.0.

const execve = (() => {
  throw new Error('not called by restartArguments');
}) as RuntimeFacts['execve'];

const facts = (over: Partial<RuntimeFacts> = {}): RuntimeFacts => ({
  nodeVersion: 'v22.23.3',
  execPath: '/usr/bin/node',
  execArgv: ['--require', '/app/node_modules/tsx/dist/preflight.cjs', '--import', 'file:///app/loader.mjs'],
  argv: ['/usr/bin/node', '/app/local/main.ts', '--some-arg'],
  env: {},
  execve,
  ...over,
});

describe('restartArguments', () => {
  it('restarts Node 22 with the flag first, then its own flags, script and arguments', () => {
    expect(restartArguments(facts())).toEqual([
      '/usr/bin/node',
      ASYNC_CONTEXT_FRAME_FLAG,
      '--require',
      '/app/node_modules/tsx/dist/preflight.cjs',
      '--import',
      'file:///app/loader.mjs',
      '/app/local/main.ts',
      '--some-arg',
    ]);
  });

  it('leaves a process that already has the flag, or its negation, as it is (no restart loop)', () => {
    expect(restartArguments(facts({ execArgv: [ASYNC_CONTEXT_FRAME_FLAG] }))).toBeUndefined();
    expect(
      restartArguments(
        facts({ env: { NODE_OPTIONS: `--max-old-space-size=512 ${ASYNC_CONTEXT_FRAME_FLAG}` } }),
      ),
    ).toBeUndefined();
    expect(restartArguments(facts({ execArgv: ['--no-experimental-async-context-frame'] }))).toBeUndefined();
  });

  it('leaves Node 20 (no AsyncContextFrame) and Node 24 and later (the default) as they are', () => {
    for (const nodeVersion of ['v20.20.2', 'v24.21.0', 'v26.1.0', 'v23.11.0']) {
      expect(restartArguments(facts({ nodeVersion }))).toBeUndefined();
    }
  });

  it('leaves Node 22 before process.execve (22.15), and an opt-out, as they are', () => {
    expect(restartArguments(facts({ execve: undefined }))).toBeUndefined();
    expect(restartArguments(facts({ env: { GATEWAY_ASYNC_CONTEXT_FRAME: '0' } }))).toBeUndefined();
    expect(restartArguments(facts({ env: { GATEWAY_ASYNC_CONTEXT_FRAME: '1' } }))).toBeDefined();
  });
});

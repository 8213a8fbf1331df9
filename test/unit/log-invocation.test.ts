import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type * as LoggerModule from '../../functions/core/logger';
import { logger, logInvocation } from '../../functions/core/logger';
import { loadSettings } from '../../functions/core/settings';
import { installAwsLambdaShim, invoke } from '../../local/awslambda-shim';
import { captureLogLines } from '../support/log-lines';

// logInvocation puts an invocation's context and keys on its log lines, and never one invocation's keys
// on another's lines: on a runtime that runs one invocation at a time it clears the last one's keys; where
// each invocation has a scope of its own it has nothing to clear. Both happen at the invocation's first
// line: an invocation that writes none costs nothing, and the cold start stays the first invocation's.

const contextOf = (id: string) =>
  ({
    awsRequestId: id,
    functionName: 'gateway-chat',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:gateway-chat',
    memoryLimitInMB: '512',
  }) as Context;

const lines = captureLogLines();
const concurrency = process.env.AWS_LAMBDA_MAX_CONCURRENCY;
const initialization = process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
afterEach(() => {
  if (concurrency === undefined) delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
  else process.env.AWS_LAMBDA_MAX_CONCURRENCY = concurrency;
  if (initialization === undefined) delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
  else process.env.AWS_LAMBDA_INITIALIZATION_TYPE = initialization;
  loadSettings();
});

/** The logger module as a new Lambda container loads it: on-demand, one invocation at a time. */
async function onDemandContainer(): Promise<typeof LoggerModule> {
  delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
  process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
  loadSettings();
  vi.resetModules();
  const module = await import('../../functions/core/logger');
  module.logger.setLogLevel('WARN');
  return module;
}

/** One invocation: its keys, then one warning. */
function invocation(id: string, keys: Record<string, string>): void {
  logInvocation(contextOf(id), keys);
  logger.warn('work done');
}

describe('logInvocation', () => {
  it('clears the last invocation keys where invocations run one at a time', () => {
    delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
    loadSettings();
    const reset = vi.spyOn(logger, 'resetKeys');
    invocation('fn-1', { requestId: 'req-1', model: 'gpt-4o' });
    invocation('fn-2', { requestId: 'req-2' });
    expect(reset).toHaveBeenCalledTimes(2);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ requestId: 'req-1', model: 'gpt-4o', function_request_id: 'fn-1' });
    expect(lines[1]).toMatchObject({ requestId: 'req-2', function_request_id: 'fn-2' });
    expect(lines[1]).not.toHaveProperty('model');
  });

  it('puts nothing on the logger for an invocation that writes no line, and nothing of it on the next', () => {
    delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
    loadSettings();
    const addContext = vi.spyOn(logger, 'addContext');
    logInvocation(contextOf('fn-1'), { requestId: 'req-1', model: 'gpt-4o' });
    expect(addContext).not.toHaveBeenCalled();
    invocation('fn-2', { requestId: 'req-2' });
    expect(addContext).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: 'req-2', function_request_id: 'fn-2' });
    expect(lines[0]).not.toHaveProperty('model');
  });

  it("marks the container's first invocation as its cold start, even when it writes no line", async () => {
    const first = await onDemandContainer();
    first.logInvocation(contextOf('fn-1'), { requestId: 'req-1' });
    first.logInvocation(contextOf('fn-2'), { requestId: 'req-2' });
    first.logger.warn('work done');
    const second = await onDemandContainer();
    second.logInvocation(contextOf('fn-3'), { requestId: 'req-3' });
    second.logger.warn('work done');
    second.logInvocation(contextOf('fn-4'), { requestId: 'req-4' });
    second.logger.warn('work done');
    expect(lines.map((line) => [line.requestId, line.cold_start])).toEqual([
      ['req-2', false],
      ['req-3', true],
      ['req-4', false],
    ]);
  });

  it('keeps each invocation keys to its own lines where each has a scope of its own', async () => {
    // As the local server starts: the runtime's globals, then the settings read again.
    installAwsLambdaShim();
    loadSettings();
    const reset = vi.spyOn(logger, 'resetKeys');
    const run = (id: string, keys: Record<string, string>, pause: number) =>
      invoke(contextOf(id), async () => {
        logInvocation(contextOf(id), keys);
        await new Promise((resolve) => setTimeout(resolve, pause));
        logger.warn('work done');
      });
    // Side by side: the second starts while the first waits, and ends first.
    await Promise.all([
      run('fn-1', { requestId: 'req-1', model: 'gpt-4o' }, 30),
      run('fn-2', { requestId: 'req-2' }, 5),
    ]);
    // One after the other, in new scopes: nothing of the earlier ones is on the later line.
    await run('fn-3', { requestId: 'req-3' }, 0);
    // Nothing to clear in a new scope: the keys' reset is not paid for.
    expect(reset).not.toHaveBeenCalled();
    expect(lines).toHaveLength(3);
    const byRequest = new Map(lines.map((line) => [line.requestId, line]));
    expect(byRequest.get('req-1')).toMatchObject({ model: 'gpt-4o', function_request_id: 'fn-1' });
    expect(byRequest.get('req-2')).toMatchObject({ function_request_id: 'fn-2' });
    expect(byRequest.get('req-2')).not.toHaveProperty('model');
    expect(byRequest.get('req-3')).toMatchObject({ function_request_id: 'fn-3' });
    expect(byRequest.get('req-3')).not.toHaveProperty('model');
  });

  it("keeps of the invocation's context only what a line takes, not the request the context carries", async () => {
    installAwsLambdaShim();
    loadSettings();
    const store = (globalThis as { awslambda: { InvokeStore: { getContext(): object | undefined } } })
      .awslambda.InvokeStore;
    // The gateway's context carries the whole request (`gateway`). Most invocations write no line, and
    // their scope lives as long as any promise made in it (a log write after the reply): it must not
    // hold the request for so long.
    const request = { body: 'x'.repeat(1000) };
    const context = Object.assign(contextOf('fn-5'), { gateway: request });
    const held = new Set<unknown>();
    const walk = (value: unknown) => {
      if (typeof value !== 'object' || value === null || held.has(value)) return;
      held.add(value);
      for (const key of Reflect.ownKeys(value)) walk((value as Record<PropertyKey, unknown>)[key]);
    };
    await invoke(context, async () => {
      logInvocation(context, { requestId: 'req-5' });
      walk(store.getContext());
      // A change to the context after the start is not on the lines: they take what was there.
      context.functionName = 'changed';
      logger.warn('work done');
    });
    expect(held.has(context)).toBe(false);
    expect(held.has(request)).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requestId: 'req-5',
      function_request_id: 'fn-5',
      function_name: 'gateway-chat',
    });
  });
});

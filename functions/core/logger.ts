import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { settings } from './settings';

// Operational logs (CloudWatch on AWS, stdout locally). Never a secret or a body.
export const logger = new Logger({ serviceName: settings().serviceName });

/**
 * Puts the invocation's Lambda context (`function_request_id`, `cold_start`, ...) and the given keys (the
 * gateway's `requestId`) on every log line the invocation writes, however deep, so nothing passes them
 * down. Where the runtime runs invocations side by side (Lambda Managed Instances, the local server),
 * Powertools keeps them per invocation. What Powertools' `injectLambdaContext` middleware does, less its
 * sample-rate refresh: that puts back the level the logger was built with, undoing the local server's.
 */
export function logInvocation(context: Context, keys: Record<string, string> = {}): void {
  // An invocation in a scope of its own starts with no keys; else the last invocation's are still there.
  if (!inOwnScope()) logger.resetKeys();
  logger.addContext(context);
  logger.appendKeys(keys);
}

interface InvokeStoreGlobal {
  awslambda?: { InvokeStore?: { hasContext(): boolean } };
}

/**
 * Whether this invocation runs in a scope the runtime made for it alone (`AWS_LAMBDA_MAX_CONCURRENCY` set,
 * a context in its invoke store), where Powertools keeps the keys: a new scope holds none, and clearing
 * them would only cost a dozen reads of the environment on every request.
 */
function inOwnScope(): boolean {
  if (!settings().concurrentInvocations) return false;
  return (globalThis as InvokeStoreGlobal).awslambda?.InvokeStore?.hasContext() === true;
}

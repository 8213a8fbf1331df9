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
  logger.resetKeys();
  logger.addContext(context);
  logger.appendKeys(keys);
}

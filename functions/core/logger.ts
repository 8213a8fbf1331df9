import type { InvokeStoreBase } from '@aws/lambda-invoke-store';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';
import type { Context } from 'aws-lambda';
import { settings } from './settings';

/** An invocation's context and keys, put on the logger when the invocation first writes a line. */
interface Invocation {
  context: LambdaContextFields;
  keys: Record<string, string>;
  coldStart: boolean;
}

const PENDING = Symbol('gateway.logger.pendingInvocation');

/** What Powertools' `addContext` reads of the Lambda context. */
type LambdaContextFields = Pick<
  Context,
  'invokedFunctionArn' | 'awsRequestId' | 'memoryLimitInMB' | 'functionName' | 'functionVersion'
> & { tenantId?: string };

/**
 * The store of the invocation running now, where the runtime gives each one a scope of its own
 * (`AWS_LAMBDA_MAX_CONCURRENCY` set, a context in its invoke store: Lambda Managed Instances, the local
 * server); there Powertools keeps an invocation's keys, and a new scope holds none yet.
 */
function ownScope(): InvokeStoreBase | undefined {
  if (!settings().concurrentInvocations) return undefined;
  const store = (globalThis as { awslambda?: { InvokeStore?: InvokeStoreBase } }).awslambda?.InvokeStore;
  return store?.hasContext() === true ? store : undefined;
}

/**
 * Powertools' Logger, which takes an invocation's context and keys (see `logInvocation`) when that
 * invocation first writes a line: most invocations write none (locally, below WARN), and putting them on
 * the logger costs a context object, a deep merge and store lookups on every request.
 */
class InvocationLogger extends Logger {
  /** Where invocations run one at a time: the last one's, until it writes. */
  private pending: Invocation | undefined;

  invocation(context: Context, keys: Record<string, string>): void {
    // Powertools' cold-start flag (true until first read, on an on-demand init only) is taken now: it
    // belongs to the container's first invocation, whether or not that one writes a line.
    // Only the fields a log line takes: the invocation's scope lives as long as any promise made in it, and
    // the context itself carries the whole request (`gateway`), which must not outlive its invocation.
    const { invokedFunctionArn, awsRequestId, memoryLimitInMB, functionName, functionVersion } = context;
    const fields: LambdaContextFields = {
      invokedFunctionArn,
      awsRequestId,
      memoryLimitInMB,
      functionName,
      functionVersion,
      tenantId: (context as { tenantId?: string }).tenantId,
    };
    const invocation = { context: fields, keys, coldStart: this.coldStart };
    this.coldStart = false;
    const scope = ownScope();
    if (scope) scope.set(PENDING, invocation);
    else this.pending = invocation;
  }

  protected override processLogItem(
    logLevel: number,
    input: LogItemMessage,
    extraInput: LogItemExtraInput,
  ): void {
    this.applyPending();
    super.processLogItem(logLevel, input, extraInput);
  }

  private applyPending(): void {
    const scope = ownScope();
    let invocation: Invocation | undefined;
    if (scope) {
      invocation = scope.get<Invocation>(PENDING);
      if (invocation) scope.set(PENDING, undefined);
    } else {
      invocation = this.pending;
      this.pending = undefined;
      // The last invocation's keys are still there: they go first.
      if (invocation) this.resetKeys();
    }
    if (!invocation) return;
    // addContext reads (and clears) the flag: it gives this invocation's own.
    this.coldStart = invocation.coldStart;
    this.addContext(invocation.context as Context);
    this.appendKeys(invocation.keys);
  }
}

// Operational logs (CloudWatch on AWS, stdout locally). Never a secret or a body.
const invocationLogger = new InvocationLogger({ serviceName: settings().serviceName });
export const logger: Logger = invocationLogger;

/**
 * Puts the invocation's Lambda context (`function_request_id`, `cold_start`, ...) and the given keys (the
 * gateway's `requestId`) on every log line the invocation writes, however deep, so nothing passes them
 * down; never one invocation's on another's lines. Where the runtime runs invocations side by side,
 * Powertools keeps them per invocation. What Powertools' `injectLambdaContext` middleware does, less its
 * sample-rate refresh (that puts back the level the logger was built with, undoing the local server's),
 * and done at the invocation's first line rather than at its start.
 */
export function logInvocation(context: Context, keys: Record<string, string> = {}): void {
  invocationLogger.invocation(context, keys);
}

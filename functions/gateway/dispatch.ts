import { notFound } from '../core/errors';
import type { GatewayContext, HttpEvent, HttpResult, RequestState } from '../core/http';
import type { FunctionGroupName, OperationNameOf } from '../core/operations';

export type OperationHandler = (event: HttpEvent, state: RequestState) => Promise<HttpResult>;

/**
 * The implementations of a function group: exactly one per operation the group serves in
 * `core/operations.ts`, so a missing or misspelt handler is a compile error.
 */
export type OperationTable<G extends FunctionGroupName> = Record<OperationNameOf<G>, OperationHandler>;

/** The Middy handler of a function group: runs the implementation of the operation `route` found. */
export function dispatch<G extends FunctionGroupName>(_group: G, table: OperationTable<G>) {
  return (event: HttpEvent, context: GatewayContext): Promise<HttpResult> => {
    const name = context.gateway.operation?.name ?? '';
    const handlers: Record<string, OperationHandler> = table;
    const run = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
    if (!run) throw notFound(`Unknown route: ${event.requestContext.http.method} ${event.rawPath}`);
    return run(event, context.gateway);
  };
}

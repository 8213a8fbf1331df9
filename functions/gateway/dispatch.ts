import { notFound } from '../core/errors';
import type { GatewayContext, HttpEvent, HttpResult, RequestState } from '../core/http';

export type OperationHandler = (event: HttpEvent, state: RequestState) => Promise<HttpResult>;

/** The Middy handler of a function group: runs the implementation of the operation `route` found. */
export function dispatch(table: Record<string, OperationHandler>) {
  return (event: HttpEvent, context: GatewayContext): Promise<HttpResult> => {
    const name = context.gateway.operation?.name ?? '';
    const run = Object.hasOwn(table, name) ? table[name] : undefined;
    if (!run) throw notFound(`Unknown route: ${event.requestContext.http.method} ${event.rawPath}`);
    return run(event, context.gateway);
  };
}

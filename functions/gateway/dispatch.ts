import { internalError, notFound } from '../core/errors';
import type {
  CallerState,
  GatewayContext,
  HttpEvent,
  HttpResult,
  ModelCallState,
  RequestState,
} from '../core/http';
import type { FunctionGroupName, OperationEntry, OperationNameOf } from '../core/operations';

export type OperationHandler<S extends RequestState = RequestState> = (
  event: HttpEvent,
  state: S,
) => Promise<HttpResult>;

/** What an operation's implementation may rely on: a caller unless it is public, a log entry if logged. */
type StateOf<Op> = Op extends { logged: true }
  ? ModelCallState
  : Op extends { access: { kind: 'public' } }
    ? RequestState
    : CallerState;

/**
 * The implementations of a function group: exactly one per operation the group serves in
 * `core/operations.ts`, so a missing or misspelt handler is a compile error; each receives the state
 * narrowed to what its operation guarantees.
 */
export type OperationTable<G extends FunctionGroupName> = {
  [N in OperationNameOf<G>]: OperationHandler<StateOf<Extract<OperationEntry, { name: N }>>>;
};

/** The Middy handler of a function group: runs the implementation of the operation `route` found. */
export function dispatch<G extends FunctionGroupName>(_group: G, table: OperationTable<G>) {
  return (event: HttpEvent, context: GatewayContext): Promise<HttpResult> => {
    const name = context.gateway.operation?.name ?? '';
    const handlers = table as Record<string, OperationHandler<never>>;
    const run = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
    if (!run) throw notFound(`Unknown route: ${event.requestContext.http.method} ${event.rawPath}`);
    const state = context.gateway;
    const operation = state.operation;
    // The middleware chain guarantees these; a handler's narrowed state type relies on it.
    if (operation?.access.kind !== 'public' && !state.principal) throw internalError();
    if (operation?.logged && !state.log) throw internalError();
    return run(event, state as never);
  };
}

import { notFound } from '../gateway/errors';
import { type FunctionGroupName, type Operation, operationsOf } from '../operations';
import type { GatewayMiddleware } from './types';

interface CompiledRoute {
  operation: Operation;
  pattern: RegExp;
  params: string[];
}

export function compileRoutes(operations: readonly Operation[]): CompiledRoute[] {
  return operations.map((operation) => {
    const params: string[] = [];
    const source = operation.path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\\?\{(\w+)\\?\}/g, (_m, name) => {
        params.push(name);
        return '([^/]+)';
      });
    return { operation, pattern: new RegExp(`^${source}/?$`), params };
  });
}

export function matchRoute(
  routes: CompiledRoute[],
  method: string,
  path: string,
): { operation: Operation; params: Record<string, string> } | undefined {
  for (const route of routes) {
    if (route.operation.method !== method) continue;
    const m = route.pattern.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    route.params.forEach((name, i) => {
      params[name] = decodeURIComponent(m[i + 1] ?? '');
    });
    return { operation: route.operation, params };
  }
  return undefined;
}

/** Finds the operation of this function group that the method and path name; 404 otherwise. */
export function route(group: FunctionGroupName): GatewayMiddleware {
  const routes = compileRoutes(operationsOf(group));
  return {
    before: (request) => {
      const http = request.event.requestContext.http;
      const found = matchRoute(routes, http.method.toUpperCase(), request.event.rawPath);
      if (!found) throw notFound(`Unknown route: ${http.method} ${request.event.rawPath}`);
      request.context.gateway.operation = found.operation;
      request.context.gateway.params = found.params;
    },
  };
}

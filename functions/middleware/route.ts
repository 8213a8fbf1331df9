import { badRequest, notFound } from '../core/errors';
import { type FunctionGroupName, type Operation, operationsOf } from '../core/operations';
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

// No stored id is longer; a longer one cannot name anything, so it is a 404 before any store is asked.
export const MAX_ID_LENGTH = 256;

export interface RouteMatch {
  operation: Operation;
  params: Record<string, string>;
  /** The first path parameter whose percent-escapes do not decode (`%ZZ`, a lone `%`, bad UTF-8). */
  invalidParam?: string;
}

/** A percent-encoded path segment, or undefined when its escapes are malformed. */
export function decodePathParam(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

export function matchRoute(routes: CompiledRoute[], method: string, path: string): RouteMatch | undefined {
  for (const route of routes) {
    if (route.operation.method !== method) continue;
    const m = route.pattern.exec(path);
    if (!m) continue;
    const found: RouteMatch = { operation: route.operation, params: {} };
    route.params.forEach((name, i) => {
      const value = decodePathParam(m[i + 1] ?? '');
      if (value === undefined) found.invalidParam ??= name;
      found.params[name] = value ?? '';
    });
    return found;
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
      if (!found) throw notFound(`Unknown route: ${http.method} ${request.event.rawPath.slice(0, 300)}`);
      if (found.invalidParam !== undefined) {
        throw badRequest(
          `The path parameter ${found.invalidParam} has a malformed percent-escape.`,
          found.invalidParam,
          'invalid_path',
        );
      }
      const long = Object.entries(found.params).find(([, v]) => v.length > MAX_ID_LENGTH);
      if (long) throw notFound(`No resource with a ${long[0]} of ${long[1].length} characters exists.`);
      request.context.gateway.operation = found.operation;
      request.context.gateway.params = found.params;
    },
  };
}

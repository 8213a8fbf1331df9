import { randomUUID } from 'node:crypto';
import type { GatewayMiddleware } from './types';

const TRACE_ID = /^[\w.:/-]{1,128}$/;

/** Lower-cases headers, settles the trace id, and stamps the id headers every reply carries. */
export function requestContext(): GatewayMiddleware {
  return {
    before: (request) => {
      const state = request.context.gateway;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.event.headers ?? {})) {
        if (v !== undefined) headers[k.toLowerCase()] = v;
      }
      state.headers = headers;
      const given = headers['x-gateway-trace-id'];
      state.traceId = given && TRACE_ID.test(given) ? given : randomUUID();
      state.replyHeaders['x-gateway-request-id'] = state.requestId;
      state.replyHeaders['x-gateway-trace-id'] = state.traceId;
    },
  };
}

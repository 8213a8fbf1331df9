import middy from '@middy/core';
import { logInvocation } from '../core/logger';
import { RealtimeSocketRoutes, type SocketEvent, type SocketResult } from '../gateway/realtime/socket-routes';

const routes = new RealtimeSocketRoutes();

/** API Gateway WebSocket routes `$connect`, `$default` and `$disconnect` of `/v1/realtime`. */
export const handler = middy<SocketEvent, SocketResult>({ timeoutEarlyInMillis: 0 }).handler(
  (event, context) => {
    logInvocation(context);
    return routes.handle(event);
  },
);

import middy from '@middy/core';
import { logsOperations } from '../control/logs-api';
import type { GatewayContext, HttpEvent, HttpResult } from '../core/http';
import { dispatch } from '../gateway/dispatch';
import { authenticate } from '../middleware/authenticate';
import { authorize } from '../middleware/authorize';
import { errorResponder } from '../middleware/error-responder';
import { requestContext } from '../middleware/request-context';
import { route } from '../middleware/route';
import { streamingHandler } from '../middleware/stream-response';

export const handler = streamingHandler(
  middy<HttpEvent, HttpResult, Error, GatewayContext>({ timeoutEarlyInMillis: 0 })
    .use(requestContext())
    .use(route('logs'))
    .use(errorResponder())
    .use(authenticate())
    .use(authorize())
    .handler(dispatch('logs', logsOperations)),
);

import middy from '@middy/core';
import { controlOperations } from '../control/control-api';
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
    .use(route('control'))
    .use(errorResponder())
    .use(authenticate())
    .use(authorize())
    .handler(dispatch('control', controlOperations)),
);

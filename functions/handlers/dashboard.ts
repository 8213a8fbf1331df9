import middy from '@middy/core';
import { dashboardOperations } from '../control/dashboard';
import type { GatewayContext, HttpEvent, HttpResult } from '../core/http';
import { dispatch } from '../gateway/dispatch';
import { errorResponder } from '../middleware/error-responder';
import { requestContext } from '../middleware/request-context';
import { route } from '../middleware/route';
import { streamingHandler } from '../middleware/stream-response';

// Public static files: no authentication. Every data call the page makes goes to the API with the key.
export const handler = streamingHandler(
  middy<HttpEvent, HttpResult, Error, GatewayContext>({ timeoutEarlyInMillis: 0 })
    .use(requestContext())
    .use(route('dashboard'))
    .use(errorResponder())
    .handler(dispatch('dashboard', dashboardOperations())),
);

import middy from '@middy/core';
import type { GatewayContext, HttpEvent, HttpResult } from '../core/http';
import { dispatch } from '../gateway/dispatch';
import { MEDIA_PASSTHROUGH } from '../gateway/media-passthrough';
import { passthroughOperations } from '../gateway/passthrough';
import { authenticate } from '../middleware/authenticate';
import { authorize } from '../middleware/authorize';
import { errorResponder } from '../middleware/error-responder';
import { requestContext } from '../middleware/request-context';
import { route } from '../middleware/route';
import { streamingHandler } from '../middleware/stream-response';
import { usageLog } from '../middleware/usage-log';

export const handler = streamingHandler(
  middy<HttpEvent, HttpResult, Error, GatewayContext>({ timeoutEarlyInMillis: 0 })
    .use(requestContext())
    .use(route('media'))
    .use(errorResponder())
    .use(authenticate())
    .use(usageLog())
    .use(authorize())
    .handler(dispatch('media', passthroughOperations(MEDIA_PASSTHROUGH))),
);

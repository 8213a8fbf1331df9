import middy from '@middy/core';
import type { GatewayContext, HttpEvent, HttpResult } from '../core/http';
import { chatCompletions } from '../gateway/chat-completions';
import { dispatch } from '../gateway/dispatch';
import { countTokens, messages } from '../gateway/messages';
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
    .use(route('chat'))
    .use(errorResponder())
    .use(authenticate())
    .use(usageLog())
    .use(authorize())
    .handler(
      dispatch('chat', {
        'chat.completions': chatCompletions,
        'messages.create': messages,
        'messages.count_tokens': countTokens,
      }),
    ),
);

import { asGatewayError } from '../core/errors';
import { jsonResult } from '../core/http';
import { logger } from '../core/logger';
import { anthropicErrorBody } from '../providers/anthropic/messages-ingress';
import type { GatewayMiddleware } from './types';

/** Turns any thrown error into an OpenAI-shaped reply (Anthropic's on /v1/messages), and records it on the log entry. */
export function errorResponder(): GatewayMiddleware {
  return {
    onError: (request) => {
      const state = request.context.gateway;
      const error = asGatewayError(request.error);
      if (error.status >= 500 && error.origin === 'gateway' && error !== request.error) {
        logger.error('unexpected error', {
          requestId: state.requestId,
          operation: state.operation?.name,
          error:
            request.error instanceof Error
              ? { name: request.error.name, message: request.error.message, stack: request.error.stack }
              : String(request.error),
        });
      }
      if (state.log) {
        state.log.error = {
          message: error.message,
          type: error.type,
          code: error.code,
          origin: error.origin,
        };
      }
      // Anthropic's clients read errors only in Anthropic's shape.
      const body = state.operation?.path.startsWith('/v1/messages')
        ? anthropicErrorBody(error.status, error.message)
        : error.toBody();
      request.response = jsonResult(error.status, body, {
        'x-gateway-error-origin': error.origin,
        ...error.headers,
      });
    },
  };
}

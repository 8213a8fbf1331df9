import { Authenticator } from '../control/authenticator';
import { markStage } from '../core/stage-clock';
import type { GatewayMiddleware } from './types';

/**
 * The client's address: CloudFront's `cloudfront-viewer-address` (which a client cannot set) when the
 * distribution forwards it, else the address the function saw.
 */
export function clientAddress(headers: Record<string, string>, sourceIp: string | undefined): string {
  const viewer = headers['cloudfront-viewer-address']?.replace(/:\d+$/, '');
  return (viewer || sourceIp || 'unknown').slice(0, 64);
}

/** Resolves the caller (API key or JWT) for every operation that is not public. */
export function authenticate(authenticator = new Authenticator()): GatewayMiddleware {
  return {
    before: async (request) => {
      const state = request.context.gateway;
      if (state.operation?.access.kind === 'public') return;
      markStage('auth');
      state.principal = await authenticator.authenticate(state.headers, {
        requestId: state.requestId,
        source: clientAddress(state.headers, request.event.requestContext?.http?.sourceIp),
      });
      markStage('middleware chain');
    },
  };
}

import { Authenticator } from '../control/authenticator';
import type { GatewayMiddleware } from './types';

/** Resolves the caller (API key or JWT) for every operation that is not public. */
export function authenticate(authenticator = new Authenticator()): GatewayMiddleware {
  return {
    before: async (request) => {
      const state = request.context.gateway;
      if (state.operation?.access.kind === 'public') return;
      state.principal = await authenticator.authenticate(state.headers, { requestId: state.requestId });
    },
  };
}

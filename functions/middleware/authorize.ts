import { forbidden } from '../core/errors';
import { hasScope } from '../core/principal';
import type { GatewayMiddleware } from './types';

/** Checks the scope the operation needs (from operations.ts), or that the caller is an organisation admin. */
export function authorize(): GatewayMiddleware {
  return {
    before: (request) => {
      const { operation, principal } = request.context.gateway;
      if (!operation || operation.access.kind === 'public' || operation.access.kind === 'authenticated')
        return;
      if (!principal) throw forbidden('Not authenticated.');
      if (operation.access.kind === 'admin') {
        if (!principal.isOrganisationAdmin) {
          throw forbidden(`${operation.name} needs an organisation admin key.`, 'admin_required');
        }
        return;
      }
      if (!hasScope(principal, operation.access.scope)) {
        throw forbidden(`This key lacks the scope "${operation.access.scope}" needed for ${operation.name}.`);
      }
    },
  };
}

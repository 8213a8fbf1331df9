import type { Scope } from './operations';

/** Who is calling, once authenticated. */
export interface Principal {
  type: 'api_key' | 'jwt';
  organisationId: string;
  /** The workspace slug the caller acts in (an organisation admin acts in `default` unless told). */
  workspace: string;
  /** Organisation admin keys hold every scope in every workspace; JWTs never do. */
  isOrganisationAdmin: boolean;
  scopes: ReadonlySet<Scope>;
  keyId?: string;
  subject?: string;
}

export const DEFAULT_WORKSPACE = 'default';

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.isOrganisationAdmin || principal.scopes.has(scope);
}

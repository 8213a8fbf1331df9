import { newId } from '../gateway/ids';
import { ControlStore } from '../store/control-store';
import { generateKey, hashKey } from './api-keys';
import { DEFAULT_WORKSPACE } from './principal';

export interface BootstrapResult {
  organisationId: string;
  /** Set only when no admin key was given and none existed: the caller prints it once. */
  generatedAdminKey?: string;
}

/**
 * Creates the default organisation, its `default` workspace and an organisation admin key, once.
 * Idempotent and safe to race: every write is conditional.
 */
export async function bootstrap(
  adminKey: string | undefined,
  store = new ControlStore(),
): Promise<BootstrapResult> {
  const organisationId =
    (await store.getBootstrapOrganisationId()) ??
    (await store.claimBootstrap(`org_${newId().toLowerCase()}`));
  const now = new Date().toISOString();
  await store.putOrganisation({ id: organisationId, name: 'Default organisation', created_at: now });
  await store.createWorkspace({
    id: `ws_${newId().toLowerCase()}`,
    slug: DEFAULT_WORKSPACE,
    name: 'Default workspace',
    organisation_id: organisationId,
    created_at: now,
  });

  let generatedAdminKey: string | undefined;
  let key = adminKey;
  if (!key) {
    const existing = await store.listApiKeys(organisationId);
    if (existing.some((k) => k.type === 'organisation')) return { organisationId };
    key = generatedAdminKey = generateKey();
  }
  const hash = hashKey(key);
  if (!(await store.getApiKeyByHash(hash))) {
    await store.putApiKey({
      id: `key_${newId()}`,
      name: 'Organisation admin (bootstrap)',
      type: 'organisation',
      organisation_id: organisationId,
      workspace: null,
      scopes: [],
      key_hash: hash,
      last_four: key.slice(-4),
      created_at: now,
    });
  }
  return { organisationId, generatedAdminKey };
}

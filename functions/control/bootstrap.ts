import { newId } from '../core/ids';
import { DEFAULT_WORKSPACE } from '../core/principal';
import { ControlStore } from '../store/control-store';
import { generateKey, hashKey } from './api-keys';

export interface BootstrapResult {
  organisationId: string;
  /** Set only when no admin key was given and none existed: the caller prints it once. */
  generatedAdminKey?: string;
}

export interface BootstrapOptions {
  /**
   * Creates the admin key again although one was created (and deleted) before: the explicit, one-off
   * recovery for an operator who lost every admin key (`GATEWAY_RECOVER_ADMIN_KEY=1`).
   */
  recover?: boolean;
}

/**
 * Creates the default organisation, its `default` workspace and an organisation admin key, once.
 * Idempotent and safe to race: every write is conditional. A given admin key value creates its key only
 * once: after that key is deleted, presenting the value again is a 401 unless `recover` is set.
 */
export async function bootstrap(
  adminKey: string | undefined,
  store = new ControlStore(),
  options: BootstrapOptions = {},
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

  const created = await store.bootstrapAdminKeyHashes();
  let generatedAdminKey: string | undefined;
  let key = adminKey;
  if (!key) {
    if (!options.recover && created.size > 0) return { organisationId };
    const existing = await store.listApiKeys(organisationId);
    if (!options.recover && existing.some((k) => k.type === 'organisation')) return { organisationId };
    key = generatedAdminKey = generateKey();
  }
  const hash = hashKey(key);
  // A value that made a key once never makes it again: deleting that key is final.
  if (!options.recover && created.has(hash)) return { organisationId };
  if (!(await store.getApiKeyByHash(hash))) {
    await store.putApiKey({
      id: `key_${newId()}`,
      name: options.recover ? 'Organisation admin (recovered)' : 'Organisation admin (bootstrap)',
      type: 'organisation',
      organisation_id: organisationId,
      workspace: null,
      scopes: [],
      key_hash: hash,
      last_four: key.slice(-4),
      created_at: now,
    });
  }
  await store.rememberBootstrapAdminKey(hash);
  return { organisationId, generatedAdminKey };
}

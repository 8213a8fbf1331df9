import { hash, randomBytes } from 'node:crypto';
import { badRequest, forbidden, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { SCOPES, type Scope } from '../core/operations';
import { DEFAULT_WORKSPACE, type Principal } from '../core/principal';
import { settings } from '../core/settings';
import { containerMap } from '../core/ttl-cache';
import { spendView } from '../gateway/budget';
import {
  apiKeyHolderKey,
  limitsOf,
  loosenings,
  type Policy,
  parsePolicy,
  policies,
  presentPolicy,
  readPolicy,
} from '../gateway/policy';
import { type ApiKeyRecord, ControlStore } from '../store/control-store';
import { refuseUnknownFields } from './fields';

const KEY_PREFIX = 'gwk_';
const DEFAULT_WORKSPACE_SCOPES: Scope[] = ['completions.write', 'logs.view'];
const CACHE_MAX = 10_000;

// One call, no Hash object: a key is hashed on every request that presents it.
export const hashKey = (key: string) => hash('sha256', key, 'hex');

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The public view of a key record: never the hash, never the key. */
export function presentKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    object: 'api_key',
    name: record.name,
    type: record.type,
    workspace: record.workspace,
    scopes: record.type === 'organisation' ? [...SCOPES] : record.scopes,
    last_four: record.last_four,
    created_at: record.created_at,
  };
}

/** The public view with the key's policy and its budget spend. */
export async function presentKeyDetail(record: ApiKeyRecord) {
  const policy = readPolicy(record.policy_json);
  return {
    ...presentKey(record),
    policy: presentPolicy(policy),
    budget: await spendView(apiKeyHolderKey(record.id), limitsOf(policy)),
  };
}

interface CacheEntry {
  record: ApiKeyRecord | null;
  expires: number;
}

export class ApiKeyService {
  private readonly cache = containerMap<string, CacheEntry>();

  constructor(private readonly store = new ControlStore()) {}

  /** Looks a presented key up by its hash, through a short per-container cache (misses cached too). */
  async authenticate(presented: string, options: { fresh?: boolean } = {}): Promise<Principal | undefined> {
    const hash = hashKey(presented);
    const now = Date.now();
    let entry = this.cache.get(hash);
    if (!entry || entry.expires <= now || options.fresh) {
      const record = (await this.store.getApiKeyByHash(hash)) ?? null;
      // A deleted key keeps working for at most this long in a warm container.
      entry = { record, expires: now + settings().authCacheTtlMs };
      if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(hash, entry);
    }
    const record = entry.record;
    if (!record) return undefined;
    return {
      type: 'api_key',
      organisationId: record.organisation_id,
      workspace: record.workspace ?? DEFAULT_WORKSPACE,
      isOrganisationAdmin: record.type === 'organisation',
      scopes: new Set(record.scopes),
      keyId: record.id,
    };
  }

  /** Creates a key; returns the record and the raw key, which is shown only this once. */
  async create(caller: Principal, input: unknown): Promise<{ record: ApiKeyRecord; key: string }> {
    const body = asObject(input);
    // The request bodies' field lists are control-plane only: model functions never load them.
    const { API_KEY_CREATE } = await import('./bodies');
    refuseUnknownFields(body, API_KEY_CREATE);
    const name = body.name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
      throw badRequest('name is required: a string of 1 to 200 characters.', 'name');
    }
    // Only an absent type takes the default: `null` is a wrong type, not a request for the default.
    const type = body.type === undefined ? 'workspace' : body.type;
    if (type !== 'workspace' && type !== 'organisation') {
      throw badRequest('type must be "workspace" or "organisation".', 'type');
    }
    if (type === 'organisation' && !caller.isOrganisationAdmin) {
      throw forbidden(
        'Only an organisation admin key can create organisation keys.',
        'admin_required',
        'type',
      );
    }
    let workspace: string | null = null;
    let scopes: Scope[] = [];
    if (type === 'workspace') {
      workspace = body.workspace === undefined ? caller.workspace : (body.workspace as string);
      if (typeof workspace !== 'string') throw badRequest('workspace must be a workspace slug.', 'workspace');
      if (!caller.isOrganisationAdmin && workspace !== caller.workspace) {
        throw forbidden(`This key cannot manage workspace "${workspace}".`, 'wrong_workspace', 'workspace');
      }
      if (!(await this.store.getWorkspace(caller.organisationId, workspace))) {
        throw badRequest(`Unknown workspace "${workspace}".`, 'workspace', 'unknown_workspace');
      }
      scopes = parseScopes(body.scopes);
      const missing = scopes.filter((s) => !caller.isOrganisationAdmin && !caller.scopes.has(s));
      if (missing.length > 0) {
        throw forbidden(
          `A key cannot grant scopes it does not hold: ${missing.join(', ')}.`,
          'insufficient_scope',
          'scopes',
        );
      }
    }
    const policy =
      body.policy === undefined
        ? null
        : await this.keyPolicy(caller, workspace ?? caller.workspace, body.policy);
    const key = generateKey();
    const record: ApiKeyRecord = {
      id: `key_${newId()}`,
      name: name.trim(),
      type,
      organisation_id: caller.organisationId,
      workspace,
      scopes,
      key_hash: hashKey(key),
      last_four: key.slice(-4),
      created_at: new Date().toISOString(),
      ...(policy ? { policy_json: JSON.stringify(policy) } : {}),
    };
    await this.store.putApiKey(record);
    return { record, key };
  }

  /** Sets a key's `policy` (replaced whole; null clears it). */
  async update(caller: Principal, id: string, input: unknown): Promise<ApiKeyRecord> {
    const body = asObject(input);
    const { API_KEY_UPDATE } = await import('./bodies');
    refuseUnknownFields(body, API_KEY_UPDATE);
    const record = await this.store.getApiKey(caller.organisationId, id);
    if (!record || (!caller.isOrganisationAdmin && record.workspace !== caller.workspace)) {
      throw notFound(`No API key with id "${id}".`);
    }
    const next: ApiKeyRecord = { ...record };
    if (body.name !== undefined) {
      if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 200) {
        throw badRequest('name must be a string of 1 to 200 characters.', 'name');
      }
      next.name = body.name.trim();
    }
    if (body.policy !== undefined) {
      const policy = await this.keyPolicy(caller, record.workspace ?? caller.workspace, body.policy);
      if (policy) next.policy_json = JSON.stringify(policy);
      else delete next.policy_json;
    }
    await this.store.putApiKey(next);
    this.cache.delete(record.key_hash);
    policies.invalidateKey(caller.organisationId, id);
    return next;
  }

  /** Validates a key's policy; one that would loosen its workspace's policy is refused. */
  private async keyPolicy(caller: Principal, workspace: string, value: unknown): Promise<Policy | null> {
    const policy = await parsePolicy(value, 'api_key', caller.organisationId, workspace);
    const ws = await this.store.getWorkspace(caller.organisationId, workspace);
    const looser = loosenings(readPolicy(ws?.policy_json), policy);
    if (looser.length > 0) {
      throw badRequest(
        `A key's policy cannot loosen its workspace's: ${looser.join('; ')}.`,
        // Each finding starts with its field: the first names the param, for a form to show it there.
        `policy.${looser[0]?.split(' ')[0]}`,
        'policy_loosens_workspace',
      );
    }
    return policy;
  }

  /** Admins see every key of the organisation; others only their workspace's keys. */
  async list(caller: Principal): Promise<ApiKeyRecord[]> {
    const all = await this.store.listApiKeys(caller.organisationId);
    const visible = caller.isOrganisationAdmin ? all : all.filter((k) => k.workspace === caller.workspace);
    return visible.sort((a, b) => a.id.localeCompare(b.id));
  }

  async delete(caller: Principal, id: string): Promise<void> {
    const record = await this.store.getApiKey(caller.organisationId, id);
    if (!record || (!caller.isOrganisationAdmin && record.workspace !== caller.workspace)) {
      throw notFound(`No API key with id "${id}".`);
    }
    await this.store.deleteApiKey(record);
    this.cache.delete(record.key_hash);
  }
}

function parseScopes(value: unknown): Scope[] {
  if (value === undefined) return [...DEFAULT_WORKSPACE_SCOPES];
  if (!Array.isArray(value)) throw badRequest('scopes must be an array of scope names.', 'scopes');
  const known = new Set<string>(SCOPES);
  const bad = value.filter((s) => typeof s !== 'string' || !known.has(s));
  if (bad.length > 0) {
    throw badRequest(`Unknown scopes: ${bad.map(String).join(', ')}. Known: ${SCOPES.join(', ')}.`, 'scopes');
  }
  return [...new Set(value as Scope[])];
}

export function asObject(input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw badRequest('The request body must be a JSON object.');
  }
  return input as Record<string, unknown>;
}

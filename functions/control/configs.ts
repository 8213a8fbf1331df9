import { badRequest, forbidden, notFound } from '../core/errors';
import { newId } from '../core/ids';
import type { Principal } from '../core/principal';
import { parseSavedConfig } from '../gateway/config';
import { type SavedConfigs, savedConfigs } from '../gateway/saved-configs';
import { prepareChecks } from '../guardrails/engine';
import { ControlStore, type SavedConfigRecord } from '../store/control-store';
import { asObject } from './api-keys';
import { SAVED_CONFIG } from './bodies';
import { refuseUnknownFields } from './fields';

const ID = /^cfg_[a-z0-9]{26}$/;

export function presentConfig(record: SavedConfigRecord) {
  return {
    id: record.id,
    object: 'config',
    name: record.name,
    workspace: record.workspace,
    config: JSON.parse(record.config_json) as unknown,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** `{name?, config}`, with the config validated as a request's would be, every problem listed at once. */
function parseBody(input: unknown): { name: string | null; config: unknown; workspace?: string } {
  const body = asObject(input);
  refuseUnknownFields(body, SAVED_CONFIG);
  if (
    body.name !== undefined &&
    body.name !== null &&
    (typeof body.name !== 'string' || body.name.length > 200)
  ) {
    throw badRequest('name must be a string of at most 200 characters.', 'name');
  }
  if (body.workspace !== undefined && typeof body.workspace !== 'string') {
    throw badRequest('workspace must be a workspace slug.', 'workspace');
  }
  if (body.config === undefined) throw badRequest('config is required: a gateway config object.', 'config');
  return {
    name: (body.name as string | null | undefined) ?? null,
    config: parseSavedConfig(body.config),
    workspace: body.workspace as string | undefined,
  };
}

export class ConfigService {
  constructor(
    private readonly store = new ControlStore(),
    private readonly cache: SavedConfigs = savedConfigs,
  ) {}

  private workspaceFor(caller: Principal, requested: string | undefined): string {
    const workspace = requested ?? caller.workspace;
    if (!caller.isOrganisationAdmin && workspace !== caller.workspace) {
      throw forbidden(`This key cannot manage workspace "${workspace}".`, 'wrong_workspace', 'workspace');
    }
    return workspace;
  }

  async create(caller: Principal, input: unknown): Promise<SavedConfigRecord> {
    await prepareChecks(input);
    const body = parseBody(input);
    const workspace = this.workspaceFor(caller, body.workspace);
    if (!(await this.store.getWorkspace(caller.organisationId, workspace))) {
      throw badRequest(`Unknown workspace "${workspace}".`, 'workspace', 'unknown_workspace');
    }
    const now = new Date().toISOString();
    const record: SavedConfigRecord = {
      id: `cfg_${newId().toLowerCase()}`,
      name: body.name,
      organisation_id: caller.organisationId,
      workspace,
      config_json: JSON.stringify(body.config),
      created_by_admin: caller.isOrganisationAdmin,
      created_at: now,
      updated_at: now,
    };
    await this.store.putConfig(record);
    return record;
  }

  async list(caller: Principal, workspace: string | undefined): Promise<SavedConfigRecord[]> {
    const records = await this.store.listConfigs(caller.organisationId, this.workspaceFor(caller, workspace));
    return records.sort((a, b) => a.id.localeCompare(b.id));
  }

  async get(caller: Principal, id: string, workspace?: string): Promise<SavedConfigRecord> {
    const ws = this.workspaceFor(caller, workspace);
    const record = ID.test(id) ? await this.store.getConfig(caller.organisationId, ws, id) : undefined;
    if (!record) throw notFound(`No config with id "${id.slice(0, 64)}".`);
    return record;
  }

  async replace(
    caller: Principal,
    id: string,
    input: unknown,
    workspace?: string,
  ): Promise<SavedConfigRecord> {
    const existing = await this.get(caller, id, workspace);
    await prepareChecks(input);
    const body = parseBody(input);
    const record: SavedConfigRecord = {
      ...existing,
      name: body.name ?? existing.name,
      config_json: JSON.stringify(body.config),
      created_by_admin: caller.isOrganisationAdmin,
      updated_at: new Date().toISOString(),
    };
    await this.store.putConfig(record);
    this.cache.invalidate(record.organisation_id, record.workspace, record.id);
    return record;
  }

  async delete(caller: Principal, id: string, workspace?: string): Promise<void> {
    const record = await this.get(caller, id, workspace);
    await this.store.deleteConfig(record.organisation_id, record.workspace, record.id);
    this.cache.invalidate(record.organisation_id, record.workspace, record.id);
  }
}

import { badRequest, conflict, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { SCOPES } from '../core/operations';
import type { ModelPrice } from '../core/prices';
import type { Principal } from '../core/principal';
import { spendView } from '../gateway/budget';
import {
  limitsOf,
  parsePolicy,
  policies,
  presentPolicy,
  readPolicy,
  workspaceHolderKey,
} from '../gateway/policy';
import { ControlStore, type WorkspaceRecord } from '../store/control-store';
import { MAX_INDEXED_METADATA } from '../store/tables';
import { asObject } from './api-keys';
import { WORKSPACE_CREATE, WORKSPACE_UPDATE } from './bodies';
import { refuseUnknownFields } from './fields';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function presentWorkspace(ws: WorkspaceRecord) {
  return { id: ws.id, object: 'workspace', slug: ws.slug, name: ws.name, created_at: ws.created_at };
}

/** A workspace with its policy, operator prices and budget spend (`spent`, `remaining`, `period_start`). */
export async function presentWorkspaceDetail(ws: WorkspaceRecord) {
  const policy = readPolicy(ws.policy_json);
  return {
    ...presentWorkspace(ws),
    policy: presentPolicy(policy),
    prices: ws.prices_json ? JSON.parse(ws.prices_json) : null,
    indexed_metadata: ws.indexed_metadata ?? [],
    budget: await spendView(workspaceHolderKey(ws.organisation_id, ws.slug), limitsOf(policy)),
    updated_at: ws.updated_at ?? ws.created_at,
  };
}

/** `indexed_metadata`: up to three distinct metadata keys (null or [] for none), each an index of the logs. */
function parseIndexedMetadata(value: unknown): string[] {
  if (value === null) return [];
  const valid =
    Array.isArray(value) &&
    value.length <= MAX_INDEXED_METADATA &&
    new Set(value).size === value.length &&
    value.every((k) => typeof k === 'string' && k !== '' && k.length <= 128);
  if (!valid) {
    throw badRequest(
      `indexed_metadata must be a list of up to ${MAX_INDEXED_METADATA} distinct metadata keys (1 to 128 characters).`,
      'indexed_metadata',
    );
  }
  return value as string[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);
const price = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** `prices`: `{"<model>": {"input", "output", "cached_input"?, "max_output_tokens"?}}`, USD per million tokens. */
export function parsePrices(value: unknown, param = 'prices'): Record<string, ModelPrice> | null {
  if (value === null) return null;
  const ok =
    isObject(value) &&
    Object.keys(value).length <= 1000 &&
    Object.entries(value).every(
      ([model, p]) =>
        model.length > 0 &&
        model.length <= 200 &&
        isObject(p) &&
        price(p.input) &&
        price(p.output) &&
        (p.cached_input === undefined || price(p.cached_input)) &&
        (p.max_output_tokens === undefined ||
          (Number.isInteger(p.max_output_tokens) && (p.max_output_tokens as number) > 0)) &&
        Object.keys(p).every((k) => ['input', 'output', 'cached_input', 'max_output_tokens'].includes(k)),
    );
  if (!ok) {
    throw badRequest(
      `${param} must map model names to {"input", "output", "cached_input"?, "max_output_tokens"?} (USD per million tokens), or be null.`,
      param,
    );
  }
  return value as Record<string, ModelPrice>;
}

export class OrganisationService {
  constructor(private readonly store = new ControlStore()) {}

  async describe(caller: Principal) {
    const org = await this.store.getOrganisation(caller.organisationId);
    if (!org) throw notFound('The organisation no longer exists.');
    const all = await this.store.listWorkspaces(caller.organisationId);
    const visible = caller.isOrganisationAdmin ? all : all.filter((w) => w.slug === caller.workspace);
    return {
      id: org.id,
      object: 'organisation',
      name: org.name,
      created_at: org.created_at,
      workspaces: visible.map((w) => ({ id: w.id, slug: w.slug, name: w.name })),
      // What the caller may do, so that a client (the dashboard) offers only those actions.
      caller: {
        type: caller.type,
        workspace: caller.workspace,
        organisation_admin: caller.isOrganisationAdmin,
        scopes: caller.isOrganisationAdmin ? [...SCOPES] : [...caller.scopes],
      },
    };
  }

  async listWorkspaces(caller: Principal): Promise<WorkspaceRecord[]> {
    return this.store.listWorkspaces(caller.organisationId);
  }

  /** An admin sees every workspace; other callers only their own. */
  async getWorkspace(caller: Principal, slug: string): Promise<WorkspaceRecord> {
    const ws =
      caller.isOrganisationAdmin || caller.workspace === slug
        ? await this.store.getWorkspace(caller.organisationId, slug)
        : undefined;
    if (!ws) throw notFound(`No workspace "${slug.slice(0, 64)}".`);
    return ws;
  }

  /** Sets the workspace's `policy` and `prices` (each replaced whole; null clears). */
  async updateWorkspace(caller: Principal, slug: string, input: unknown): Promise<WorkspaceRecord> {
    const body = asObject(input);
    refuseUnknownFields(body, WORKSPACE_UPDATE);
    const ws = await this.getWorkspace(caller, slug);
    const next: WorkspaceRecord = { ...ws, updated_at: new Date().toISOString() };
    if (body.policy !== undefined) {
      const stored = readPolicy(ws.policy_json);
      const policy = await parsePolicy(body.policy, 'workspace', caller.organisationId, slug, stored);
      if (policy) next.policy_json = JSON.stringify(policy);
      else delete next.policy_json;
    }
    if (body.prices !== undefined) {
      const prices = parsePrices(body.prices);
      if (prices) next.prices_json = JSON.stringify(prices);
      else delete next.prices_json;
    }
    if (body.indexed_metadata !== undefined) {
      const keys = parseIndexedMetadata(body.indexed_metadata);
      if (keys.length) next.indexed_metadata = keys;
      else delete next.indexed_metadata;
    }
    await this.store.putWorkspace(next);
    policies.invalidateWorkspace(caller.organisationId, slug);
    return next;
  }

  async createWorkspace(caller: Principal, input: unknown): Promise<WorkspaceRecord> {
    const body = asObject(input);
    refuseUnknownFields(body, WORKSPACE_CREATE);
    if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 200) {
      throw badRequest('name is required: a string of 1 to 200 characters.', 'name');
    }
    const slug = body.slug === undefined ? slugify(body.name) : body.slug;
    if (typeof slug !== 'string' || !SLUG.test(slug)) {
      throw badRequest('slug must be 1 to 63 lower-case letters, digits or dashes.', 'slug');
    }
    const ws: WorkspaceRecord = {
      id: `ws_${newId().toLowerCase()}`,
      slug,
      name: body.name.trim(),
      organisation_id: caller.organisationId,
      created_at: new Date().toISOString(),
    };
    if (!(await this.store.createWorkspace(ws))) {
      throw conflict(`Workspace "${slug}" already exists.`, 'slug');
    }
    return ws;
  }
}

function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return slug || `ws-${newId().toLowerCase().slice(-8)}`;
}

import { badRequest, GatewayError, notFound } from '../gateway/errors';
import { newId } from '../gateway/ids';
import { ControlStore, type WorkspaceRecord } from '../store/control-store';
import { asObject } from './api-keys';
import type { Principal } from './principal';

const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function presentWorkspace(ws: WorkspaceRecord) {
  return { id: ws.id, object: 'workspace', slug: ws.slug, name: ws.name, created_at: ws.created_at };
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
    };
  }

  async listWorkspaces(caller: Principal): Promise<WorkspaceRecord[]> {
    return this.store.listWorkspaces(caller.organisationId);
  }

  async createWorkspace(caller: Principal, input: unknown): Promise<WorkspaceRecord> {
    const body = asObject(input);
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
      throw new GatewayError(
        409,
        'invalid_request_error',
        `Workspace "${slug}" already exists.`,
        'conflict',
        'slug',
      );
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

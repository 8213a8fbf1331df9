import { randomBytes } from 'node:crypto';
import { badRequest, conflict, forbidden, notFound } from '../core/errors';
import { newId } from '../core/ids';
import type { ModelPrice } from '../core/prices';
import type { Principal } from '../core/principal';
import { CONTROL_CHARACTER } from '../core/request-body';
import { alertThresholdUsd, budgetStatus, candidatePeriods, periodStart } from '../gateway/budget';
import { type VirtualKeyResolver, virtualKeys } from '../gateway/virtual-key-resolver';
import { findProvider, PROVIDER_NAMES } from '../providers';
import { ControlStore, type VirtualKeyRecord } from '../store/control-store';
import { CounterStore, type VirtualKeyState } from '../store/counter-store';
import { type SecretStore, secretStore } from '../store/secret-store';
import { asObject } from './api-keys';
import { VIRTUAL_KEY } from './bodies';
import { egressSettings } from './egress-settings';
import { Problems } from './fields';
import { parsePrices } from './organisation';

const SLUG = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const MAX_CREDENTIAL_LENGTH = 16_384;
// Provider account fields, each a short string or null.
const PROVIDER_FIELDS = ['region', 'resource_name', 'deployment_id', 'api_version'] as const;
type ProviderField = (typeof PROVIDER_FIELDS)[number];
const PROVIDER_FIELD_FORMAT: Record<ProviderField, RegExp> = {
  region: /^[a-z]{2}(-[a-z]+)+-\d$/,
  resource_name: /^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}$/,
  deployment_id: /^[\w.-]{1,64}$/,
  api_version: /^[\w.-]{1,32}$/,
};

/** A validated create or update: only the fields the caller sent. Never echoes the credential. */
interface VirtualKeyInput {
  name?: string;
  slug?: string;
  workspace?: string;
  provider?: string;
  key?: string;
  custom_host?: string | null;
  vendor_organization?: string | null;
  vendor_project?: string | null;
  region?: string | null;
  resource_name?: string | null;
  deployment_id?: string | null;
  api_version?: string | null;
  budget_limit?: number | null;
  budget_period?: 'none' | 'monthly';
  budget_alert_threshold?: number | null;
  requests_per_minute?: number | null;
  prices?: Record<string, ModelPrice> | null;
}

// Organization, project and key go upstream as header values: a control character is refused when stored.
const optionalText = (v: unknown) =>
  v === null || (typeof v === 'string' && v !== '' && v.length <= 256 && !CONTROL_CHARACTER.test(v));

/** Checks every field at once, so a 400 lists all that is wrong. */
function parseInput(input: unknown, creating: boolean): VirtualKeyInput {
  const body = asObject(input);
  const problems = new Problems(VIRTUAL_KEY);
  const out: VirtualKeyInput = {};
  problems.unknown(body);

  if (body.name !== undefined || creating) {
    if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 200) {
      problems.add('name', 'name must be a string of 1 to 200 characters');
    } else out.name = body.name.trim();
  }
  if (body.slug !== undefined) {
    if (typeof body.slug !== 'string' || !SLUG.test(body.slug)) {
      problems.add('slug', 'slug must be 1 to 63 lower-case letters, digits, dashes or underscores');
    } else out.slug = body.slug;
  }
  if (body.workspace !== undefined) {
    if (typeof body.workspace !== 'string') problems.add('workspace', 'workspace must be a workspace slug');
    else out.workspace = body.workspace;
  }
  if (body.provider !== undefined || creating) {
    if (typeof body.provider !== 'string' || !findProvider(body.provider)) {
      problems.add('provider', `provider must be one of ${PROVIDER_NAMES.join(', ')}`);
    } else out.provider = body.provider;
  }
  if (body.key !== undefined || creating) {
    // The message never quotes the value: it is a credential.
    if (
      typeof body.key !== 'string' ||
      body.key.trim() === '' ||
      body.key.length > MAX_CREDENTIAL_LENGTH ||
      CONTROL_CHARACTER.test(body.key.trim())
    ) {
      problems.add(
        'key',
        `key must be the provider credential, a string of 1 to ${MAX_CREDENTIAL_LENGTH} characters without control characters`,
      );
    } else out.key = body.key.trim();
  }
  if (body.custom_host !== undefined) {
    const h = body.custom_host;
    if (h !== null && (typeof h !== 'string' || !validHost(h))) {
      problems.add('custom_host', 'custom_host must be an http or https URL without credentials, or null');
    } else out.custom_host = h as string | null;
  }
  for (const k of ['vendor_organization', 'vendor_project'] as const) {
    if (body[k] === undefined) continue;
    if (!optionalText(body[k]))
      problems.add(k, `${k} must be a string of 1 to 256 characters without control characters, or null`);
    else out[k] = body[k] as string | null;
  }
  for (const k of PROVIDER_FIELDS) {
    const v = body[k];
    if (v === undefined) continue;
    if (v !== null && (typeof v !== 'string' || !PROVIDER_FIELD_FORMAT[k].test(v))) {
      problems.add(
        k,
        `${k} must be ${k === 'region' ? 'an AWS region such as us-east-1' : 'a short name'}, or null`,
      );
    } else out[k] = v as string | null;
  }
  if (body.budget_limit !== undefined) {
    const b = body.budget_limit;
    if (b !== null && !(typeof b === 'number' && Number.isFinite(b) && b > 0 && b <= 1e9)) {
      problems.add('budget_limit', 'budget_limit must be a number of USD above 0, or null');
    } else out.budget_limit = b as number | null;
  }
  if (body.budget_period !== undefined) {
    if (body.budget_period !== 'none' && body.budget_period !== 'monthly') {
      problems.add('budget_period', 'budget_period must be "none" or "monthly"');
    } else out.budget_period = body.budget_period;
  }
  if (body.budget_alert_threshold !== undefined) {
    const t = body.budget_alert_threshold;
    if (t !== null && !(typeof t === 'number' && t > 0 && t <= 1)) {
      problems.add(
        'budget_alert_threshold',
        'budget_alert_threshold must be a fraction of budget_limit above 0 and at most 1, or null',
      );
    } else out.budget_alert_threshold = t as number | null;
  }
  if (body.rate_limit !== undefined) {
    const r = body.rate_limit;
    if (r === null) out.requests_per_minute = null;
    else if (
      !r ||
      typeof r !== 'object' ||
      Array.isArray(r) ||
      Object.keys(r).some((k) => k !== 'requests_per_minute') ||
      !Number.isInteger((r as { requests_per_minute?: unknown }).requests_per_minute) ||
      ((r as { requests_per_minute: number }).requests_per_minute as number) < 1
    ) {
      problems.add(
        'rate_limit',
        'rate_limit must be {"requests_per_minute": a whole number of 1 or more}, or null',
      );
    } else out.requests_per_minute = (r as { requests_per_minute: number }).requests_per_minute;
  }
  if (body.prices !== undefined) {
    try {
      out.prices = parsePrices(body.prices);
    } catch (error) {
      problems.add('prices', (error as Error).message.replace(/\.$/, ''));
    }
  }

  problems.throwIfAny('invalid_virtual_key');
  return out;
}

function validHost(host: string): boolean {
  try {
    const url = new URL(host);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56);
  return slug || 'vk';
}

const secretName = (organisationId: string, workspace: string, slug: string) =>
  `${organisationId}/${workspace}/${slug}`;

export interface VirtualKeyView {
  record: VirtualKeyRecord;
  state: VirtualKeyState;
  spent: number;
  remaining: number | null;
  period: string;
  alerts: Awaited<ReturnType<CounterStore['listAlerts']>>;
}

/** The public view of a virtual key: never the credential, nor any part of it. */
export function presentVirtualKey(view: VirtualKeyView) {
  const { record, state } = view;
  return {
    object: 'virtual_key',
    id: record.id,
    slug: record.slug,
    name: record.name,
    workspace: record.workspace,
    provider: record.provider,
    custom_host: record.custom_host,
    vendor_organization: record.vendor_organization,
    vendor_project: record.vendor_project,
    region: record.region ?? null,
    resource_name: record.resource_name ?? null,
    deployment_id: record.deployment_id ?? null,
    api_version: record.api_version ?? null,
    budget_limit: state.budget_limit,
    budget_period: state.budget_period,
    budget_alert_threshold: state.budget_alert_threshold,
    budget_alert_threshold_usd: alertThresholdUsd(state),
    rate_limit:
      state.requests_per_minute === null ? null : { requests_per_minute: state.requests_per_minute },
    prices: record.prices_json ? JSON.parse(record.prices_json) : null,
    spent: view.spent,
    remaining: view.remaining,
    period: view.period,
    period_start: periodStart(view.period),
    alerts: view.alerts,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** A key's host is the operator's choice when an admin sets it; anyone else obeys the egress settings. */
async function checkKeyHost(caller: Principal, host: string | null | undefined): Promise<void> {
  if (!host || caller.isOrganisationAdmin) return;
  await egressSettings.checkRequestHost(caller.organisationId, host, 'custom_host');
}

export class VirtualKeyService {
  constructor(
    private readonly store = new ControlStore(),
    private readonly counters = new CounterStore(),
    private readonly secrets: SecretStore = secretStore(),
    private readonly resolver: VirtualKeyResolver = virtualKeys,
  ) {}

  private async workspaceFor(caller: Principal, requested: string | undefined): Promise<string> {
    const workspace = requested ?? caller.workspace;
    if (!caller.isOrganisationAdmin && workspace !== caller.workspace) {
      throw forbidden(`This key cannot manage workspace "${workspace}".`, 'wrong_workspace', 'workspace');
    }
    if (!(await this.store.getWorkspace(caller.organisationId, workspace))) {
      throw badRequest(`Unknown workspace "${workspace}".`, 'workspace', 'unknown_workspace');
    }
    return workspace;
  }

  async create(caller: Principal, body: unknown): Promise<VirtualKeyView> {
    const input = parseInput(body, true);
    const workspace = await this.workspaceFor(caller, input.workspace);
    await checkKeyHost(caller, input.custom_host);
    const state = stateFrom(input, undefined);
    const now = new Date().toISOString();
    let record: VirtualKeyRecord | undefined;
    // A generated slug that is taken gets a short random suffix; a chosen one is a conflict.
    for (let i = 0; i < 5 && !record; i++) {
      const slug =
        input.slug ??
        (i === 0
          ? slugify(input.name as string)
          : `${slugify(input.name as string)}-${randomBytes(3).toString('hex')}`);
      const candidate: VirtualKeyRecord = {
        id: `vk_${newId().toLowerCase()}`,
        slug,
        name: input.name as string,
        organisation_id: caller.organisationId,
        workspace,
        provider: input.provider as string,
        custom_host: input.custom_host ?? null,
        vendor_organization: input.vendor_organization ?? null,
        vendor_project: input.vendor_project ?? null,
        region: input.region ?? null,
        resource_name: input.resource_name ?? null,
        deployment_id: input.deployment_id ?? null,
        api_version: input.api_version ?? null,
        secret_name: secretName(caller.organisationId, workspace, slug),
        ...(input.prices ? { prices_json: JSON.stringify(input.prices) } : {}),
        created_at: now,
        updated_at: now,
      };
      if (await this.store.createVirtualKey(candidate)) record = candidate;
      else if (input.slug) break;
    }
    if (!record) {
      throw conflict(
        `A virtual key with slug "${input.slug ?? slugify(input.name as string)}" already exists in this workspace.`,
        'slug',
      );
    }
    // The record claims the slug first, so a conflicting create never overwrites another key's secret.
    try {
      await this.secrets.put(record.secret_name, input.key as string);
      await this.counters.putState(record.id, state);
    } catch (error) {
      await this.store.deleteVirtualKey(record);
      await this.secrets.delete(record.secret_name).catch(() => undefined);
      throw error;
    }
    this.resolver.invalidate(record.organisation_id, record.workspace, record.slug);
    return this.view(record, state);
  }

  async list(caller: Principal, workspace: string | undefined): Promise<VirtualKeyView[]> {
    const ws = await this.workspaceFor(caller, workspace);
    const records = await this.store.listVirtualKeys(caller.organisationId, ws);
    const views = await Promise.all(records.map((r) => this.view(r)));
    return views
      .filter((v): v is VirtualKeyView => v !== undefined)
      .sort((a, b) => a.record.slug.localeCompare(b.record.slug));
  }

  async get(caller: Principal, slug: string, workspace?: string): Promise<VirtualKeyView> {
    const record = await this.find(caller, slug, workspace);
    const view = await this.view(record);
    if (!view) throw notFound(`No virtual key with slug "${slug}".`);
    return view;
  }

  async update(caller: Principal, slug: string, body: unknown, workspace?: string): Promise<VirtualKeyView> {
    const input = parseInput(body, false);
    if (input.slug !== undefined && input.slug !== slug) throw badRequest('slug cannot be changed.', 'slug');
    if (input.workspace !== undefined && input.workspace !== (workspace ?? caller.workspace)) {
      throw badRequest('workspace cannot be changed.', 'workspace');
    }
    const record = await this.find(caller, slug, workspace);
    await checkKeyHost(caller, input.custom_host);
    const current = (await this.counters.readBudget(record.id, [])).state;
    if (!current) throw notFound(`No virtual key with slug "${slug}".`);
    const state = stateFrom(input, current);
    const updated: VirtualKeyRecord = {
      ...record,
      name: input.name ?? record.name,
      provider: input.provider ?? record.provider,
      custom_host: input.custom_host === undefined ? record.custom_host : input.custom_host,
      vendor_organization:
        input.vendor_organization === undefined ? record.vendor_organization : input.vendor_organization,
      vendor_project: input.vendor_project === undefined ? record.vendor_project : input.vendor_project,
      region: input.region === undefined ? (record.region ?? null) : input.region,
      resource_name: input.resource_name === undefined ? (record.resource_name ?? null) : input.resource_name,
      deployment_id: input.deployment_id === undefined ? (record.deployment_id ?? null) : input.deployment_id,
      api_version: input.api_version === undefined ? (record.api_version ?? null) : input.api_version,
      updated_at: new Date().toISOString(),
    };
    if (input.prices === null) delete updated.prices_json;
    else if (input.prices) updated.prices_json = JSON.stringify(input.prices);
    // A rotation is a new version of the same secret: new requests use it without a redeploy.
    if (input.key !== undefined) await this.secrets.put(record.secret_name, input.key);
    await this.store.putVirtualKey(updated);
    await this.counters.putState(record.id, state);
    this.resolver.invalidate(record.organisation_id, record.workspace, record.slug);
    return this.view(updated, state);
  }

  /** The state goes first: from then on no container lets a request through with this key. */
  async delete(caller: Principal, slug: string, workspace?: string): Promise<void> {
    const record = await this.find(caller, slug, workspace);
    await this.counters.deleteState(record.id);
    this.resolver.invalidate(record.organisation_id, record.workspace, record.slug);
    await this.store.deleteVirtualKey(record);
    await this.secrets.delete(record.secret_name);
  }

  private async find(
    caller: Principal,
    slug: string,
    workspace: string | undefined,
  ): Promise<VirtualKeyRecord> {
    const ws = workspace ?? caller.workspace;
    if (!caller.isOrganisationAdmin && ws !== caller.workspace)
      throw notFound(`No virtual key with slug "${slug}".`);
    const record = SLUG.test(slug)
      ? await this.store.getVirtualKey(caller.organisationId, ws, slug)
      : undefined;
    if (!record) throw notFound(`No virtual key with slug "${slug.slice(0, 64)}".`);
    return record;
  }

  private async view(record: VirtualKeyRecord): Promise<VirtualKeyView | undefined>;
  private async view(record: VirtualKeyRecord, known: VirtualKeyState): Promise<VirtualKeyView>;
  private async view(record: VirtualKeyRecord, known?: VirtualKeyState): Promise<VirtualKeyView | undefined> {
    const [budget, alerts] = await Promise.all([
      this.counters.readBudget(record.id, candidatePeriods()),
      this.counters.listAlerts(record.id),
    ]);
    const state = known ?? budget.state;
    // A key without state is half created or half deleted: it is not shown.
    if (!state) return undefined;
    const status = budgetStatus(state, budget.spent);
    return { record, state, spent: status.spent, remaining: status.remaining, period: status.period, alerts };
  }
}

function stateFrom(input: VirtualKeyInput, current: VirtualKeyState | undefined): VirtualKeyState {
  const pick = <K extends keyof VirtualKeyState>(
    key: K,
    fallback: VirtualKeyState[K],
  ): VirtualKeyState[K] => {
    const value = (input as Record<string, unknown>)[key];
    return value === undefined ? (current?.[key] ?? fallback) : (value as VirtualKeyState[K]);
  };
  const state: VirtualKeyState = {
    budget_limit: pick('budget_limit', null),
    budget_period: pick('budget_period', 'none'),
    budget_alert_threshold: pick('budget_alert_threshold', null),
    requests_per_minute: pick('requests_per_minute', null),
  };
  if (state.budget_alert_threshold !== null && state.budget_limit === null) {
    throw badRequest(
      'budget_alert_threshold needs a budget_limit.',
      'budget_alert_threshold',
      'invalid_virtual_key',
    );
  }
  return state;
}

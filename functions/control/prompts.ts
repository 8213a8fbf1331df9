import { badRequest, conflict, forbidden, notFound } from '../core/errors';
import { newId } from '../core/ids';
import type { Principal } from '../core/principal';
import { FIELD_LIMITS } from '../core/request-body';
import { ControlStore } from '../store/control-store';
import { type PromptRecord, PromptStore } from '../store/prompt-store';
import { asObject } from './api-keys';
import { refuseUnknownFields } from './fields';
import { HYPERPARAMETERS as HYPERPARAMETER_FIELDS, PROMPT, PROMPT_RUN } from './prompt-bodies';
import { messagesVariables, renderMessages } from './prompt-template';

// The prompt library: versioned chat templates with a target, a model and hyperparameters. Creating a
// prompt makes version 1; every update adds a version; reads and runs use the latest unless one is named.

const ID = /^pmt_[a-z0-9]{26}$/;
const SLUG = /^@?[a-z0-9][a-z0-9_-]{0,62}$/;
/** Hyperparameters a template may fix, as the chat completions API names them. */
export const HYPERPARAMETERS = Object.keys(HYPERPARAMETER_FIELDS.fields);

function checkNumber(value: unknown, param: string, min: number, max: number, integer = false): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw badRequest(`${param} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}.`, param);
  }
}

/** Checks hyperparameters (stored or overriding); `at` prefixes the names in errors. */
export function checkHyperparameters(value: Record<string, unknown>, at: string): void {
  refuseUnknownFields(value, HYPERPARAMETER_FIELDS, at);
  checkNumber(value.max_tokens, `${at}max_tokens`, 1, 10_000_000, true);
  checkNumber(value.max_completion_tokens, `${at}max_completion_tokens`, 1, 10_000_000, true);
  checkNumber(value.temperature, `${at}temperature`, 0, 2);
  checkNumber(value.top_p, `${at}top_p`, 0, 1);
  checkNumber(value.presence_penalty, `${at}presence_penalty`, -2, 2);
  checkNumber(value.frequency_penalty, `${at}frequency_penalty`, -2, 2);
  checkNumber(value.n, `${at}n`, 1, 128, true);
}

interface PromptInput {
  name?: string;
  model?: string;
  messages?: unknown[];
  provider?: string | null;
  virtual_key?: string | null;
  hyperparameters?: Record<string, unknown>;
  workspace?: string;
}

function parseInput(input: unknown, creating: boolean): PromptInput {
  const body = asObject(input);
  refuseUnknownFields(body, PROMPT);
  const out: PromptInput = {};
  if (body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name.length === 0 || body.name.length > 200) {
      throw badRequest('name must be a string of 1 to 200 characters.', 'name');
    }
    out.name = body.name;
  }
  if (body.model !== undefined || creating) {
    if (typeof body.model !== 'string' || body.model.trim() === '') {
      throw badRequest('model is required: a non-empty string.', 'model', 'missing_required_parameter');
    }
    if (body.model.length > FIELD_LIMITS.model) {
      throw badRequest(`model is longer than ${FIELD_LIMITS.model} characters.`, 'model', 'field_too_long');
    }
    out.model = body.model;
  }
  if (body.messages !== undefined || creating) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      throw badRequest(
        'messages is required: a non-empty array of messages.',
        'messages',
        'missing_required_parameter',
      );
    }
    body.messages.forEach((m, i) => {
      const msg = m as Record<string, unknown> | null;
      if (!msg || typeof msg !== 'object' || Array.isArray(msg) || typeof msg.role !== 'string') {
        throw badRequest(`messages[${i}] must be an object with a string role.`, `messages[${i}]`);
      }
      if (typeof msg.content !== 'string' && !Array.isArray(msg.content)) {
        throw badRequest(
          `messages[${i}].content must be a string or an array of parts.`,
          `messages[${i}].content`,
        );
      }
    });
    // Parsing now reports a broken template when it is saved, not when it is first run.
    messagesVariables(body.messages);
    out.messages = body.messages;
  }
  for (const key of ['provider', 'virtual_key'] as const) {
    const v = body[key];
    if (v === undefined) continue;
    if (v !== null && (typeof v !== 'string' || !SLUG.test(v))) {
      throw badRequest(`${key} must be a provider name or virtual key slug.`, key);
    }
    out[key] = v === null ? null : (v as string).replace(/^@/, '');
  }
  if (out.provider && out.virtual_key) {
    throw badRequest('Give a provider or a virtual_key, not both.', 'virtual_key');
  }
  if (body.hyperparameters !== undefined) {
    const h = body.hyperparameters;
    if (!h || typeof h !== 'object' || Array.isArray(h)) {
      throw badRequest('hyperparameters must be an object.', 'hyperparameters');
    }
    checkHyperparameters(h as Record<string, unknown>, 'hyperparameters.');
    out.hyperparameters = h as Record<string, unknown>;
  }
  if (body.workspace !== undefined) {
    if (typeof body.workspace !== 'string')
      throw badRequest('workspace must be a workspace slug.', 'workspace');
    out.workspace = body.workspace;
  }
  return out;
}

export function presentPrompt(record: PromptRecord) {
  const messages = JSON.parse(record.messages_json) as unknown[];
  return {
    id: record.id,
    object: 'prompt',
    version: record.version,
    name: record.name,
    workspace: record.workspace,
    model: record.model,
    messages,
    variables: messagesVariables(messages).all,
    provider: record.provider,
    virtual_key: record.virtual_key,
    hyperparameters: JSON.parse(record.hyperparameters_json) as Record<string, unknown>,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** A version named by `?version=` or a body's `version`: a positive integer. */
export function parseVersion(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 1) throw badRequest('version must be a positive integer.', 'version');
  return n;
}

export interface RenderedPrompt {
  prompt: PromptRecord;
  /** A chat completions request body. */
  request: Record<string, unknown>;
}

export class PromptService {
  constructor(
    private readonly prompts = new PromptStore(),
    private readonly control = new ControlStore(),
  ) {}

  private workspaceFor(caller: Principal, requested: string | undefined): string {
    const workspace = requested ?? caller.workspace;
    if (!caller.isOrganisationAdmin && workspace !== caller.workspace) {
      throw forbidden(`This key cannot manage workspace "${workspace}".`, 'wrong_workspace', 'workspace');
    }
    return workspace;
  }

  async create(caller: Principal, input: unknown): Promise<PromptRecord> {
    const body = parseInput(input, true);
    const workspace = this.workspaceFor(caller, body.workspace);
    if (!(await this.control.getWorkspace(caller.organisationId, workspace))) {
      throw badRequest(`Unknown workspace "${workspace}".`, 'workspace', 'unknown_workspace');
    }
    const now = new Date().toISOString();
    const id = `pmt_${newId().toLowerCase()}`;
    const record: PromptRecord = {
      id,
      version: 1,
      name: body.name ?? id,
      organisation_id: caller.organisationId,
      workspace,
      model: body.model as string,
      messages_json: JSON.stringify(body.messages),
      provider: body.provider ?? null,
      virtual_key: body.virtual_key ?? null,
      hyperparameters_json: JSON.stringify(body.hyperparameters ?? {}),
      created_at: now,
      updated_at: now,
    };
    await this.prompts.putVersion(record);
    return record;
  }

  async list(caller: Principal, workspace?: string): Promise<PromptRecord[]> {
    const records = await this.prompts.list(caller.organisationId, this.workspaceFor(caller, workspace));
    return records.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The latest version, or the one named. */
  async get(caller: Principal, id: string, version?: number, workspace?: string): Promise<PromptRecord> {
    const ws = this.workspaceFor(caller, workspace);
    const record = !ID.test(id)
      ? undefined
      : version === undefined
        ? await this.prompts.getLatest(caller.organisationId, ws, id)
        : await this.prompts.getVersion(caller.organisationId, ws, id, version);
    if (!record) {
      throw notFound(
        `No prompt with id "${id.slice(0, 64)}"${version === undefined ? '' : ` and version ${version}`}.`,
      );
    }
    return record;
  }

  /** A new version: fields given replace the latest version's, fields left out are kept. */
  async update(caller: Principal, id: string, input: unknown, workspace?: string): Promise<PromptRecord> {
    const latest = await this.get(caller, id, undefined, workspace);
    const body = parseInput(input, false);
    const version = (await this.prompts.latestVersion(latest.organisation_id, latest.workspace, id)) + 1;
    const provider = body.provider !== undefined ? body.provider : body.virtual_key ? null : latest.provider;
    const virtualKey =
      body.virtual_key !== undefined ? body.virtual_key : body.provider ? null : latest.virtual_key;
    const record: PromptRecord = {
      ...latest,
      version,
      name: body.name ?? latest.name,
      model: body.model ?? latest.model,
      messages_json: body.messages ? JSON.stringify(body.messages) : latest.messages_json,
      provider,
      virtual_key: virtualKey,
      hyperparameters_json: body.hyperparameters
        ? JSON.stringify(body.hyperparameters)
        : latest.hyperparameters_json,
      updated_at: new Date().toISOString(),
    };
    if (!(await this.prompts.putVersion(record))) {
      throw conflict('The prompt was updated at the same time; retry.');
    }
    return record;
  }

  async delete(caller: Principal, id: string, workspace?: string): Promise<void> {
    const record = await this.get(caller, id, undefined, workspace);
    await this.prompts.delete(record.organisation_id, record.workspace, record.id);
  }

  /**
   * The chat completions request a prompt makes: its messages rendered with `variables`, its model and
   * hyperparameters, then the caller's overrides. `variables` is required, even when empty.
   */
  async render(
    caller: Principal,
    id: string,
    input: unknown,
    queryVersion?: string,
  ): Promise<RenderedPrompt> {
    const body = asObject(input);
    refuseUnknownFields(body, PROMPT_RUN);
    const version = parseVersion(body.version ?? queryVersion);
    const prompt = await this.get(caller, id, version);
    if (!body.variables || typeof body.variables !== 'object' || Array.isArray(body.variables)) {
      throw badRequest(
        'variables is required: an object of template values.',
        'variables',
        'missing_required_parameter',
      );
    }
    const overrides: Record<string, unknown> = {};
    for (const key of HYPERPARAMETERS) if (body[key] !== undefined) overrides[key] = body[key];
    checkHyperparameters(overrides, '');
    const messages = renderMessages(
      JSON.parse(prompt.messages_json) as unknown[],
      body.variables as Record<string, unknown>,
    );
    const request: Record<string, unknown> = {
      model: prompt.model,
      messages,
      ...(JSON.parse(prompt.hyperparameters_json) as Record<string, unknown>),
      ...overrides,
    };
    for (const key of ['stream', 'stream_options', 'user', 'metadata'] as const) {
      if (body[key] !== undefined) request[key] = body[key];
    }
    return { prompt, request };
  }
}

import { badRequest } from '../core/errors';
import { settings } from '../core/settings';
import { GuardrailStore } from '../store/guardrail-store';
import { type CompiledCheck, compileChecks, prepareChecks } from './engine';

/** A config's guardrails, compiled: what runs before the provider call and on what comes back. */
export interface RequestGuardrails {
  input: CompiledCheck[];
  output: CompiledCheck[];
}

export const NO_GUARDRAILS: RequestGuardrails = { input: [], output: [] };

export const GUARDRAIL_ID = /^gr_[0-9a-z]{26}$/;
const CACHE_MAX = 1_000;

interface Cached<T> {
  value: T;
  expires: number;
}

function remember<T>(cache: Map<string, Cached<T>>, key: string, value: T, ttl: number): T {
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, { value, expires: Date.now() + ttl });
  return value;
}

/**
 * Resolves `input_guardrails` / `output_guardrails` (inline checks, or ids of saved guardrails in the
 * caller's workspace) and compiles them. Compiled lists are cached by their JSON, so an inline config
 * sent with every request compiles its patterns once per container.
 */
export class GuardrailResolver {
  private readonly saved = new Map<string, Cached<unknown[] | undefined>>();
  private readonly compiled = new Map<string, Cached<CompiledCheck[]>>();

  constructor(private readonly store = new GuardrailStore()) {}

  invalidate(organisationId: string, workspace: string, id: string): void {
    this.saved.delete(`${organisationId}/${workspace}/${id}`);
  }

  async resolve(
    config: { input_guardrails?: unknown[]; output_guardrails?: unknown[] } | undefined,
    organisationId: string,
    workspace: string,
  ): Promise<RequestGuardrails> {
    if (!config?.input_guardrails && !config?.output_guardrails) return NO_GUARDRAILS;
    return {
      input: await this.list(config.input_guardrails, 'input_guardrails', organisationId, workspace),
      output: await this.list(config.output_guardrails, 'output_guardrails', organisationId, workspace),
    };
  }

  /** The lists with saved guardrail ids replaced by their checks, as JSON (a realtime relay compiles them). */
  async expand(
    config: { input_guardrails?: unknown[]; output_guardrails?: unknown[] } | undefined,
    organisationId: string,
    workspace: string,
  ): Promise<{ input: unknown[]; output: unknown[] }> {
    // Resolving compiles too, so a list that cannot run is refused here, before the session starts.
    await this.resolve(config, organisationId, workspace);
    return {
      input: await this.expandList(config?.input_guardrails, 'input_guardrails', organisationId, workspace),
      output: await this.expandList(
        config?.output_guardrails,
        'output_guardrails',
        organisationId,
        workspace,
      ),
    };
  }

  private async expandList(
    refs: unknown[] | undefined,
    at: string,
    organisationId: string,
    workspace: string,
  ): Promise<unknown[]> {
    const expanded: unknown[] = [];
    for (const ref of refs ?? []) {
      if (typeof ref !== 'string') {
        expanded.push(ref);
        continue;
      }
      const checks = await this.savedChecks(organisationId, workspace, ref);
      if (!checks) throw badRequest(`Unknown guardrail "${ref}".`, at, 'unknown_guardrail');
      expanded.push(...checks);
    }
    return expanded;
  }

  private async list(
    refs: unknown[] | undefined,
    at: string,
    organisationId: string,
    workspace: string,
  ): Promise<CompiledCheck[]> {
    if (!refs || refs.length === 0) return [];
    const expanded = await this.expandList(refs, at, organisationId, workspace);
    const cacheKey = JSON.stringify(expanded);
    const hit = this.compiled.get(cacheKey);
    if (hit && hit.expires > Date.now()) return hit.value;
    await prepareChecks(expanded);
    const problems: string[] = [];
    const compiled = compileChecks(expanded, at, problems);
    if (problems.length > 0)
      throw badRequest(`Invalid guardrails: ${problems.join('; ')}.`, at, 'invalid_config');
    // Compiled checks hold no per-request state, so a long cache life is safe.
    return remember(this.compiled, cacheKey, compiled, 10 * 60_000);
  }

  private async savedChecks(
    organisationId: string,
    workspace: string,
    id: string,
  ): Promise<unknown[] | undefined> {
    const key = `${organisationId}/${workspace}/${id}`;
    const hit = this.saved.get(key);
    if (hit && hit.expires > Date.now()) return hit.value;
    const record = GUARDRAIL_ID.test(id) ? await this.store.get(organisationId, workspace, id) : undefined;
    const checks = record ? (JSON.parse(record.checks_json) as unknown[]) : undefined;
    return remember(this.saved, key, checks, settings().configCacheTtlMs);
  }
}

/** One per container, shared with the control plane so that its changes are seen at once. */
export const guardrailResolver = new GuardrailResolver();

import { notFound } from '../core/errors';
import { newId } from '../core/ids';
import type { Principal } from '../core/principal';
import { compileChecks, prepareChecks } from '../guardrails/engine';
import { guardrailResolver } from '../guardrails/resolve';
import { type GuardrailRecord, GuardrailStore } from '../store/guardrail-store';
import { asObject } from './api-keys';
import { GUARDRAIL } from './bodies';
import { Problems } from './fields';

export function presentGuardrail(record: GuardrailRecord) {
  return {
    id: record.id,
    object: 'guardrail',
    name: record.name,
    workspace: record.workspace,
    checks: JSON.parse(record.checks_json) as unknown[],
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** Saved guardrails: named lists of checks, referenced by id from a config's guardrail lists. */
export class GuardrailService {
  constructor(private readonly store = new GuardrailStore()) {}

  private validate(
    input: unknown,
    creating: boolean,
    current?: GuardrailRecord,
  ): { name: string; checks: unknown[] } {
    const body = asObject(input);
    const problems = new Problems(GUARDRAIL);
    problems.unknown(body);
    let name = current?.name ?? '';
    if (body.name !== undefined || creating) {
      if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 200) {
        problems.add('name', 'name must be a string of 1 to 200 characters');
      } else name = body.name.trim();
    }
    let checks = current ? (JSON.parse(current.checks_json) as unknown[]) : [];
    if (body.checks !== undefined || creating) {
      if (!Array.isArray(body.checks) || body.checks.length === 0)
        problems.add('checks', 'checks must be a non-empty array of checks');
      else {
        const found: string[] = [];
        compileChecks(body.checks, 'checks', found);
        for (const message of found) problems.add('checks', message);
        checks = body.checks;
      }
    }
    problems.throwIfAny('invalid_guardrail');
    return { name, checks };
  }

  async create(caller: Principal, input: unknown): Promise<GuardrailRecord> {
    await prepareChecks(input);
    const { name, checks } = this.validate(input, true);
    const now = new Date().toISOString();
    const record: GuardrailRecord = {
      id: `gr_${newId().toLowerCase()}`,
      name,
      organisation_id: caller.organisationId,
      workspace: caller.workspace,
      checks_json: JSON.stringify(checks),
      created_at: now,
      updated_at: now,
    };
    await this.store.put(record);
    return record;
  }

  async list(caller: Principal): Promise<GuardrailRecord[]> {
    return (await this.store.list(caller.organisationId, caller.workspace)).sort((a, b) =>
      a.id.localeCompare(b.id),
    );
  }

  async get(caller: Principal, id: string): Promise<GuardrailRecord> {
    const record = await this.store.get(caller.organisationId, caller.workspace, id);
    if (!record) throw notFound(`No guardrail with id "${id}".`);
    return record;
  }

  async replace(caller: Principal, id: string, input: unknown): Promise<GuardrailRecord> {
    const current = await this.get(caller, id);
    await prepareChecks(input);
    const { name, checks } = this.validate(input, false, current);
    const record = {
      ...current,
      name,
      checks_json: JSON.stringify(checks),
      updated_at: new Date().toISOString(),
    };
    await this.store.put(record);
    guardrailResolver.invalidate(caller.organisationId, caller.workspace, id);
    return record;
  }

  async delete(caller: Principal, id: string): Promise<void> {
    if (!(await this.store.delete(caller.organisationId, caller.workspace, id))) {
      throw notFound(`No guardrail with id "${id}".`);
    }
    guardrailResolver.invalidate(caller.organisationId, caller.workspace, id);
  }
}

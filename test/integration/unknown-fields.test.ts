import { beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY_CREATE,
  API_KEY_UPDATE,
  EGRESS_SETTINGS,
  GUARDRAIL,
  HYPERPARAMETERS,
  JWT_SETTINGS,
  PROMPT,
  PROMPT_RUN,
  SAVED_CONFIG,
  SSO_SETTINGS,
  VIRTUAL_KEY,
  WORKSPACE_CREATE,
  WORKSPACE_UPDATE,
} from '../../functions/control/bodies';
import { acceptedFields, type BodySpec } from '../../functions/control/fields';
import { useGateway } from '../support/fixture';

// Errors that teach: a field a control-plane body does not take is refused with its name as `param` and
// the list of every accepted field with its shape, read from the same description the OpenAPI document
// is generated from.

const { gw } = useGateway();
let ids: { config: string; guardrail: string; prompt: string; key: string };

beforeAll(async () => {
  const config = await gw.api('POST', '/configs', { config: { provider: 'openai' } });
  const guardrail = await gw.api('POST', '/guardrails', {
    name: 'no secrets',
    checks: [{ type: 'contains', words: ['secret'] }],
  });
  const prompt = await gw.api('POST', '/prompts', {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hi {{name}}' }],
  });
  const key = await gw.api('POST', '/api-keys', { name: 'reader' });
  for (const r of [config, guardrail, prompt, key]) expect(r.status, JSON.stringify(r.body)).toBe(201);
  ids = { config: config.body.id, guardrail: guardrail.body.id, prompt: prompt.body.id, key: key.body.id };
});

interface Case {
  body: string;
  method: string;
  path: () => string;
  spec: BodySpec;
  /** Where the unknown field goes, when the body nests it. */
  wrap?: (field: Record<string, unknown>) => Record<string, unknown>;
  param?: string;
}

const cases: Case[] = [
  { body: 'workspace', method: 'POST', path: () => '/workspaces', spec: WORKSPACE_CREATE },
  { body: 'workspace update', method: 'PATCH', path: () => '/workspaces/default', spec: WORKSPACE_UPDATE },
  { body: 'API key', method: 'POST', path: () => '/api-keys', spec: API_KEY_CREATE },
  { body: 'API key update', method: 'PATCH', path: () => `/api-keys/${ids.key}`, spec: API_KEY_UPDATE },
  { body: 'virtual key', method: 'POST', path: () => '/virtual-keys', spec: VIRTUAL_KEY },
  { body: 'virtual key update', method: 'PATCH', path: () => '/virtual-keys/some-key', spec: VIRTUAL_KEY },
  { body: 'saved config', method: 'POST', path: () => '/configs', spec: SAVED_CONFIG },
  { body: 'saved config replace', method: 'PUT', path: () => `/configs/${ids.config}`, spec: SAVED_CONFIG },
  { body: 'guardrail', method: 'POST', path: () => '/guardrails', spec: GUARDRAIL },
  {
    body: 'guardrail replace',
    method: 'PUT',
    path: () => `/guardrails/${ids.guardrail}`,
    spec: GUARDRAIL,
  },
  { body: 'prompt', method: 'POST', path: () => '/prompts', spec: PROMPT },
  { body: 'prompt update', method: 'PUT', path: () => `/prompts/${ids.prompt}`, spec: PROMPT },
  {
    body: 'prompt hyperparameters',
    method: 'POST',
    path: () => '/prompts',
    spec: HYPERPARAMETERS,
    wrap: (field) => ({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      hyperparameters: field,
    }),
    param: 'hyperparameters.colour',
  },
  { body: 'prompt render', method: 'POST', path: () => `/prompts/${ids.prompt}/render`, spec: PROMPT_RUN },
  {
    body: 'prompt completions',
    method: 'POST',
    path: () => `/prompts/${ids.prompt}/completions`,
    spec: PROMPT_RUN,
  },
  { body: 'JWT settings', method: 'PUT', path: () => '/organisation/jwt', spec: JWT_SETTINGS },
  { body: 'single sign-on settings', method: 'PUT', path: () => '/organisation/sso', spec: SSO_SETTINGS },
  { body: 'egress settings', method: 'PUT', path: () => '/organisation/egress', spec: EGRESS_SETTINGS },
];

describe('an unknown field in a control-plane body', () => {
  it.each(cases)('$body ($method): names it and lists every accepted field with its shape', async (c) => {
    const field = { colour: 'blue' };
    const res = await gw.api(c.method, c.path(), c.wrap ? c.wrap(field) : field);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.param).toBe(c.param ?? 'colour');
    expect(res.body.error.message).toContain(c.param ?? 'colour');
    expect(res.body.error.message).toContain(acceptedFields(c.spec));
  });

  it('says which fields are required and what shape each takes', async () => {
    const res = await gw.api('POST', '/virtual-keys', {
      name: 'k',
      provider: 'openai',
      key: 'sk-x',
      budget: 5,
    });
    expect(res.body.error.param).toBe('budget');
    expect(res.body.error.message).toContain('name (string, required)');
    expect(res.body.error.message).toContain('budget_limit (number|null)');
    expect(res.body.error.message).toContain('budget_period ("none"|"monthly")');
  });

  it('in a policy or a saved gateway config: lists the fields those take', async () => {
    const policy = await gw.api('PATCH', '/workspaces/default', { policy: { budget: 5 } });
    expect(policy.status).toBe(400);
    expect(policy.body.error.param).toBe('policy.budget');
    expect(policy.body.error.message).toMatch(
      /policy\.budget is not a known field; a policy takes: .*budget_limit/,
    );
    const config = await gw.api('POST', '/configs', { config: { provider: 'openai', fallback: true } });
    expect(config.status).toBe(400);
    expect(config.body.error.param).toBe('config');
    expect(config.body.error.message).toMatch(
      /config\.fallback is not a known field; config takes: .*strategy/,
    );
  });
});

describe('other control-plane errors name the field to change', () => {
  it('a bad value among several problems: param is the first bad field', async () => {
    const res = await gw.api('POST', '/virtual-keys', {
      name: 'k',
      provider: 'openai',
      key: 'sk-x',
      budget_limit: -1,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('budget_limit');
    expect(res.body.error.code).toBe('invalid_virtual_key');
  });

  it('egress settings without allow_custom_hosts: param allow_custom_hosts', async () => {
    const res = await gw.api('PUT', '/organisation/egress', { allowed_hosts: ['example.com'] });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('allow_custom_hosts');
  });

  it('JWT settings with both or neither key set: param jwks_url', async () => {
    const res = await gw.api('PUT', '/organisation/jwt', {});
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('jwks_url');
  });

  it('a workspace key naming another workspace: 403 with param workspace', async () => {
    const key = await gw.api('POST', '/api-keys', {
      name: 'writer',
      scopes: ['virtual_keys.write', 'api_keys.write'],
    });
    const res = await gw.api(
      'POST',
      '/virtual-keys',
      { name: 'k', provider: 'openai', key: 'sk-x', workspace: 'elsewhere' },
      key.body.key,
    );
    expect(res.status).toBe(403);
    expect(res.body.error.param).toBe('workspace');
    const grant = await gw.api('POST', '/api-keys', { name: 'wider', scopes: ['logs.view'] }, key.body.key);
    expect(grant.status).toBe(403);
    expect(grant.body.error.param).toBe('scopes');
  });
});

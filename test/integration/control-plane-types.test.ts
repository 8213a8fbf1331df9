import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture';

// Strict types on every control-plane body: any JSON value in any field is answered, never a 5xx, and a
// null (or a wrong type) where a string enum or a required field is expected is a 400 that names it.

const { gw } = useGateway();

/** A valid body for each create or update, so that one field at a time can be spoiled. */
const BODIES: Array<{ method: string; path: string; body: Record<string, unknown> }> = [
  {
    method: 'POST',
    path: '/api-keys',
    body: { name: 'k', type: 'workspace', workspace: 'default', scopes: ['logs.view'] },
  },
  {
    method: 'POST',
    path: '/virtual-keys',
    body: {
      name: 'v',
      provider: 'openai',
      key: 'sk-x',
      budget_limit: 1,
      budget_period: 'monthly',
      rate_limit: { requests_per_minute: 10 },
    },
  },
  {
    method: 'POST',
    path: '/configs',
    body: { name: 'c', config: { provider: 'openai', retry: { attempts: 1 } } },
  },
  {
    method: 'POST',
    path: '/guardrails',
    body: { name: 'g', checks: [{ type: 'contains', words: ['x'], action: 'deny' }] },
  },
  {
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi {{name}}' }] },
  },
  {
    method: 'PUT',
    path: '/organisation/egress',
    body: { allow_custom_hosts: true, allowed_hosts: ['*.example.com'] },
  },
  {
    method: 'PATCH',
    path: '/workspaces/default',
    body: { policy: { allowed_models: ['gpt-4o'], budget_limit: 10, budget_period: 'daily' } },
  },
  { method: 'POST', path: '/workspaces', body: { name: 'w', slug: 'w-types' } },
];

describe('control-plane bodies', () => {
  it('every field given null or another type is a 4xx or accepted, never a 5xx', async () => {
    const value = fc.oneof(
      fc.constantFrom(null, true, 0, -1, 1e308, '', 'x'.repeat(2000), [], {}, [null], { a: null }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    // Runs: 120 (15 per body).
    for (const [i, { method, path, body }] of BODIES.entries()) {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...Object.keys(body)), value, async (field, v) => {
          const res = await gw.api(method, path, { ...body, [field]: v });
          expect(res.status, `${method} ${path} ${field}=${JSON.stringify(v)?.slice(0, 80)}`).toBeLessThan(
            500,
          );
        }),
        { seed: 1400 + i, numRuns: 15 },
      );
    }
  });

  it.each([
    ['POST', '/api-keys', { name: 'k', type: null }, 'type'],
    ['POST', '/virtual-keys', { name: 'v', provider: null, key: 'sk-x' }, 'provider'],
    [
      'POST',
      '/virtual-keys',
      { name: 'v', provider: 'openai', key: 'sk-x', budget_period: null },
      'budget_period',
    ],
    ['POST', '/guardrails', { name: 'g', checks: [{ type: null, words: ['x'] }] }, 'type'],
    [
      'POST',
      '/guardrails',
      { name: 'g', checks: [{ type: 'contains', words: ['x'], action: null }] },
      'action',
    ],
    ['POST', '/prompts', { name: 'p', model: null, messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ['POST', '/prompts', { name: 'p', model: 'gpt-4o', messages: [{ role: null, content: 'x' }] }, 'role'],
    ['POST', '/configs', { config: { strategy: { mode: null }, targets: [{ provider: 'openai' }] } }, 'mode'],
    ['PATCH', '/workspaces/default', { policy: { budget_period: null } }, 'budget_period'],
  ])('%s %s with a null enum or required field is a 400 naming it', async (method, path, body, field) => {
    const res = await gw.api(method, path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain(field);
  });
});

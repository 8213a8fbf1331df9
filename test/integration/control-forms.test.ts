import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture';

// What a form needs from the control plane: the caller's rights, and refusals that name the field.

const { gw } = useGateway();

describe('the control plane for forms', () => {
  it("reports the caller's rights with the organisation", async () => {
    const admin = await gw.api('GET', '/organisation');
    expect(admin.body.caller).toMatchObject({
      type: 'api_key',
      workspace: 'default',
      organisation_admin: true,
    });
    expect(admin.body.caller.scopes).toContain('api_keys.write');

    const key = await gw.api('POST', '/api-keys', { name: 'reader', scopes: ['logs.view'] });
    const limited = await gw.api('GET', '/organisation', undefined, key.body.key);
    expect(limited.body.caller).toEqual({
      type: 'api_key',
      workspace: 'default',
      organisation_admin: false,
      scopes: ['logs.view'],
    });
  });

  it('names the first wrong policy field in param', async () => {
    const res = await gw.api('PATCH', '/workspaces/default', {
      policy: { user_limits: { budget_limit: -1 }, budget_period: 'weekly' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_policy', param: 'policy.budget_period' });
    expect(res.body.error.message).toContain('policy.user_limits.budget_limit');

    const nested = await gw.api('POST', '/api-keys', {
      name: 'k',
      policy: { rate_limit: { requests_per_minute: 0 } },
    });
    expect(nested.body.error).toMatchObject({ code: 'invalid_policy', param: 'policy.rate_limit' });
  });

  it('names the field a key policy would loosen', async () => {
    await gw.api('PATCH', '/workspaces/default', { policy: { allowed_providers: ['openai'] } });
    const res = await gw.api('POST', '/api-keys', {
      name: 'k',
      policy: { allowed_providers: ['anthropic'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'policy_loosens_workspace',
      param: 'policy.allowed_providers',
    });
    await gw.api('PATCH', '/workspaces/default', { policy: null });
  });

  it('keeps the stored webhook secret when a policy names the stored URL without one', async () => {
    const hook = { url: 'https://hooks.example.com/a', secret: 'first-secret-0123456789' };
    expect(
      (await gw.api('PATCH', '/workspaces/default', { policy: { budget_alert_webhook: hook } })).status,
    ).toBe(200);
    const kept = await gw.api('PATCH', '/workspaces/default', {
      policy: { budget_limit: 5, budget_alert_webhook: { url: hook.url } },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.policy.budget_alert_webhook).toEqual({ url: hook.url, secret_set: true });

    // Another URL needs its own secret: the stored one is never sent to a new address.
    const moved = await gw.api('PATCH', '/workspaces/default', {
      policy: { budget_alert_webhook: { url: 'https://elsewhere.example.com/b' } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe('policy.budget_alert_webhook');
    await gw.api('PATCH', '/workspaces/default', { policy: null });
  });

  it('names the first wrong egress field in param', async () => {
    const res = await gw.api('PUT', '/organisation/egress', {
      allow_custom_hosts: true,
      allowed_hosts: ['api.example.com', 'not a host'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_egress_settings', param: 'allowed_hosts[1]' });
  });
});

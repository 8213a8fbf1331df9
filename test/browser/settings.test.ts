import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/gateway';

// Policies, single sign-on and egress set through the dashboard, each result read back through the
// public API; and a key that may do little sees only what it may do.

let gw: TestGateway;
let browser: TestBrowser;
let page: Page;
let base: string;

const form = (name: string) => page.getByRole('form', { name });
const row = (id: string) => page.locator(`tr[data-row="${id}"]`);
const fieldError = (name: string) => page.locator(`[data-field-error="${name}"]`);
const nav = () => page.getByRole('navigation', { name: 'Pages', exact: true });

async function open(view: string) {
  await nav().getByRole('link', { name: view, exact: true }).click();
}

async function signIn(key: string) {
  await page.goto(`${base}/dashboard`);
  await page.locator('input[name="key"]').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await nav().waitFor();
}

async function confirmWith(label: string) {
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: label }).click();
  await expect.poll(() => page.locator('dialog.confirm[open]').count()).toBe(0);
}

beforeAll(async () => {
  [gw, browser] = await Promise.all([startTestGateway(), launchBrowser()]);
  page = browser.page;
  base = gw.url.replace(/\/v1$/, '');
  await signIn(ADMIN_KEY);
});

afterAll(async () => {
  await browser?.close();
  await gw?.stop();
});

describe('settings and policies in the dashboard', () => {
  let guardrailId = '';
  let configId = '';

  it('sets a workspace policy field by field, shows a refusal at its field, and removes it', async () => {
    const guardrail = await gw.api('POST', '/guardrails', {
      name: 'no secrets',
      checks: [{ type: 'contains', words: ['password'], action: 'deny' }],
    });
    guardrailId = guardrail.body.id;
    const config = await gw.api('POST', '/configs', {
      name: 'pinned',
      config: { provider: 'openai', override_params: { temperature: 0 } },
    });
    configId = config.body.id;

    await open('Workspaces');
    await row('default').getByRole('button', { name: 'Policy' }).click();
    const panel = page.locator('[data-workspace-policy="default"]');
    await panel.waitFor();
    // The opened panel has the keyboard focus.
    expect(
      await page.evaluate(() => document.activeElement?.closest('[data-workspace-policy]') !== null),
    ).toBe(true);
    const f = form('Policy of default');
    await f.locator(`input[name="input_guardrails"][value="${guardrailId}"]`).check();
    await f.locator('input[name="allowed_models"]').fill('gpt-4o-mini, claude-sonnet-4*');
    await f.locator('input[name="allowed_providers"]').fill('openai, anthropic');
    await f.locator('select[name="allow_custom_host"]').selectOption('false');
    await f.locator('select[name="config"]').selectOption(configId);
    await f.locator('input[name="policy.budget_limit"]').fill('-5');
    await f.locator('select[name="policy.budget_period"]').selectOption('monthly');
    await f.locator('input[name="policy.rpm"]').fill('100');
    await f.locator('input[name="policy.tpm"]').fill('50000');
    await f.locator('input[name="policy.user_limits.budget_limit"]').fill('5');
    await f.locator('select[name="policy.user_limits.budget_period"]').selectOption('daily');
    await f.locator('input[name="policy.user_limits.rpm"]').fill('20');
    await f.locator('input[name="webhook_url"]').fill('https://hooks.example.com/gateway');
    await f.locator('input[name="webhook_secret"]').fill('a-secret-of-enough-length');

    // A negative budget: the API's refusal names policy.budget_limit, shown under that field.
    await f.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => fieldError('policy.budget_limit').textContent()).toContain('budget_limit');
    expect(await f.locator('input[name="policy.budget_limit"]').getAttribute('aria-invalid')).toBe('true');
    await browser.shot('settings-workspace-policy-error');
    expect((await gw.api('GET', '/workspaces/default')).body.policy).toBeNull();

    await f.locator('input[name="policy.budget_limit"]').fill('50');
    await f.locator('input[name="policy.alert_percent"]').fill('80');
    await f.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () => (await gw.api('GET', '/workspaces/default')).body.policy)
      .toEqual({
        input_guardrails: [guardrailId],
        allowed_models: ['gpt-4o-mini', 'claude-sonnet-4*'],
        allowed_providers: ['openai', 'anthropic'],
        allow_custom_host: false,
        config: configId,
        budget_limit: 50,
        budget_period: 'monthly',
        budget_alert_threshold: 0.8,
        rate_limit: { requests_per_minute: 100, tokens_per_minute: 50000 },
        user_limits: { budget_limit: 5, budget_period: 'daily', rate_limit: { requests_per_minute: 20 } },
        budget_alert_webhook: { url: 'https://hooks.example.com/gateway', secret_set: true },
      });
    // The budget is shown against its spend.
    await expect.poll(() => panel.locator('[data-budget="default"]').textContent()).toContain('of $50');
    await browser.shot('settings-workspace-policy');

    // An edit that leaves the secret empty keeps the stored webhook (its secret is never shown).
    await f.locator('input[name="policy.rpm"]').fill('120');
    await f.getByRole('button', { name: 'Save policy' }).click();
    await expect
      .poll(async () => (await gw.api('GET', '/workspaces/default')).body.policy.rate_limit)
      .toEqual({ requests_per_minute: 120, tokens_per_minute: 50000 });
    expect((await gw.api('GET', '/workspaces/default')).body.policy.budget_alert_webhook).toEqual({
      url: 'https://hooks.example.com/gateway',
      secret_set: true,
    });

    // At 420 px the whole policy form fits the screen.
    await page.setViewportSize({ width: 420, height: 900 });
    await browser.shot('settings-420-workspace-policy');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await page.setViewportSize({ width: 1400, height: 900 });

    // Removing asks first, by keyboard alone: Enter opens the dialog with the focus on Cancel, Escape
    // closes it and keeps the policy; Tab reaches the confirm button and Enter removes it.
    const remove = f.getByRole('button', { name: 'Remove policy' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const dialog = page.locator('dialog.confirm[open]');
    await dialog.waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect((await gw.api('GET', '/workspaces/default')).body.policy).not.toBeNull();
    await remove.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Remove policy');
    await page.keyboard.press('Enter');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(async () => (await gw.api('GET', '/workspaces/default')).body.policy).toBeNull();
    // Escape closes the panel.
    await f.locator('input[name="allowed_models"]').press('Escape');
    await panel.waitFor({ state: 'detached' });
  });

  it('creates an API key with a policy, shows its budget, edits the policy and shows a loosening at its field', async () => {
    await open('API keys');
    const f = form('New API key');
    await f.locator('input[name="name"]').fill('budgeted app');
    await f.getByText('Policy (optional)').click();
    await f.locator('input[name="allowed_models"]').fill('gpt-4o*');
    await f.locator('input[name="policy.budget_limit"]').fill('10');
    await f.locator('select[name="policy.budget_period"]').selectOption('daily');
    await f.locator('input[name="policy.rpm"]').fill('30');
    await f.getByRole('button', { name: 'Create key' }).click();
    await page.locator('[data-secret-value]').waitFor();
    const keys = (await gw.api('GET', '/api-keys')).body.data;
    const created = keys.find((k: { name: string }) => k.name === 'budgeted app');
    expect(created.policy).toEqual({
      allowed_models: ['gpt-4o*'],
      budget_limit: 10,
      budget_period: 'daily',
      rate_limit: { requests_per_minute: 30 },
    });
    expect(created.budget).toMatchObject({ limit: 10, spent: 0, remaining: 10 });
    await expect
      .poll(() => row(created.id).locator(`[data-budget="${created.id}"]`).textContent())
      .toContain('$10.00 left');
    await browser.shot('settings-api-key-policy');

    // The workspace allows only openai: a key policy that names anthropic would loosen it.
    await gw.api('PATCH', '/workspaces/default', { policy: { allowed_providers: ['openai'] } });
    await row(created.id).getByRole('button', { name: 'Edit' }).click();
    const edit = form('Edit budgeted app');
    await edit.waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('name');
    await edit.locator('input[name="name"]').fill('budgeted app v2');
    await edit.locator('input[name="allowed_providers"]').fill('anthropic');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(() => fieldError('policy.allowed_providers').textContent())
      .toContain('outside the workspace');
    await browser.shot('settings-api-key-policy-error');

    await edit.locator('input[name="allowed_providers"]').fill('openai');
    await edit.locator('input[name="policy.budget_limit"]').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'detached' });
    const after = (await gw.api('GET', '/api-keys')).body.data.find(
      (k: { id: string }) => k.id === created.id,
    );
    expect(after.name).toBe('budgeted app v2');
    expect(after.policy).toEqual({
      allowed_models: ['gpt-4o*'],
      allowed_providers: ['openai'],
      budget_period: 'daily',
      rate_limit: { requests_per_minute: 30 },
    });
    expect(after.budget).toBeNull();

    // The edit form and the policy fields fit a 420 px screen.
    await row(created.id).getByRole('button', { name: 'Edit' }).click();
    await page.setViewportSize({ width: 420, height: 900 });
    await browser.shot('settings-420-api-key-edit');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await page.setViewportSize({ width: 1400, height: 900 });
    await form('Edit budgeted app v2').getByRole('button', { name: 'Cancel' }).click();

    // Escape leaves an edit without saving.
    await row(created.id).getByRole('button', { name: 'Edit' }).click();
    await form('Edit budgeted app v2').locator('input[name="name"]').press('Escape');
    await form('Edit budgeted app v2').waitFor({ state: 'detached' });
    await gw.api('PATCH', '/workspaces/default', { policy: null });
  });

  it('sets single sign-on with its refusal at the field, edits the claim mappings and turns it off', async () => {
    await open('SSO');
    await page.locator('[data-sso-state="none"]').waitFor();
    expect(await page.locator('[data-redirect-uri]').textContent()).toBe(`${base}/dashboard`);
    const f = form('Single sign-on settings');
    await f.locator('input[name="issuer"]').fill('https://idp.example.com/issuer?tenant=1');
    await f.locator('input[name="client_id"]').fill('spa-client');
    await f.getByRole('button', { name: 'Save single sign-on' }).click();
    await expect.poll(() => fieldError('issuer').textContent()).toContain('query');
    await browser.shot('settings-sso-error');

    await f.locator('input[name="issuer"]').fill('https://idp.example.com/issuer');
    await f.locator('input[name="scopes_claim"]').fill('roles');
    await f.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.locator('[data-sso-state="on"]').waitFor();
    expect((await gw.api('GET', '/organisation/sso')).body).toMatchObject({
      issuer: 'https://idp.example.com/issuer',
      client_id: 'spa-client',
      scopes: 'openid email profile',
      workspace: 'default',
      workspace_claim: null,
      scopes_claim: 'roles',
      gateway_scopes: null,
    });
    await browser.shot('settings-sso');

    // The claim mappings change: workspace from a claim, one fixed set of scopes.
    await f.getByLabel('From a claim', { exact: true }).check();
    await f.locator('input[name="workspace_claim"]').fill('custom:workspace');
    await f.getByLabel('The same scopes for everyone').check();
    await f.locator('input[name="gateway_scopes"][value="logs.view"]').uncheck();
    await f.locator('input[name="gateway_scopes"][value="prompts.read"]').check();
    await f.locator('input[name="scopes"]').fill('openid email');
    await f.getByRole('button', { name: 'Save single sign-on' }).click();
    await expect
      .poll(async () => (await gw.api('GET', '/organisation/sso')).body)
      .toMatchObject({
        scopes: 'openid email',
        workspace_claim: 'custom:workspace',
        workspace: null,
        scopes_claim: null,
        gateway_scopes: ['completions.write', 'prompts.read'],
      });

    await page.getByRole('button', { name: 'Turn off single sign-on' }).click();
    await confirmWith('Turn off');
    await page.locator('[data-sso-state="none"]').waitFor();
    expect((await gw.api('GET', '/organisation/sso')).status).toBe(404);
  });

  it('sets the egress settings with a refused host pattern shown at its field', async () => {
    await open('Egress');
    const f = form('Egress settings');
    await f.waitFor();
    await f.locator('textarea[name="allowed_hosts"]').fill('api.example.com\nnot a host!');
    await f.getByRole('button', { name: 'Save egress settings' }).click();
    await expect.poll(() => fieldError('allowed_hosts').textContent()).toContain('allowed_hosts[1]');
    await browser.shot('settings-egress-error');

    await f.locator('textarea[name="allowed_hosts"]').fill('api.example.com\n*.internal.example.com:8443');
    await f.locator('input[name="allow_custom_hosts"]').check();
    await f.getByRole('button', { name: 'Save egress settings' }).click();
    await page.locator('[data-egress-state="allowed"]').waitFor();
    expect((await gw.api('GET', '/organisation/egress')).body).toMatchObject({
      allow_custom_hosts: true,
      allowed_hosts: ['api.example.com', '*.internal.example.com:8443'],
    });
    await f.locator('input[name="allow_custom_hosts"]').uncheck();
    await f.getByRole('button', { name: 'Save egress settings' }).click();
    await page.locator('[data-egress-state="refused"]').waitFor();
    expect((await gw.api('GET', '/organisation/egress')).body.allow_custom_hosts).toBe(false);
    await browser.shot('settings-egress');
  });

  it('offers a key only the pages and actions its scopes allow', async () => {
    await gw.api('PATCH', '/workspaces/default', { policy: { budget_limit: 25 } });
    const limited = await gw.api('POST', '/api-keys', {
      name: 'reader',
      scopes: ['virtual_keys.read', 'configs.read'],
    });
    await gw.api('POST', '/virtual-keys', { name: 'Shown', slug: 'shown', provider: 'openai', key: 'sk-x' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(limited.body.key);

    const links = await nav().getByRole('link').allTextContents();
    expect(links).toEqual(['Virtual keys', 'Configs', 'Guardrails', 'Workspaces']);

    await open('Virtual keys');
    await row('shown').waitFor();
    expect(await form('New virtual key').count()).toBe(0);
    expect(await row('shown').getByRole('button').count()).toBe(0);

    await open('Configs');
    await row(configId).waitFor();
    expect(await form('New config').count()).toBe(0);
    // No completions.write: no "Try it"; no configs.write: no edit or delete.
    expect(await row(configId).getByRole('button').count()).toBe(0);

    await open('Guardrails');
    await row(guardrailId).waitFor();
    expect(await form('New guardrail').count()).toBe(0);
    expect(await row(guardrailId).getByRole('button').count()).toBe(0);

    // Its own workspace's policy and budget, read only.
    await open('Workspaces');
    const policy = form('Policy of default');
    await policy.waitFor();
    await expect.poll(() => page.locator('[data-budget="default"]').textContent()).toContain('of $25');
    expect(await policy.locator('input[name="policy.budget_limit"]').inputValue()).toBe('25');
    expect(await policy.locator('input[name="policy.budget_limit"]').isDisabled()).toBe(true);
    expect(await policy.getByRole('button', { name: 'Save policy' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'New workspace' }).count()).toBe(0);
    await browser.shot('settings-limited-key');

    // A page reached by its URL says what the key lacks, and offers nothing.
    await page.goto(`${base}/dashboard#/sso`);
    await page.locator('[data-page-refused="sso"]').waitFor();
    expect(await page.locator('[data-page-refused="sso"]').textContent()).toContain('organisation admin');
    await page.goto(`${base}/dashboard#/api-keys`);
    await expect
      .poll(() => page.locator('[data-page-refused="api-keys"]').textContent())
      .toContain('api_keys.read');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(ADMIN_KEY);
    await gw.api('PATCH', '/workspaces/default', { policy: null });
  });
});

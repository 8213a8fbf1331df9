import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/gateway';

// Every control entity managed through the dashboard, each result checked through the public API.

let gw: TestGateway;
let fake: FakeOpenAI;
let browser: TestBrowser;
let page: Page;
let base: string;

const form = (name: string) => page.getByRole('form', { name });
const row = (id: string) => page.locator(`tr[data-row="${id}"]`);

async function open(view: string) {
  await page
    .getByRole('navigation', { name: 'Pages', exact: true })
    .getByRole('link', { name: view, exact: true })
    .click();
}

/** Answers the confirmation dialog a destructive action opens. */
async function confirmWith(label: string) {
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: label }).click();
  await dialog.waitFor({ state: 'detached' }).catch(() => undefined);
  await expect.poll(() => page.locator('dialog.confirm[open]').count()).toBe(0);
}

async function signIn(key: string) {
  await page.goto(`${base}/dashboard`);
  await page.locator('input[name="key"]').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages', exact: true }).waitFor();
}

beforeAll(async () => {
  [gw, fake, browser] = await Promise.all([startTestGateway(), startFakeOpenAI(), launchBrowser()]);
  page = browser.page;
  base = gw.url.replace(/\/v1$/, '');
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await signIn(ADMIN_KEY);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([gw?.stop(), fake?.close()]);
});

describe('managing the gateway from the dashboard', () => {
  it('creates a workspace', async () => {
    await open('Workspaces');
    await form('New workspace').locator('input[name="name"]').fill('Platform team');
    await form('New workspace').getByRole('button', { name: 'Create workspace' }).click();
    await row('platform-team').waitFor();
    const list = await gw.api('GET', '/workspaces');
    expect(list.body.data.map((w: { slug: string }) => w.slug)).toContain('platform-team');

    // A taken slug: the API's 409 shown at the slug field.
    await form('New workspace').locator('input[name="name"]').fill('Again');
    await form('New workspace').locator('input[name="slug"]').fill('platform-team');
    await form('New workspace').getByRole('button', { name: 'Create workspace' }).click();
    await expect
      .poll(() => page.locator('[data-field-error="slug"]').textContent())
      .toContain('already exists');
    await browser.shot('manage-workspaces');
  });

  let secret = '';
  it('creates an API key with scopes, shows its secret once, and revokes it after a confirmation', async () => {
    await open('API keys');
    const f = form('New API key');
    await f.locator('input[name="name"]').fill('ci pipeline');
    await f.locator('input[value="logs.view"]').uncheck();
    await f.locator('input[value="configs.read"]').check();
    await f.getByRole('button', { name: 'Create key' }).click();
    const shown = page.locator('[data-secret-value]');
    await shown.waitFor();
    secret = (await shown.textContent()) ?? '';
    expect(secret).toMatch(/^gwk_/);
    await page.locator('[data-secret]').getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await browser.shot('manage-api-keys');

    const keys = await gw.api('GET', '/api-keys');
    const created = keys.body.data.find((k: { name: string }) => k.name === 'ci pipeline');
    expect(created.scopes.sort()).toEqual(['completions.write', 'configs.read']);
    expect((await gw.api('GET', '/configs', undefined, secret)).status).toBe(200);
    expect((await gw.api('GET', '/logs', undefined, secret)).status).toBe(403);

    // Done hides the secret for good.
    await page.locator('[data-secret]').getByRole('button', { name: 'Done' }).click();
    expect(await page.locator('[data-secret]').count()).toBe(0);

    // Cancel keeps the key; confirming revokes it.
    await row(created.id).getByRole('button', { name: 'Revoke' }).click();
    await page.locator('dialog.confirm[open]').getByRole('button', { name: 'Cancel' }).click();
    expect(
      (await gw.api('GET', '/api-keys')).body.data.some((k: { id: string }) => k.id === created.id),
    ).toBe(true);
    await row(created.id).getByRole('button', { name: 'Revoke' }).click();
    await browser.shot('manage-confirm-dialog');
    await confirmWith('Revoke key');
    await row(created.id).waitFor({ state: 'detached' });
    expect(
      (await gw.api('GET', '/api-keys')).body.data.some((k: { id: string }) => k.id === created.id),
    ).toBe(false);
  });

  it('creates, edits (budget, rotation) and deletes a virtual key', async () => {
    await open('Virtual keys');
    await page.locator('div.empty').waitFor();
    expect(await page.locator('div.empty').textContent()).toContain('Add your first provider credential');
    const f = form('New virtual key');
    await f.locator('input[name="name"]').fill('Team A');
    await f.locator('input[name="slug"]').fill('team-a');
    await f.locator('input[name="provider"]').fill('openai');
    await f.locator('input[name="key"]').fill('sk-team-a-1');
    await f.locator('input[name="custom_host"]').fill(fake.url);
    await f.locator('input[name="budget_limit"]').fill('10');
    await f.locator('select[name="budget_period"]').selectOption('monthly');
    await f.locator('input[name="alert_percent"]').fill('80');
    await f.locator('input[name="rpm"]').fill('60');
    await f.getByRole('button', { name: 'Create virtual key' }).click();
    await row('team-a').waitFor();
    const vk = (await gw.api('GET', '/virtual-keys/team-a')).body;
    expect(vk).toMatchObject({
      name: 'Team A',
      provider: 'openai',
      custom_host: fake.url,
      budget_limit: 10,
      budget_period: 'monthly',
      budget_alert_threshold: 0.8,
      rate_limit: { requests_per_minute: 60 },
    });

    // Spend shows against the budget once a request has gone through the key.
    const client = gw.client({ headers: { 'x-gateway-provider': '@team-a' } });
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-team-a-1');

    await row('team-a').getByRole('button', { name: 'Edit' }).click();
    const edit = form('Edit team-a');
    await edit.locator('input[name="budget_limit"]').fill('20');
    await edit.locator('input[name="rpm"]').fill('');
    await edit.locator('input[name="key"]').fill('sk-team-a-2');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await form('New virtual key').waitFor();
    const edited = (await gw.api('GET', '/virtual-keys/team-a')).body;
    expect(edited.budget_limit).toBe(20);
    expect(edited.rate_limit).toBeNull();
    await expect.poll(() => page.locator('[data-budget="team-a"]').textContent()).toContain('of $20');
    await expect
      .poll(async () => {
        await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hi' }],
        });
        return fake.requests.at(-1)?.headers.authorization;
      })
      .toBe('Bearer sk-team-a-2');

    // A refusal of the API is shown as it says it: an unknown provider.
    await form('New virtual key').locator('input[name="name"]').fill('Broken');
    await form('New virtual key').locator('input[name="provider"]').fill('no-such-provider');
    await form('New virtual key').locator('input[name="key"]').fill('x');
    await form('New virtual key').getByRole('button', { name: 'Create virtual key' }).click();
    await expect
      .poll(() => form('New virtual key').getByRole('alert').textContent())
      .toContain('provider must be one of');
    await browser.shot('manage-virtual-keys');

    // Escape closes the dialog and deletes nothing; the focus was inside it, on a real button.
    await row('team-a').getByRole('button', { name: 'Delete' }).click();
    await page.locator('dialog.confirm[open]').waitFor();
    expect(await page.evaluate(() => document.activeElement?.closest('dialog') !== null)).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('dialog.confirm[open]').count()).toBe(0);
    expect((await gw.api('GET', '/virtual-keys/team-a')).status).toBe(200);
    await row('team-a').getByRole('button', { name: 'Delete' }).click();
    await confirmWith('Delete virtual key');
    await row('team-a').waitFor({ state: 'detached' });
    expect((await gw.api('GET', '/virtual-keys/team-a')).status).toBe(404);
  });

  it('works in the workspace an organisation admin picks', async () => {
    await page.locator('select[name="workspace"]').selectOption('platform-team');
    await open('Virtual keys');
    const f = form('New virtual key');
    await f.locator('input[name="name"]').fill('Platform key');
    await f.locator('input[name="provider"]').fill('openai');
    await f.locator('input[name="key"]').fill('sk-platform');
    await f.getByRole('button', { name: 'Create virtual key' }).click();
    await row('platform-key').waitFor();
    // A provider's account fields appear with it: a Bedrock key names its region.
    await f.locator('input[name="name"]').fill('Bedrock key');
    await f.locator('input[name="provider"]').fill('bedrock');
    await f.locator('input[name="region"]').fill('eu-west-1');
    await f.locator('input[name="key"]').fill('AKIAEXAMPLE:secret');
    await f.getByRole('button', { name: 'Create virtual key' }).click();
    await row('bedrock-key').waitFor();
    expect((await gw.api('GET', '/virtual-keys/bedrock-key?workspace=platform-team')).body.region).toBe(
      'eu-west-1',
    );
    await row('bedrock-key').getByRole('button', { name: 'Delete' }).click();
    await confirmWith('Delete virtual key');
    await row('bedrock-key').waitFor({ state: 'detached' });
    const there = await gw.api('GET', '/virtual-keys?workspace=platform-team');
    expect(there.body.data.map((k: { slug: string }) => k.slug)).toEqual(['platform-key']);
    expect((await gw.api('GET', '/virtual-keys')).body.data).toEqual([]);
    await page.locator('select[name="workspace"]').selectOption('');
    await row('platform-key').waitFor({ state: 'detached' });
  });

  it('saves a config with its validation error at the field, tries it, edits and deletes it', async () => {
    expect(
      (
        await gw.api('POST', '/virtual-keys', {
          name: 'Try',
          slug: 'try-vk',
          provider: 'openai',
          key: 'sk-try',
          custom_host: fake.url,
        })
      ).status,
    ).toBe(201);
    await open('Configs');
    const f = form('New config');
    await f.locator('input[name="name"]').fill('primary');
    await f.locator('textarea[name="config"]').fill('{"strategy": {"mode": "sideways"}, "targets": []}');
    await f.getByRole('button', { name: 'Create config' }).click();
    await expect
      .poll(() => f.locator('[data-field-error="config"]').textContent())
      .toContain('strategy.mode');
    await browser.shot('manage-configs-error');

    await f.locator('textarea[name="config"]').fill('{not json');
    await f.getByRole('button', { name: 'Create config' }).click();
    await expect
      .poll(() => f.locator('[data-field-error="config"]').textContent())
      .toContain('not valid JSON');

    await f.locator('textarea[name="config"]').fill('{"virtual_key": "try-vk", "retry": {"attempts": 1}}');
    await f.getByRole('button', { name: 'Create config' }).click();
    await expect.poll(async () => (await gw.api('GET', '/configs')).body.data.length).toBe(1);
    const saved = (await gw.api('GET', '/configs')).body.data[0];
    expect(saved).toMatchObject({
      name: 'primary',
      config: { virtual_key: 'try-vk', retry: { attempts: 1 } },
    });

    await row(saved.id).getByRole('button', { name: 'Try it' }).click();
    const tryIt = page.locator(`[data-try="${saved.id}"]`);
    await tryIt.locator('input[name="message"]').fill('ping through the config');
    await tryIt.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => tryIt.locator('[data-try-reply]').textContent())
      .toBe('Echo: ping through the config');
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-try');
    await browser.shot('manage-configs');

    await row(saved.id).getByRole('button', { name: 'Edit' }).click();
    const edit = form(`Edit ${saved.id}`);
    await edit.locator('input[name="name"]').fill('primary v2');
    await edit.getByRole('button', { name: 'Save config' }).click();
    await expect.poll(async () => (await gw.api('GET', `/configs/${saved.id}`)).body.name).toBe('primary v2');

    await row(saved.id).getByRole('button', { name: 'Delete' }).click();
    await confirmWith('Delete config');
    await expect.poll(async () => (await gw.api('GET', `/configs/${saved.id}`)).status).toBe(404);
  });

  it('builds a guardrail from check forms, edits and deletes it', async () => {
    await open('Guardrails');
    const f = form('New guardrail');
    await f.locator('input[name="name"]').fill('No personal data');
    await f.locator('select[name="checks[0].type"]').selectOption('pii');
    await f.locator('select[name="checks[0].action"]').selectOption('redact');
    await f.locator('input[name="checks[0].kinds"][value="email"]').check();
    await f.locator('input[name="checks[0].kinds"][value="phone"]').check();
    await f.getByRole('button', { name: 'Add check' }).click();
    await f.locator('select[name="checks[1].type"]').selectOption('word_count');
    await f.locator('input[name="checks[1].max"]').fill('200');
    await f.getByRole('button', { name: 'Add check' }).click();
    await f.locator('select[name="checks[2].type"]').selectOption('contains');
    await f.locator('input[name="checks[2].words"]').fill('secret, internal');
    await f.locator('select[name="checks[2].operator"]').selectOption('none');
    await f.locator('input[name="checks[2].case_sensitive"]').check();
    await browser.shot('manage-guardrails-form');
    await f.getByRole('button', { name: 'Create guardrail' }).click();
    await expect.poll(async () => (await gw.api('GET', '/guardrails')).body.data.length).toBe(1);
    const g = (await gw.api('GET', '/guardrails')).body.data[0];
    expect(g.name).toBe('No personal data');
    expect(g.checks).toEqual([
      { type: 'pii', action: 'redact', kinds: ['email', 'phone'] },
      { type: 'word_count', action: 'deny', max: 200 },
      {
        type: 'contains',
        action: 'deny',
        words: ['secret', 'internal'],
        operator: 'none',
        case_sensitive: true,
      },
    ]);

    // The API's refusal of a bad parameter is shown: a regular expression that does not compile.
    await row(g.id).getByRole('button', { name: 'Edit' }).click();
    const edit = form(`Edit ${g.id}`);
    await edit.getByRole('button', { name: 'Remove check 2' }).click();
    await edit.getByRole('button', { name: 'Add check' }).click();
    await edit.locator('select[name="checks[2].type"]').selectOption('regex');
    await edit.locator('input[name="checks[2].pattern"]').fill('(unclosed');
    await edit.getByRole('button', { name: 'Save guardrail' }).click();
    await expect
      .poll(() => edit.getByRole('alert').textContent())
      .toContain('not a valid regular expression');
    await edit.locator('input[name="checks[2].pattern"]').fill('ACME-\\d+');
    await edit.getByRole('button', { name: 'Save guardrail' }).click();
    await expect
      .poll(async () =>
        (await gw.api('GET', `/guardrails/${g.id}`)).body.checks.map((c: { type: string }) => c.type),
      )
      .toEqual(['pii', 'contains', 'regex']);
    await browser.shot('manage-guardrails');

    await row(g.id).getByRole('button', { name: 'Delete' }).click();
    await confirmWith('Delete guardrail');
    await expect.poll(async () => (await gw.api('GET', `/guardrails/${g.id}`)).status).toBe(404);
  });

  it('writes a prompt with its variables, versions it with a diff, renders, runs and deletes it', async () => {
    await open('Prompts');
    await page.locator('div.empty').waitFor();
    const f = form('New prompt');
    await f.locator('input[name="name"]').fill('support answer');
    await f.locator('input[name="target"]').fill('@try-vk');
    await f
      .locator('textarea[name="messages[0].content"]')
      .fill('You answer for {{company}} in {{tone}} words.');
    await f.locator('textarea[name="messages[1].content"]').fill('{{question}}');
    await expect
      .poll(() => f.locator('[data-variables]').getAttribute('data-variables'))
      .toBe('company,tone,question');
    await f.getByRole('button', { name: 'Create prompt' }).click();
    await expect.poll(async () => (await gw.api('GET', '/prompts')).body.data.length).toBe(1);
    const p = (await gw.api('GET', '/prompts')).body.data[0];
    expect(p).toMatchObject({ name: 'support answer', version: 1, virtual_key: 'try-vk' });
    expect(p.variables.sort()).toEqual(['company', 'question', 'tone']);

    await row(p.id).getByRole('button', { name: 'Edit' }).click();
    const edit = form(`Edit ${p.id}`);
    await edit.locator('textarea[name="messages[0].content"]').fill('You answer for {{company}}, briefly.');
    await edit.getByRole('button', { name: 'Save new version' }).click();
    await expect.poll(async () => (await gw.api('GET', `/prompts/${p.id}`)).body.version).toBe(2);
    const diff = page.locator('[data-diff]');
    await expect
      .poll(() => diff.locator('.diff-del').allTextContents())
      .toEqual(['- [system] You answer for {{company}} in {{tone}} words.']);
    expect(await diff.locator('.diff-add').allTextContents()).toEqual([
      '+ [system] You answer for {{company}}, briefly.',
    ]);

    const run = page.locator(`[data-run="${p.id}"]`);
    await run.locator('input[name="variables.company"]').fill('ACME');
    await run.locator('input[name="variables.question"]').fill('Where is my order?');
    await run.getByRole('button', { name: 'Render' }).click();
    await expect
      .poll(() => run.locator('[data-output="render"]').textContent())
      .toContain('You answer for ACME, briefly.');
    await run.getByRole('button', { name: 'Test run' }).click();
    await expect
      .poll(() => run.locator('[data-output="run"]').textContent())
      .toBe('Echo: Where is my order?');
    await browser.shot('manage-prompts');

    await row(p.id).getByRole('button', { name: 'Delete' }).click();
    await confirmWith('Delete prompt');
    await expect.poll(async () => (await gw.api('GET', `/prompts/${p.id}`)).status).toBe(404);
  });

  it('sets the JWT key set, shows its refusal at the field, and turns it off', async () => {
    await open('JWT');
    await page.locator('[data-jwt-state="none"]').waitFor();
    const f = form('JWT key set');
    await f.locator('input[name="source"][value="jwks"]').check();
    await f.locator('textarea[name="jwks"]').fill('{"keys": []}');
    await f.getByRole('button', { name: 'Save key set' }).click();
    await expect.poll(() => f.locator('[data-field-error="jwks"]').textContent()).toContain('holds no keys');

    await f.locator('input[name="source"][value="url"]').check();
    await f.locator('input[name="jwks_url"]').fill('http://127.0.0.1:9/.well-known/jwks.json');
    await f.getByRole('button', { name: 'Save key set' }).click();
    await page.locator('[data-jwt-state="on"]').waitFor();
    expect((await gw.api('GET', '/organisation/jwt')).body.jwks_url).toBe(
      'http://127.0.0.1:9/.well-known/jwks.json',
    );
    await browser.shot('manage-jwt');

    // A token the key set cannot verify lands in the audit log.
    const token = `${Buffer.from('{"alg":"RS256","kid":"k1"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`;
    expect((await gw.api('GET', '/logs', undefined, token)).status).toBe(401);
    await open('Audit log');
    await expect.poll(() => page.locator('[data-page="audit"] tbody tr').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-page="audit"] tbody').textContent()).toContain('jwt.invalid');
    await browser.shot('manage-audit');

    await open('JWT');
    await page.getByRole('button', { name: 'Turn off JWT sign-in' }).click();
    await confirmWith('Turn off');
    await page.locator('[data-jwt-state="none"]').waitFor();
    expect((await gw.api('GET', '/organisation/jwt')).status).toBe(404);
  });

  it('shows a refusal where the signed-in key lacks the right, and never offers more', async () => {
    const limited = await gw.api('POST', '/api-keys', { name: 'app', scopes: ['completions.write'] });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(limited.body.key);
    // Only the pages the key may open are offered: its own workspace, read only.
    await expect
      .poll(() =>
        page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link').allTextContents(),
      )
      .toEqual(['Workspaces']);
    await open('Workspaces');
    await page.locator('[data-workspace-policy="default"]').waitFor();
    expect(await form('New workspace').count()).toBe(0);
    // A page reached by its URL says which right is missing, and the API agrees.
    await page.goto(`${base}/dashboard#/virtual-keys`);
    await expect
      .poll(() => page.locator('[data-page-refused="virtual-keys"]').textContent())
      .toContain('virtual_keys.read');
    expect((await gw.api('GET', '/virtual-keys', undefined, limited.body.key)).status).toBe(403);
    await browser.shot('manage-refused');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(ADMIN_KEY);
  });

  it('is reachable by keyboard with a visible focus, and readable at 420 px', async () => {
    await page.locator('body').press('Tab');
    // Tab until a navigation link has the focus; each is a real link.
    for (let i = 0; i < 5; i++) {
      const tag = await page.evaluate(() => document.activeElement?.closest('nav') !== null);
      if (tag) break;
      await page.keyboard.press('Tab');
    }
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const style = getComputedStyle(el);
      return { tag: el.tagName, outline: style.outlineStyle, width: style.outlineWidth };
    });
    expect(focused.tag).toBe('A');
    expect(focused.outline).not.toBe('none');
    // Enter on a focused link opens its page.
    for (let i = 0; i < 10; i++) {
      if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Prompts') break;
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    await page.locator('[data-page="prompts"]').waitFor();

    await page.setViewportSize({ width: 420, height: 900 });
    for (const [view, name] of [
      ['Logs', 'logs'],
      ['Analytics', 'analytics'],
      ['Virtual keys', 'virtual-keys'],
      ['Configs', 'configs'],
      ['Guardrails', 'guardrails'],
      ['Prompts', 'prompts'],
      ['API keys', 'api-keys'],
      ['Workspaces', 'workspaces'],
      ['JWT', 'jwt'],
      ['SSO', 'sso'],
      ['Egress', 'egress'],
      ['Audit log', 'audit'],
    ] as const) {
      await open(view);
      await page.locator(`[data-page="${name}"]`).waitFor();
      // Nothing wider than the screen but the tables, which scroll inside their own card.
      await browser.shot(`manage-420-${name}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(overflow, view).toBeLessThanOrEqual(420);
    }
    await page.setViewportSize({ width: 1400, height: 900 });
  });
});

import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { type FakeOidc, startFakeOidc } from '../support/fake-oidc';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai';
import { startTestGateway, type TestGateway } from '../support/gateway';

// Single sign-on in Debian's Chromium: the sign-in page offers the organisation's provider (a fake one on
// 127.0.0.1), the code flow with PKCE runs in the page, and the ID token then reads the logs.

const CLIENT_ID = 'gateway-dashboard';

let gw: TestGateway;
let fake: FakeOpenAI;
let idp: FakeOidc;
let browser: TestBrowser;
let page: Page;
let base: string;

const rows = () => page.locator('tr[data-log-id]');

beforeAll(async () => {
  [gw, fake, idp, browser] = await Promise.all([
    startTestGateway(),
    startFakeOpenAI(),
    startFakeOidc({ sub: 'u-1', email: 'grace@example.com', groups: ['gateway.logs.view'] }),
    launchBrowser(),
  ]);
  page = browser.page;
  base = gw.url.replace(/\/v1$/, '');
  const put = await gw.api('PUT', '/organisation/sso', {
    issuer: idp.issuer,
    client_id: CLIENT_ID,
    workspace: 'default',
    scopes_claim: 'groups',
  });
  expect(put.status).toBe(200);
  const res = await gw
    .client({ headers: { 'x-gateway-custom-host': fake.url, 'x-gateway-user': 'alice' } })
    .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
  expect(res.choices[0]?.message.content).toBe('Echo: hello');
});
afterAll(async () => {
  await browser?.close();
  await Promise.all([gw?.stop(), fake?.close(), idp?.close()]);
});

describe('sign-in with the organisation identity provider', () => {
  it('offers the provider, signs in through it with PKCE and lists the logs', async () => {
    await page.goto(`${base}/dashboard`);
    const button = page.getByRole('button', { name: 'Sign in with 127.0.0.1' });
    await button.waitFor();
    await browser.shot('dashboard-sign-in-sso');
    await button.click();

    await expect.poll(() => rows().count()).toBe(1);
    expect(page.url()).toBe(`${base}/dashboard`);
    const authorize = idp.last.authorize;
    expect(authorize?.get('client_id')).toBe(CLIENT_ID);
    expect(authorize?.get('redirect_uri')).toBe(`${base}/dashboard`);
    expect(authorize?.get('scope')).toBe('openid email profile');
    expect(authorize?.get('code_challenge_method')).toBe('S256');
    expect(authorize?.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // No client secret: a public client proves itself with the PKCE verifier alone.
    expect(idp.last.token?.has('client_secret')).toBe(false);
    expect(idp.last.token?.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The ID token is the session's key, kept in this tab only.
    const stored = await page.evaluate(() => sessionStorage.getItem('gateway-dashboard-session'));
    expect(JSON.parse(stored ?? '{}').key.split('.')).toHaveLength(3);
    await browser.shot('dashboard-sso-signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in with 127.0.0.1' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});

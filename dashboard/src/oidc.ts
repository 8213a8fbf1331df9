// Sign-in with the organisation's OpenID Provider: authorization code flow with PKCE (S256), state and
// nonce, all in the browser with a public client (no secret). The ID token is then used like a key.

export interface SsoConfig {
  issuer: string;
  client_id: string;
  scopes: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

interface Pending {
  base: string;
  state: string;
  nonce: string;
  verifier: string;
  tokenEndpoint: string;
  clientId: string;
  redirectUri: string;
}

const PENDING_KEY = 'gateway-dashboard-oidc';

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const random = () => b64url(crypto.getRandomValues(new Uint8Array(32)));

/** Where the provider sends the browser back: the dashboard itself. */
export const redirectUri = () => `${location.origin}/dashboard`;

/** "Okta" from `https://acme.okta.com/oauth2/default`: a name for the button. */
export function providerName(issuer: string): string {
  try {
    const host = new URL(issuer).hostname;
    if (host.endsWith('.okta.com') || host.endsWith('.oktapreview.com')) return 'Okta';
    if (host === 'login.microsoftonline.com') return 'Microsoft Entra ID';
    if (host.startsWith('cognito-idp.')) return 'Amazon Cognito';
    if (host === 'accounts.google.com') return 'Google';
    return host;
  } catch {
    return issuer;
  }
}

/** Sends the browser to the provider; the answer comes back to `finishSignIn`. */
export async function startSignIn(config: SsoConfig, base: string): Promise<void> {
  const pending: Pending = {
    base,
    state: random(),
    nonce: random(),
    verifier: random(),
    tokenEndpoint: config.token_endpoint,
    clientId: config.client_id,
    redirectUri: redirectUri(),
  };
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(config.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: pending.redirectUri,
    scope: config.scopes,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: b64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.href);
}

/**
 * When the page is the provider's redirect (`?code=…&state=…`): exchanges the code for an ID token and
 * returns it with the API base; null when this load is not a sign-in answer. The query is removed.
 */
export async function finishSignIn(): Promise<{ base: string; token: string } | null> {
  const query = new URLSearchParams(location.search);
  const raw = sessionStorage.getItem(PENDING_KEY);
  if (!raw || !query.has('state')) return null;
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  const pending = JSON.parse(raw) as Pending;
  if (query.get('state') !== pending.state)
    throw new Error('Sign-in failed: the answer does not match this request.');
  const error = query.get('error');
  if (error) throw new Error(`Sign-in failed: ${query.get('error_description') ?? error}`);
  const res = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: query.get('code') ?? '',
      redirect_uri: pending.redirectUri,
      client_id: pending.clientId,
      code_verifier: pending.verifier,
    }),
  });
  const body = (await res.json().catch(() => ({}))) as { id_token?: string; error?: string };
  if (!res.ok || !body.id_token) {
    throw new Error(`Sign-in failed: the provider did not issue a token (${body.error ?? res.status}).`);
  }
  // The nonce ties the token to this browser's request; the gateway verifies signature and claims.
  const payload = JSON.parse(
    atob(body.id_token.split('.')[1]?.replace(/-/g, '+').replace(/_/g, '/') ?? ''),
  ) as { nonce?: string };
  if (payload.nonce !== pending.nonce)
    throw new Error('Sign-in failed: the token was not issued for this sign-in.');
  return { base: pending.base, token: body.id_token };
}

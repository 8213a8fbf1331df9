import { useEffect, useState } from 'preact/hooks';
import { ApiError, GatewayApi } from './api';
import { finishSignIn, providerName, type SsoConfig, startSignIn } from './oidc';
import { defaultBase, type Session } from './session';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [base, setBase] = useState(defaultBase());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSso] = useState<SsoConfig | null>(null);
  const cleanBase = base.trim().replace(/\/+$/, '');

  const signIn = async (session: Session) => {
    setBusy(true);
    setError(null);
    try {
      // Any valid key or token may read its organisation; each page then shows what its rights allow.
      await new GatewayApi(session.base, session.key).get('/organisation');
      onSignedIn(session);
    } catch (e) {
      const status = e instanceof ApiError ? e.status : 0;
      const message = e instanceof Error ? e.message : String(e);
      setError(status === 401 ? `401: the gateway does not accept this key. ${message}` : message);
    } finally {
      setBusy(false);
    }
  };

  // Back from the identity provider: the code becomes an ID token, used like a key.
  useEffect(() => {
    finishSignIn().then(
      (done) => done && signIn({ base: done.base, key: done.token }),
      (e: Error) => setError(e.message),
    );
  }, []);

  // The organisation's single sign-on, if any: a public document of the API.
  useEffect(() => {
    let current = true;
    setSso(null);
    fetch(`${cleanBase}/organisation/sso/config`)
      .then((res) => (res.ok ? (res.json() as Promise<SsoConfig>) : null))
      .then(
        (config) => current && setSso(config),
        () => undefined,
      );
    return () => {
      current = false;
    };
  }, [cleanBase]);

  const submit = (event: Event) => {
    event.preventDefault();
    signIn({ base: cleanBase, key: key.trim() });
  };

  return (
    <main class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>LLM gateway</h1>
        <p class="muted">Sign in with a gateway API key or JWT. It is kept only in this tab.</p>
        {sso && (
          <>
            <button
              type="button"
              class="sso"
              disabled={busy}
              onClick={() => startSignIn(sso, cleanBase).catch((e: Error) => setError(e.message))}
            >
              Sign in with {providerName(sso.issuer)}
            </button>
            <p class="divider muted">or with a key</p>
          </>
        )}
        <label>
          API key or JWT
          <input
            name="key"
            type="password"
            autocomplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </label>
        <label>
          Gateway API URL
          <input
            name="base"
            type="url"
            required
            value={base}
            onInput={(e) => setBase(e.currentTarget.value)}
          />
        </label>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

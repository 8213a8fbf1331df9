import { useState } from 'preact/hooks';
import { ApiError, GatewayApi } from './api';
import { defaultBase, type Session } from './session';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [base, setBase] = useState(defaultBase());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const session = { base: base.trim().replace(/\/+$/, ''), key: key.trim() };
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

  return (
    <main class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>LLM gateway</h1>
        <p class="muted">Sign in with a gateway API key or JWT. It is kept only in this tab.</p>
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

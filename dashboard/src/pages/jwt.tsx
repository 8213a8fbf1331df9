import { useEffect, useState } from 'preact/hooks';
import { ApiError, type GatewayApi } from '../api';
import { Alert, FieldError, FormError, formatDate, parseJsonField, useConfirm, useSubmit } from '../ui';

interface JwtSettings {
  jwks_url?: string;
  jwks?: { keys: unknown[] };
  updated_at: string;
}

/** The organisation's JWT key set: a JWKS URL the gateway fetches, or a JWKS pasted here. */
export function JwtPage({ api }: { api: GatewayApi }) {
  const [current, setCurrent] = useState<JwtSettings | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [source, setSource] = useState<'url' | 'jwks'>('url');
  const [url, setUrl] = useState('');
  const [jwks, setJwks] = useState('');
  const [dialog, confirm] = useConfirm();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    setLoadError(null);
    api.get<JwtSettings>('/organisation/jwt').then(
      (s) => {
        setCurrent(s);
        setSource(s.jwks ? 'jwks' : 'url');
        setUrl(s.jwks_url ?? '');
        setJwks(s.jwks ? JSON.stringify(s.jwks, null, 2) : '');
        setLoaded(true);
      },
      (e: unknown) => {
        setCurrent(null);
        // 404: not configured yet, which the empty form says; anything else is a refusal to show.
        if (!(e instanceof ApiError && e.status === 404))
          setLoadError(e instanceof Error ? e.message : String(e));
        setLoaded(true);
      },
    );
  }, [api, tick]);

  const save = useSubmit(async () => {
    const body = source === 'url' ? { jwks_url: url.trim() } : { jwks: parseJsonField(jwks, 'jwks') };
    setCurrent(await api.send<JwtSettings>('PUT', '/organisation/jwt', body));
  });

  return (
    <section data-page="jwt">
      <h2>JWT sign-in</h2>
      <p class="muted">
        Applications may send a JWT signed by your identity provider instead of an API key. The gateway checks
        its RS256 signature against this key set.
      </p>
      <Alert text={loadError} />
      {loaded && !current && !loadError && (
        <p class="empty card" data-jwt-state="none">
          JWT sign-in is off. Give the JWKS URL of your identity provider (or paste its key set) to turn it
          on.
        </p>
      )}
      {current && (
        <p class="card" data-jwt-state="on">
          JWT sign-in is on, with{' '}
          {current.jwks_url ? (
            <code>{current.jwks_url}</code>
          ) : (
            `${current.jwks?.keys.length ?? 0} pasted key(s)`
          )}
          ; updated {formatDate(current.updated_at)}.
        </p>
      )}
      <form class="card" onSubmit={save.submit} aria-label="JWT key set">
        <fieldset class="choice">
          <legend>Key set</legend>
          <label class="check">
            <input
              type="radio"
              name="source"
              value="url"
              checked={source === 'url'}
              onChange={() => setSource('url')}
            />
            JWKS URL
          </label>
          <label class="check">
            <input
              type="radio"
              name="source"
              value="jwks"
              checked={source === 'jwks'}
              onChange={() => setSource('jwks')}
            />
            Paste a JWKS
          </label>
        </fieldset>
        {source === 'url' ? (
          <label>
            JWKS URL
            <input
              name="jwks_url"
              type="url"
              required
              placeholder="https://issuer.example.com/.well-known/jwks.json"
              value={url}
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
            <FieldError error={save.error} name="jwks_url" />
          </label>
        ) : (
          <label>
            JWKS (JSON with a "keys" array of public RSA keys)
            <textarea
              name="jwks"
              class="code"
              rows={8}
              required
              value={jwks}
              onInput={(e) => setJwks(e.currentTarget.value)}
            />
            <FieldError error={save.error} name="jwks" />
          </label>
        )}
        <FormError error={save.error} fields={['jwks_url', 'jwks']} />
        <div class="actions">
          <button type="submit" disabled={save.busy}>
            Save key set
          </button>
          {current && (
            <button
              type="button"
              class="danger"
              onClick={() =>
                confirm(
                  'Turn JWT sign-in off? Every JWT will be refused until a key set is saved again.',
                  'Turn off',
                  async () => {
                    await api.send('DELETE', '/organisation/jwt');
                    setTick((t) => t + 1);
                  },
                )
              }
            >
              Turn off JWT sign-in
            </button>
          )}
        </div>
      </form>
      {dialog}
    </section>
  );
}

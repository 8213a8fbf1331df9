import { useEffect, useState } from 'preact/hooks';
import { ApiError, type GatewayApi } from '../api';
import { redirectUri } from '../oidc';
import {
  Alert,
  CopyButton,
  errorText,
  FieldError,
  FormError,
  formatDate,
  useConfirm,
  useSubmit,
} from '../ui';
import { SCOPES } from './api-keys';

interface SsoSettings {
  issuer: string;
  client_id: string;
  scopes: string;
  audience: string;
  workspace_claim: string | null;
  workspace: string | null;
  scopes_claim: string | null;
  gateway_scopes: string[] | null;
  updated_at: string;
}

interface Draft {
  issuer: string;
  client_id: string;
  scopes: string;
  audience: string;
  workspaceBy: 'claim' | 'fixed';
  workspace_claim: string;
  workspace: string;
  scopesBy: 'claim' | 'fixed';
  scopes_claim: string;
  gateway_scopes: string[];
}

const blank: Draft = {
  issuer: '',
  client_id: '',
  scopes: 'openid email profile',
  audience: '',
  workspaceBy: 'fixed',
  workspace_claim: '',
  workspace: 'default',
  scopesBy: 'claim',
  scopes_claim: 'groups',
  gateway_scopes: ['completions.write', 'logs.view'],
};

function draftOf(s: SsoSettings): Draft {
  return {
    issuer: s.issuer,
    client_id: s.client_id,
    scopes: s.scopes,
    // The API reports the client id as the audience when none was set: shown empty, it stays the default.
    audience: s.audience === s.client_id ? '' : s.audience,
    workspaceBy: s.workspace_claim ? 'claim' : 'fixed',
    workspace_claim: s.workspace_claim ?? '',
    workspace: s.workspace ?? '',
    scopesBy: s.scopes_claim ? 'claim' : 'fixed',
    scopes_claim: s.scopes_claim ?? '',
    gateway_scopes: s.gateway_scopes ?? blank.gateway_scopes,
  };
}

function bodyOf(d: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    issuer: d.issuer.trim(),
    client_id: d.client_id.trim(),
    scopes: d.scopes.trim() || undefined,
    audience: d.audience.trim() || undefined,
  };
  if (d.workspaceBy === 'claim') body.workspace_claim = d.workspace_claim.trim();
  else body.workspace = d.workspace.trim();
  if (d.scopesBy === 'claim') body.scopes_claim = d.scopes_claim.trim();
  else body.gateway_scopes = d.gateway_scopes;
  return body;
}

const FIELDS = [
  'issuer',
  'client_id',
  'scopes',
  'audience',
  'workspace_claim',
  'workspace',
  'scopes_claim',
  'gateway_scopes',
];

/** The organisation's OpenID Connect sign-in (`PUT/GET/DELETE /v1/organisation/sso`, admin). */
export function SsoPage({ api }: { api: GatewayApi }) {
  const [current, setCurrent] = useState<SsoSettings | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [d, setD] = useState<Draft>(blank);
  const [tick, setTick] = useState(0);
  const [dialog, confirm] = useConfirm();

  useEffect(() => {
    setLoadError(null);
    api.get<SsoSettings>('/organisation/sso').then(
      (s) => {
        setCurrent(s);
        setD(draftOf(s));
        setLoaded(true);
      },
      (e: unknown) => {
        setCurrent(null);
        setD(blank);
        // 404: not configured, which the empty state says.
        if (!(e instanceof ApiError && e.status === 404)) setLoadError(errorText(e));
        setLoaded(true);
      },
    );
  }, [api, tick]);

  const save = useSubmit(async () => {
    const saved = await api.send<SsoSettings>('PUT', '/organisation/sso', bodyOf(d));
    setCurrent(saved);
    setD(draftOf(saved));
  });
  const set = (k: keyof Draft) => (e: { currentTarget: { value: string } }) =>
    setD({ ...d, [k]: e.currentTarget.value });
  const invalid = (name: string) =>
    save.error instanceof ApiError && save.error.param === name ? 'true' : undefined;

  return (
    <section data-page="sso">
      <h2>Single sign-on</h2>
      <p class="muted">
        People sign in to this dashboard with your identity provider (OpenID Connect, authorization code with
        PKCE, no client secret). Register a single-page application (public client) with this redirect URI:
      </p>
      <p class="secret-row">
        <code data-redirect-uri>{redirectUri()}</code>
        <CopyButton text={redirectUri()} />
      </p>
      <Alert text={loadError} />
      {loaded && !current && !loadError && (
        <p class="empty card" data-sso-state="none">
          Single sign-on is off. Give your provider's issuer and the client id of its SPA registration to
          offer “Sign in with …” on the sign-in page.
        </p>
      )}
      {current && (
        <p class="card" data-sso-state="on">
          Single sign-on is on with <code>{current.issuer}</code>; updated {formatDate(current.updated_at)}.
        </p>
      )}
      <form class="card" onSubmit={save.submit} aria-label="Single sign-on settings">
        <div class="form-grid">
          <label class="wide">
            Issuer URL
            <input
              name="issuer"
              type="url"
              required
              placeholder="https://login.microsoftonline.com/<tenant id>/v2.0"
              value={d.issuer}
              onInput={set('issuer')}
              aria-invalid={invalid('issuer')}
            />
            <FieldError error={save.error} name="issuer" />
          </label>
          <label>
            Client id (public / SPA client)
            <input
              name="client_id"
              required
              value={d.client_id}
              onInput={set('client_id')}
              aria-invalid={invalid('client_id')}
            />
            <FieldError error={save.error} name="client_id" />
          </label>
          <label>
            Scopes requested at sign-in
            <input name="scopes" value={d.scopes} onInput={set('scopes')} aria-invalid={invalid('scopes')} />
            <FieldError error={save.error} name="scopes" />
          </label>
          <label>
            Audience (empty: the client id)
            <input
              name="audience"
              value={d.audience}
              onInput={set('audience')}
              aria-invalid={invalid('audience')}
            />
            <FieldError error={save.error} name="audience" />
          </label>
        </div>
        <fieldset class="choice">
          <legend>Workspace of a signed-in person</legend>
          <label class="check">
            <input
              type="radio"
              name="workspaceBy"
              checked={d.workspaceBy === 'fixed'}
              onChange={() => setD({ ...d, workspaceBy: 'fixed' })}
            />
            Always one workspace
          </label>
          <label class="check">
            <input
              type="radio"
              name="workspaceBy"
              checked={d.workspaceBy === 'claim'}
              onChange={() => setD({ ...d, workspaceBy: 'claim' })}
            />
            From a claim
          </label>
          {d.workspaceBy === 'fixed' ? (
            <label>
              Workspace slug
              <input
                name="workspace"
                required
                value={d.workspace}
                onInput={set('workspace')}
                aria-invalid={invalid('workspace')}
              />
              <FieldError error={save.error} name="workspace" />
            </label>
          ) : (
            <label>
              Claim naming the workspace slug
              <input
                name="workspace_claim"
                required
                placeholder="custom:workspace"
                value={d.workspace_claim}
                onInput={set('workspace_claim')}
                aria-invalid={invalid('workspace_claim')}
              />
            </label>
          )}
          <FieldError error={save.error} name="workspace_claim" />
        </fieldset>
        <fieldset class="choice">
          <legend>Gateway scopes of a signed-in person</legend>
          <label class="check">
            <input
              type="radio"
              name="scopesBy"
              checked={d.scopesBy === 'claim'}
              onChange={() => setD({ ...d, scopesBy: 'claim' })}
            />
            <span>
              From a claim (groups or roles named <code>gateway.logs.view</code>…)
            </span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="scopesBy"
              checked={d.scopesBy === 'fixed'}
              onChange={() => setD({ ...d, scopesBy: 'fixed' })}
            />
            The same scopes for everyone
          </label>
          {d.scopesBy === 'claim' ? (
            <label>
              Claim holding the scopes
              <input
                name="scopes_claim"
                required
                placeholder="groups, roles, cognito:groups"
                value={d.scopes_claim}
                onInput={set('scopes_claim')}
                aria-invalid={invalid('scopes_claim')}
              />
            </label>
          ) : (
            <fieldset class="scopes" aria-label="Gateway scopes">
              {SCOPES.map((s) => (
                <label key={s} class="check">
                  <input
                    type="checkbox"
                    name="gateway_scopes"
                    value={s}
                    checked={d.gateway_scopes.includes(s)}
                    onChange={(e) =>
                      setD({
                        ...d,
                        gateway_scopes: e.currentTarget.checked
                          ? [...d.gateway_scopes, s]
                          : d.gateway_scopes.filter((x) => x !== s),
                      })
                    }
                  />
                  {s}
                </label>
              ))}
              <FieldError error={save.error} name="gateway_scopes" />
            </fieldset>
          )}
          <FieldError error={save.error} name="scopes_claim" />
        </fieldset>
        <FormError error={save.error} fields={FIELDS} />
        <div class="actions">
          <button type="submit" disabled={save.busy}>
            Save single sign-on
          </button>
          {current && (
            <button
              type="button"
              class="danger"
              onClick={() =>
                confirm(
                  'Turn single sign-on off? The sign-in page stops offering it.',
                  'Turn off',
                  async () => {
                    await api.send('DELETE', '/organisation/sso');
                    setTick((t) => t + 1);
                  },
                )
              }
            >
              Turn off single sign-on
            </button>
          )}
        </div>
      </form>
      {dialog}
    </section>
  );
}

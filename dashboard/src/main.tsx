import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AnalyticsView } from './analytics';
import { type Caller, can, GatewayApi } from './api';
import { LogDetail } from './log-detail';
import { LogsView } from './logs';
import { ApiKeysPage } from './pages/api-keys';
import { AuditPage } from './pages/audit';
import { ConfigsPage } from './pages/configs';
import { EgressPage } from './pages/egress';
import { GuardrailsPage } from './pages/guardrails';
import { JwtPage } from './pages/jwt';
import { PromptsPage } from './pages/prompts';
import { SsoPage } from './pages/sso';
import { VirtualKeysPage } from './pages/virtual-keys';
import { WorkspacesPage } from './pages/workspaces';
import { clearSession, loadSession, type Session, saveSession } from './session';
import { SignIn } from './sign-in';
import { errorText } from './ui';
import './style.css';

// Each page with what the signed-in key needs to read it (`admin`: an organisation admin key; null:
// anyone): the navigation offers only the pages the key can open.
const PAGES = [
  ['logs', 'Logs', 'logs.view'],
  ['analytics', 'Analytics', 'logs.view'],
  ['virtual-keys', 'Virtual keys', 'virtual_keys.read'],
  ['configs', 'Configs', 'configs.read'],
  ['guardrails', 'Guardrails', 'configs.read'],
  ['prompts', 'Prompts', 'prompts.read'],
  ['api-keys', 'API keys', 'api_keys.read'],
  ['workspaces', 'Workspaces', null],
  ['jwt', 'JWT', 'admin'],
  ['sso', 'SSO', 'admin'],
  ['egress', 'Egress', 'admin'],
  ['audit', 'Audit log', 'admin'],
] as const;
type View = (typeof PAGES)[number][0];

interface Route {
  view: View;
  /** A log entry's id under `#/logs/<id>`. */
  id?: string;
  /** The query after `?`: the logs' filters. */
  search: string;
}

/** `#/logs?user=a`, `#/logs/<id>`, `#/prompts`…: the back button, reloads and shared links keep their place. */
function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const [, view, id] = path.split('/');
  const known = PAGES.find(([v]) => v === view)?.[0] ?? 'logs';
  return { view: known, id: known === 'logs' && id ? decodeURIComponent(id) : undefined, search };
}

interface Organisation {
  name: string;
  workspaces: { slug: string; name: string }[];
  caller: Caller;
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [org, setOrg] = useState<Organisation | null>(null);
  const [orgError, setOrgError] = useState<string | null>(null);
  const [orgTick, setOrgTick] = useState(0);
  // Empty: the signed-in key's own workspace; an organisation admin may pick another.
  const [workspace, setWorkspace] = useState('');
  const api = useMemo(() => (session ? new GatewayApi(session.base, session.key) : null), [session]);
  // The filters of the list, kept while an entry is open so that going back finds them.
  const logsSearch = useRef('');
  if (route.view === 'logs' && route.id === undefined) logsSearch.current = route.search;

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (!api) return;
    api.get<Organisation>('/organisation').then(
      (o) => {
        setOrg(o);
        setOrgError(null);
      },
      (e: unknown) => {
        setOrg(null);
        setOrgError(errorText(e));
      },
    );
  }, [api, orgTick]);

  if (!session || !api) {
    return (
      <SignIn
        onSignedIn={(s) => {
          saveSession(s);
          setSession(s);
        }}
      />
    );
  }

  const go = (hash: string) => {
    location.hash = hash;
  };
  const logsHash = (search: string) => `#/logs${search ? `?${search}` : ''}`;
  const caller = org?.caller;
  // Nothing is drawn until the key's rights are known, so that no part of the page moves when they arrive.
  if (!caller && !orgError) return null;
  // Only the pages the key may open (none when its rights could not be read).
  const allowed = caller ? PAGES.filter(([, , need]) => need === null || can(caller, need)) : [];
  const showLogs = route.view === 'logs' && !!caller && can(caller, 'logs.view');
  const page = (() => {
    if (!caller) return null;
    if (showLogs) return null;
    const need = PAGES.find(([v]) => v === route.view)?.[2];
    if (need && !can(caller, need)) {
      return (
        <p class="empty card" data-page-refused={route.view}>
          This key cannot open this page: it needs{' '}
          {need === 'admin' ? 'an organisation admin key' : `the ${need} scope`}.
        </p>
      );
    }
    switch (route.view) {
      case 'analytics':
        return <AnalyticsView api={api} />;
      case 'virtual-keys':
        return <VirtualKeysPage api={api} caller={caller} workspace={workspace} />;
      case 'configs':
        return <ConfigsPage api={api} caller={caller} workspace={workspace} />;
      case 'guardrails':
        return <GuardrailsPage api={api} caller={caller} />;
      case 'prompts':
        return <PromptsPage api={api} caller={caller} workspace={workspace} />;
      case 'api-keys':
        return <ApiKeysPage api={api} caller={caller} workspace={workspace} />;
      case 'workspaces':
        return <WorkspacesPage api={api} caller={caller} onChange={() => setOrgTick((t) => t + 1)} />;
      case 'jwt':
        return <JwtPage api={api} />;
      case 'sso':
        return <SsoPage api={api} />;
      case 'egress':
        return <EgressPage api={api} />;
      case 'audit':
        return <AuditPage api={api} />;
      default:
        return null;
    }
  })();
  const workspaces = org?.workspaces ?? [];
  return (
    <>
      <header class="top">
        <strong>LLM gateway</strong>
        <nav aria-label="Pages">
          {allowed.map(([view, label]) => (
            <a
              key={view}
              href={`#/${view}`}
              class={route.view === view ? 'active' : ''}
              aria-current={route.view === view ? 'page' : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <div class="top-end">
          {/* Only an organisation admin acts in another workspace than its key's own. */}
          {caller && can(caller, 'admin') && (
            <label class="workspace-pick">
              <span class="sr-only">Workspace</span>
              <select
                name="workspace"
                value={workspace}
                onChange={(e) => setWorkspace(e.currentTarget.value)}
              >
                <option value="">Key's own workspace</option>
                {workspaces.map((w) => (
                  <option key={w.slug} value={w.slug}>
                    {w.slug}
                  </option>
                ))}
              </select>
            </label>
          )}
          <span class="muted base" title={session.base}>
            {org?.name ?? session.base}
          </span>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              clearSession();
              setSession(null);
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {/* Kept mounted under a detail view, so that going back keeps the filters and the page. */}
        {orgError && (
          <p class="error" role="alert">
            {orgError}
          </p>
        )}
        {showLogs && (
          <div hidden={route.id !== undefined}>
            <LogsView
              api={api}
              search={logsSearch.current}
              onSearch={(search) => go(logsHash(search))}
              onOpen={(id) => go(`#/logs/${encodeURIComponent(id)}`)}
              paused={route.id !== undefined}
            />
          </div>
        )}
        {showLogs && route.id !== undefined && (
          <LogDetail api={api} id={route.id} onBack={() => go(logsHash(logsSearch.current))} />
        )}
        {page}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AnalyticsView } from './analytics';
import { GatewayApi } from './api';
import { LogDetail } from './log-detail';
import { LogsView } from './logs';
import { ApiKeysPage } from './pages/api-keys';
import { AuditPage } from './pages/audit';
import { ConfigsPage } from './pages/configs';
import { GuardrailsPage } from './pages/guardrails';
import { JwtPage } from './pages/jwt';
import { PromptsPage } from './pages/prompts';
import { VirtualKeysPage } from './pages/virtual-keys';
import { WorkspacesPage } from './pages/workspaces';
import { clearSession, loadSession, type Session, saveSession } from './session';
import { SignIn } from './sign-in';
import './style.css';

const PAGES = [
  ['logs', 'Logs'],
  ['analytics', 'Analytics'],
  ['virtual-keys', 'Virtual keys'],
  ['configs', 'Configs'],
  ['guardrails', 'Guardrails'],
  ['prompts', 'Prompts'],
  ['api-keys', 'API keys'],
  ['workspaces', 'Workspaces'],
  ['jwt', 'JWT'],
  ['audit', 'Audit log'],
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
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [org, setOrg] = useState<Organisation | null>(null);
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
    api.get<Organisation>('/organisation').then(setOrg, () => setOrg(null));
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
  const page = (() => {
    switch (route.view) {
      case 'analytics':
        return <AnalyticsView api={api} />;
      case 'virtual-keys':
        return <VirtualKeysPage api={api} workspace={workspace} />;
      case 'configs':
        return <ConfigsPage api={api} workspace={workspace} />;
      case 'guardrails':
        return <GuardrailsPage api={api} />;
      case 'prompts':
        return <PromptsPage api={api} workspace={workspace} />;
      case 'api-keys':
        return <ApiKeysPage api={api} workspace={workspace} />;
      case 'workspaces':
        return <WorkspacesPage api={api} onChange={() => setOrgTick((t) => t + 1)} />;
      case 'jwt':
        return <JwtPage api={api} />;
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
          {PAGES.map(([view, label]) => (
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
          {/* Always drawn, so that the header keeps its height when the organisation has loaded. */}
          {
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
          }
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
        {route.view === 'logs' && (
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
        {route.view === 'logs' && route.id !== undefined && (
          <LogDetail api={api} id={route.id} onBack={() => go(logsHash(logsSearch.current))} />
        )}
        {page}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

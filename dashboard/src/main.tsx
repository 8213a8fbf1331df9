import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { AnalyticsView } from './analytics';
import { GatewayApi } from './api';
import { LogDetail } from './log-detail';
import { LogsView } from './logs';
import { clearSession, loadSession, type Session, saveSession } from './session';
import { SignIn } from './sign-in';
import './style.css';

type Route = { view: 'logs' } | { view: 'log'; id: string } | { view: 'analytics' };

/** `#/logs`, `#/logs/<id>`, `#/analytics`: the back button and reloads keep their place. */
function parseRoute(hash: string): Route {
  const [, view, id] = hash.replace(/^#/, '').split('/');
  if (view === 'analytics') return { view: 'analytics' };
  if (view === 'logs' && id) return { view: 'log', id: decodeURIComponent(id) };
  return { view: 'logs' };
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const api = useMemo(() => (session ? new GatewayApi(session.base, session.key) : null), [session]);

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

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
  const tab = (hash: string, label: string, active: boolean) => (
    <a href={hash} class={active ? 'active' : ''} aria-current={active ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <header class="top">
        <strong>LLM gateway</strong>
        <nav>
          {tab('#/logs', 'Logs', route.view !== 'analytics')}
          {tab('#/analytics', 'Analytics', route.view === 'analytics')}
        </nav>
        <span class="muted base">{session.base}</span>
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
      </header>
      <main>
        {/* Kept mounted under a detail view, so that going back keeps the filters and the page. */}
        {route.view !== 'analytics' && (
          <div hidden={route.view === 'log'}>
            <LogsView api={api} onOpen={(id) => go(`#/logs/${encodeURIComponent(id)}`)} />
          </div>
        )}
        {route.view === 'log' && <LogDetail api={api} id={route.id} onBack={() => go('#/logs')} />}
        {route.view === 'analytics' && <AnalyticsView api={api} />}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

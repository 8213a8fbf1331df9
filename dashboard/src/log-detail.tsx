import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { GatewayApi, LogEntry } from './api';
import { formatCost, formatMs, formatTime } from './format';
import { useKeyNames } from './logs';
import { timing } from './timing';
import { CopyButton } from './ui';

function Json({ value }: { value: unknown }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return <pre class="json">{text ?? 'null'}</pre>;
}

function Row({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

export function LogDetail({ api, id, onBack }: { api: GatewayApi; id: string; onBack: () => void }) {
  const [entry, setEntry] = useState<LogEntry | null>(null);
  const [error, setError] = useState<string | null>(null);
  const keyNames = useKeyNames(api);

  useEffect(() => {
    setEntry(null);
    setError(null);
    api
      .log(id)
      .then(setEntry)
      .catch((e: Error) => setError(e.message));
  }, [api, id]);

  if (error) {
    return (
      <section>
        <button type="button" class="secondary" onClick={onBack}>
          ← Logs
        </button>
        <p class="error" role="alert">
          {error}
        </p>
      </section>
    );
  }
  if (!entry) return <p class="muted">Loading {id}…</p>;

  const t = timing(entry);
  const attempts = entry.attempts ?? [];
  return (
    <section class="detail" data-log-detail={entry.id}>
      <div class="actions">
        <button type="button" class="secondary" onClick={onBack}>
          ← Logs
        </button>
        <CopyButton text={location.href} label="Copy link" />
      </div>
      <h2>
        {entry.operation}{' '}
        <span class={`badge ${entry.status >= 500 ? 'bad' : entry.status >= 400 ? 'warn' : 'ok'}`}>
          {entry.status}
        </span>
      </h2>
      <div class="grid2">
        <div class="card">
          <h3>Request</h3>
          <dl>
            <Row label="Id">{entry.id}</Row>
            <Row label="Time">{formatTime(entry.timestamp)}</Row>
            <Row label="Trace id">{entry.trace_id}</Row>
            <Row label="Workspace">{entry.workspace}</Row>
            <Row label="Auth">
              {entry.auth.type}
              {entry.auth.key_id ? ` ${keyNames.get(entry.auth.key_id) ?? ''} ${entry.auth.key_id}` : ''}
              {entry.auth.subject ? ` ${entry.auth.subject}` : ''}
            </Row>
            <Row label="User">{entry.user ?? '—'}</Row>
            <Row label="Provider">{entry.provider ?? '—'}</Row>
            <Row label="Model">{entry.model ?? '—'}</Row>
            <Row label="Virtual key">{entry.virtual_key ?? '—'}</Row>
            <Row label="Stream">{entry.stream ? 'yes' : 'no'}</Row>
          </dl>
        </div>
        <div class="card">
          <h3>Timings and usage</h3>
          <dl class="timings">
            <Row label="Latency">{formatMs(entry.latency_ms)}</Row>
            <Row label="Upstream (serving attempt)">{formatMs(t.upstreamMs)}</Row>
            {attempts.length > 1 && (
              <Row label="Earlier attempts">
                <span data-earlier-ms={t.earlierAttemptsMs}>{formatMs(t.earlierAttemptsMs)}</span>
              </Row>
            )}
            {t.retries > 0 && !t.includesWaits && (
              <Row label="Retry waits">
                <span data-waits-ms={t.retryWaitsMs}>{formatMs(t.retryWaitsMs)}</span>
              </Row>
            )}
            <Row label="First chunk">{formatMs(entry.first_chunk_ms)}</Row>
            <Row label={t.includesWaits ? 'Gateway time and retry waits' : 'Gateway time'}>
              <span data-gateway-ms={t.gatewayMs ?? ''}>{formatMs(t.gatewayMs)}</span>
              {t.includesWaits && (
                <span class="muted small"> (this older entry does not time the backoff waits apart)</span>
              )}
            </Row>
            <Row label="Retries / fallback">
              {t.retries} {t.retries === 1 ? 'retry' : 'retries'}
              {t.fallbackTarget !== null ? `, served by fallback target ${t.fallbackTarget}` : ''}
            </Row>
            <Row label="Tokens">
              {entry.usage
                ? `${entry.usage.prompt_tokens} in + ${entry.usage.completion_tokens} out = ${entry.usage.total_tokens}`
                : '—'}
            </Row>
            <Row label="Cost">{formatCost(entry.cost)}</Row>
          </dl>
          {Object.keys(entry.metadata).length > 0 && (
            <>
              <h3>Metadata</h3>
              <dl>
                {Object.entries(entry.metadata).map(([k, v]) => (
                  <Row key={k} label={k}>
                    {v}
                  </Row>
                ))}
              </dl>
            </>
          )}
        </div>
      </div>
      {entry.error && (
        <div class="card">
          <h3>Error</h3>
          <p class="error">
            {entry.error.origin}: {entry.error.type}
            {entry.error.code ? ` (${entry.error.code})` : ''}: {entry.error.message}
          </p>
        </div>
      )}
      <div class="card">
        <h3>Attempts ({attempts.length})</h3>
        {attempts.length === 0 ? (
          <p class="muted">No upstream attempt was made.</p>
        ) : (
          // Scrolls inside its card on a narrow screen, as every table does.
          <div class="table-wrap">
            <table class="attempts">
              <thead>
                <tr>
                  <th>Target</th>
                  <th>Provider</th>
                  <th>Virtual key</th>
                  <th>Status</th>
                  <th class="num">Waited before</th>
                  <th class="num">Latency</th>
                  <th>Error</th>
                </tr>
              </thead>
              <tbody>
                {attempts.map((a, i) => (
                  // Attempts have no id of their own; their order is what they are.
                  <tr key={i}>
                    <td>{a.target_index}</td>
                    <td>{a.provider ?? '—'}</td>
                    <td>{a.virtual_key ?? '—'}</td>
                    <td>{a.status ?? '—'}</td>
                    <td class="num">{formatMs(a.wait_ms)}</td>
                    <td class="num">{formatMs(a.latency_ms)}</td>
                    <td>{a.error ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      <div class="grid2">
        <div class="card">
          <h3>Request body</h3>
          <Json value={entry.request} />
        </div>
        <div class="card">
          <h3>Response{entry.stream ? ' (reassembled from the stream)' : ''}</h3>
          <Json value={entry.response} />
        </div>
      </div>
      {entry.body_ref && <p class="muted">Bodies are stored apart ({entry.body_ref}).</p>}
    </section>
  );
}

import { useEffect, useState } from 'preact/hooks';
import type { GatewayApi, LogEntry, Query } from './api';
import { formatCost, formatMs, formatTime } from './format';

export interface LogFilters {
  user: string;
  model: string;
  status: string;
  virtual_key: string;
  trace_id: string;
  metadataKey: string;
  metadataValue: string;
  from: string;
  to: string;
}

export const NO_FILTERS: LogFilters = {
  user: '',
  model: '',
  status: '',
  virtual_key: '',
  trace_id: '',
  metadataKey: '',
  metadataValue: '',
  from: '',
  to: '',
};

const PAGE_SIZE = '50';

/** The query string of `GET /v1/logs` for these filters; `datetime-local` values are local times. */
export function toQuery(f: LogFilters): Query {
  const query: Query = {
    user: f.user.trim(),
    model: f.model.trim(),
    status: f.status.trim(),
    virtual_key: f.virtual_key.trim(),
    trace_id: f.trace_id.trim(),
    from: f.from ? new Date(f.from).toISOString() : undefined,
    to: f.to ? new Date(f.to).toISOString() : undefined,
    limit: PAGE_SIZE,
  };
  if (f.metadataKey.trim()) query[`metadata.${f.metadataKey.trim()}`] = f.metadataValue;
  return query;
}

function StatusBadge({ status }: { status: number }) {
  const kind = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok';
  return <span class={`badge ${kind}`}>{status}</span>;
}

export function LogsView({ api, onOpen }: { api: GatewayApi; onOpen: (id: string) => void }) {
  const [draft, setDraft] = useState<LogFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<LogFilters>(NO_FILTERS);
  // Cursors of the pages before the current one; `next_cursor` only moves forward.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<{ data: LogEntry[]; next: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    let cancelled = false;
    setLoading(true);
    setError(null);
    api
      .logs({ ...toQuery(filters), cursor })
      .then((reply) => !cancelled && setPage({ data: reply.data, next: reply.next_cursor }))
      .catch((e: Error) => !cancelled && setError(e.message))
      .finally(() => !cancelled && setLoading(false));
    return () => {
      cancelled = true;
    };
  }, [api, filters, cursor]);

  const field = (name: keyof LogFilters, label: string, type = 'text') => (
    <label>
      {label}
      <input
        name={name}
        type={type}
        value={draft[name]}
        onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })}
      />
    </label>
  );

  const apply = (next: LogFilters) => {
    setFilters(next);
    setCursors([undefined]);
  };

  return (
    <section>
      <form
        class="filters card"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        {field('user', 'User')}
        {field('model', 'Model')}
        {field('status', 'Status', 'number')}
        {field('virtual_key', 'Virtual key')}
        {field('trace_id', 'Trace id')}
        {field('metadataKey', 'Metadata key')}
        {field('metadataValue', 'Metadata value')}
        {field('from', 'From', 'datetime-local')}
        {field('to', 'To', 'datetime-local')}
        <div class="actions">
          <button type="submit">Apply</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft(NO_FILTERS);
              apply(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>

      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="card table-wrap">
        <table class="logs" aria-busy={loading}>
          <thead>
            <tr>
              <th>Time</th>
              <th>User</th>
              <th>Provider</th>
              <th>Model</th>
              <th>Status</th>
              <th class="num">Tokens</th>
              <th class="num">Latency</th>
              <th class="num">Cost</th>
              <th>Metadata</th>
            </tr>
          </thead>
          <tbody>
            {page?.data.map((e) => (
              <tr
                key={e.id}
                data-log-id={e.id}
                tabIndex={0}
                onClick={() => onOpen(e.id)}
                onKeyDown={(k) => k.key === 'Enter' && onOpen(e.id)}
              >
                <td class="nowrap">{formatTime(e.timestamp)}</td>
                <td>{e.user ?? '—'}</td>
                <td>{e.provider ?? '—'}</td>
                <td>{e.model ?? '—'}</td>
                <td>
                  <StatusBadge status={e.status} />
                  {e.stream && <span class="tag">stream</span>}
                </td>
                <td
                  class="num"
                  title={e.usage ? `${e.usage.prompt_tokens} in, ${e.usage.completion_tokens} out` : ''}
                >
                  {e.usage ? e.usage.total_tokens : '—'}
                </td>
                <td class="num">{formatMs(e.latency_ms)}</td>
                <td class="num">{formatCost(e.cost)}</td>
                <td>
                  {Object.entries(e.metadata).map(([k, v]) => (
                    <span class="chip" key={k}>
                      {k}={v}
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {page && page.data.length === 0 && <p class="empty">No log entries match.</p>}
      </div>
      <nav class="pager">
        <button
          type="button"
          class="secondary"
          disabled={cursors.length <= 1}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <span class="muted">Page {cursors.length}</span>
        <button
          type="button"
          class="secondary"
          disabled={!page?.next}
          onClick={() => page?.next && setCursors([...cursors, page.next])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, type GatewayApi, type ListReply, type LogEntry, type Query } from './api';
import { download, toCsv, toNdjson } from './export';
import { formatCost, formatMs, formatTime } from './format';
import { routeSummary, timing } from './timing';

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
/** Most entries an export reads, following the cursor; the button says when a filter holds more. */
export const MAX_EXPORT = 5000;
const TAIL_MS = 3000;

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

/** Filters and the live tail as the hash's query string (`#/logs?user=alice&live=1`), and back. */
export function filtersToSearch(f: LogFilters, live: boolean): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) params.set(k, v);
  if (live) params.set('live', '1');
  return params.toString();
}

export function searchToFilters(search: string): { filters: LogFilters; live: boolean } {
  const params = new URLSearchParams(search);
  const filters = { ...NO_FILTERS };
  for (const k of Object.keys(NO_FILTERS) as (keyof LogFilters)[]) filters[k] = params.get(k) ?? '';
  return { filters, live: params.get('live') === '1' };
}

function StatusBadge({ status }: { status: number }) {
  const kind = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok';
  return <span class={`badge ${kind}`}>{status}</span>;
}

/** The signed-in key's view of API key names; empty when it may not list keys (no api_keys.read). */
export function useKeyNames(api: GatewayApi): Map<string, string> {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    api.get<ListReply<{ id: string; name: string }>>('/api-keys').then(
      (r) => setNames(new Map(r.data.map((k) => [k.id, k.name]))),
      () => setNames(new Map()),
    );
  }, [api]);
  return names;
}

export function LogsView({
  api,
  search,
  onSearch,
  onOpen,
  paused = false,
}: {
  api: GatewayApi;
  search: string;
  /** True while an entry is open over the list: the live tail waits. */
  paused?: boolean;
  onSearch: (search: string) => void;
  onOpen: (id: string) => void;
}) {
  const { filters, live } = useMemo(() => searchToFilters(search), [search]);
  const [draft, setDraft] = useState<LogFilters>(filters);
  // Cursors of the pages before the current one; `next_cursor` only moves forward.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<{ data: LogEntry[]; next: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  const [exporting, setExporting] = useState<string | null>(null);
  const keyNames = useKeyNames(api);
  const cursor = cursors[cursors.length - 1];

  // A shared link or the back button changes the filters: the form and the pages follow.
  useEffect(() => {
    setDraft(filters);
    setCursors([undefined]);
  }, [filters]);

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
  }, [api, filters, cursor, tick]);

  // The live tail re-reads the newest page while it is shown; older pages stay still.
  useEffect(() => {
    if (!live || paused || cursor !== undefined) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setTick((t) => t + 1);
    }, TAIL_MS);
    return () => clearInterval(timer);
  }, [live, paused, cursor]);

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

  const exportAs = async (format: 'csv' | 'ndjson') => {
    setExporting(format);
    setError(null);
    try {
      const entries: LogEntry[] = [];
      let next: string | undefined;
      do {
        const reply = await api.logs({ ...toQuery(filters), limit: '100', cursor: next });
        entries.push(...reply.data);
        next = reply.next_cursor ?? undefined;
      } while (next && entries.length < MAX_EXPORT);
      const rows = entries.slice(0, MAX_EXPORT);
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      if (format === 'csv') download(`gateway-logs-${stamp}.csv`, 'text/csv', toCsv(rows));
      else download(`gateway-logs-${stamp}.ndjson`, 'application/x-ndjson', toNdjson(rows));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setExporting(null);
    }
  };

  return (
    <section data-page="logs">
      <form
        class="filters card"
        onSubmit={(e) => {
          e.preventDefault();
          onSearch(filtersToSearch(draft, live));
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
          <button type="button" class="secondary" onClick={() => onSearch(filtersToSearch(NO_FILTERS, live))}>
            Clear
          </button>
        </div>
      </form>

      <div class="toolbar logs-toolbar">
        <label class="check">
          <input
            type="checkbox"
            name="live"
            checked={live}
            onChange={(e) => onSearch(filtersToSearch(filters, e.currentTarget.checked))}
          />
          Live tail
        </label>
        {live && (
          <span class="muted small" data-live>
            {cursor === undefined ? `Refreshing every ${TAIL_MS / 1000} s` : 'Paused on an older page'}
          </span>
        )}
        <span class="spacer" />
        <button type="button" class="secondary" disabled={exporting !== null} onClick={() => exportAs('csv')}>
          {exporting === 'csv' ? 'Exporting…' : 'Export CSV'}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={exporting !== null}
          onClick={() => exportAs('ndjson')}
        >
          {exporting === 'ndjson' ? 'Exporting…' : 'Export NDJSON'}
        </button>
      </div>

      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="card table-wrap">
        {/* The table is drawn with its first rows: its columns then never move under the reader. */}
        {!page && !error && <p class="empty">Loading…</p>}
        {page && (
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
                <th>Virtual key</th>
                <th>API key</th>
                <th>Retries / fallback</th>
                <th class="num">First chunk</th>
                <th
                  class="num"
                  title="Time the gateway itself took: latency minus every upstream attempt and retry wait"
                >
                  Gateway
                </th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((e) => {
                const t = timing(e);
                const keyId = e.auth.key_id;
                return (
                  <tr key={e.id} data-log-id={e.id} onClick={() => onOpen(e.id)}>
                    <td class="nowrap">
                      {/* A real link: keyboard, middle-click and copy-link all work, and the URL is shareable. */}
                      <a href={`#/logs/${encodeURIComponent(e.id)}`}>{formatTime(e.timestamp)}</a>
                    </td>
                    <td>{e.user ?? '—'}</td>
                    <td>{e.provider ?? '—'}</td>
                    <td>{e.model ?? '—'}</td>
                    <td class="nowrap">
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
                    <td>{e.virtual_key ? `@${e.virtual_key}` : '—'}</td>
                    <td class="wrap" data-api-key={keyId ?? ''}>
                      {keyId
                        ? (keyNames.get(keyId) ?? keyId)
                        : e.auth.subject
                          ? `jwt ${e.auth.subject}`
                          : '—'}
                    </td>
                    <td class="nowrap">{routeSummary(t)}</td>
                    <td class="num">{formatMs(e.first_chunk_ms)}</td>
                    <td
                      class="num"
                      title={t.includesWaits ? 'Includes the waits between retries' : undefined}
                    >
                      {formatMs(t.gatewayMs)}
                      {t.includesWaits ? '*' : ''}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        {page && page.data.length === 0 && (
          <p class="empty">
            No log entries match. Send a request through the gateway (or clear the filters) and it appears
            here.
          </p>
        )}
      </div>
      {/* Drawn with the first page, so that it never jumps down when the rows arrive. */}
      {page && (
        <nav class="pager" aria-label="Log pages">
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
      )}
    </section>
  );
}

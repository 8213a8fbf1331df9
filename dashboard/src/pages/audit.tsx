import { useState } from 'preact/hooks';
import type { GatewayApi, ListReply } from '../api';
import { formatTime } from '../format';
import { ListTable, useLoad } from '../ui';

interface AuditEntry {
  id: string;
  timestamp: string;
  event: string;
  jwtToken?: string;
  error?: string;
  detail?: string;
  request_id?: string;
}

/** The organisation's audit log (refused JWTs, with the token masked), newest first. */
export function AuditPage({ api }: { api: GatewayApi }) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    () => api.get<ListReply<AuditEntry>>('/audit-logs', { limit: '50', cursor }),
    [api, cursor],
  );
  const rows = page.data?.data ?? [];
  return (
    <section data-page="audit">
      <h2>Audit log</h2>
      <ListTable
        error={page.error}
        loaded={!!page.data}
        rows={rows}
        empty={<>Nothing audited yet. Refused JWTs appear here, with the token masked.</>}
        head={
          <>
            <th>Time</th>
            <th>Event</th>
            <th>Why</th>
            <th>Token</th>
            <th>Request</th>
          </>
        }
        row={(e) => (
          <tr key={e.id} data-row={e.id}>
            <td class="nowrap">{formatTime(e.timestamp)}</td>
            <td>{e.event}</td>
            <td>
              {e.error ?? ''}
              {e.detail && <div class="muted small">{e.detail}</div>}
            </td>
            <td>
              <code class="small">{e.jwtToken ?? ''}</code>
            </td>
            <td class="muted small">{e.request_id ?? ''}</td>
          </tr>
        )}
      />
      <nav class="pager" aria-label="Audit pages">
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
          disabled={!page.data?.next_cursor}
          onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}

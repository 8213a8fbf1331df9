import type { LogEntry } from './api';
import { timing } from './timing';

const CSV_COLUMNS: [string, (e: LogEntry) => unknown][] = [
  ['id', (e) => e.id],
  ['timestamp', (e) => e.timestamp],
  ['trace_id', (e) => e.trace_id],
  ['workspace', (e) => e.workspace],
  ['auth_type', (e) => e.auth.type],
  ['api_key_id', (e) => e.auth.key_id],
  ['jwt_subject', (e) => e.auth.subject],
  ['user', (e) => e.user],
  ['operation', (e) => e.operation],
  ['provider', (e) => e.provider],
  ['model', (e) => e.model],
  ['virtual_key', (e) => e.virtual_key],
  ['status', (e) => e.status],
  ['stream', (e) => e.stream],
  ['latency_ms', (e) => e.latency_ms],
  ['upstream_latency_ms', (e) => e.upstream_latency_ms],
  ['first_chunk_ms', (e) => e.first_chunk_ms],
  ['gateway_ms', (e) => timing(e).gatewayMs],
  ['attempts', (e) => e.attempts?.length ?? 0],
  ['retry_waits_ms', (e) => timing(e).retryWaitsMs],
  ['retries', (e) => timing(e).retries],
  ['fallback_target', (e) => timing(e).fallbackTarget],
  ['prompt_tokens', (e) => e.usage?.prompt_tokens],
  ['completion_tokens', (e) => e.usage?.completion_tokens],
  ['total_tokens', (e) => e.usage?.total_tokens],
  ['cost', (e) => e.cost],
  ['error_type', (e) => e.error?.type],
  ['error_message', (e) => e.error?.message],
  ['metadata', (e) => (Object.keys(e.metadata).length ? JSON.stringify(e.metadata) : '')],
];

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  // A leading =, +, - or @ makes spreadsheets run the cell as a formula; a quote mark keeps it text.
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === 'string' ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(entries: LogEntry[]): string {
  const head = CSV_COLUMNS.map(([name]) => name).join(',');
  const rows = entries.map((e) => CSV_COLUMNS.map(([, get]) => csvCell(get(e))).join(','));
  return `${[head, ...rows].join('\r\n')}\r\n`;
}

export function toNdjson(entries: LogEntry[]): string {
  return entries.map((e) => `${JSON.stringify(e)}\n`).join('');
}

/** Hands `text` to the browser as a file download. */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../dashboard/src/api';
import { lineDiff } from '../../dashboard/src/diff';
import { toCsv, toNdjson } from '../../dashboard/src/export';
import { filtersToSearch, NO_FILTERS, searchToFilters } from '../../dashboard/src/logs';
import { routeSummary, timing } from '../../dashboard/src/timing';

const attempt = (target_index: string, latency_ms: number, status = 500) => ({
  target_index,
  provider: 'openai',
  virtual_key: null,
  status,
  latency_ms,
  error: status >= 400 ? 'upstream down' : null,
});

function entry(overrides: Partial<LogEntry>): LogEntry {
  return {
    id: 'log1',
    trace_id: 't1',
    timestamp: '2026-01-01T00:00:00.000Z',
    workspace: 'default',
    auth: { type: 'api_key', key_id: 'key_1' },
    user: 'alice',
    metadata: {},
    operation: 'chat.completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    virtual_key: null,
    status: 200,
    stream: false,
    latency_ms: 100,
    upstream_latency_ms: 60,
    first_chunk_ms: null,
    usage: null,
    cost: null,
    request: null,
    response: null,
    error: null,
    attempts: [attempt('0', 55, 200)],
    ...overrides,
  };
}

describe('dashboard log timing', () => {
  it('counts only the gateway as overhead when nothing was retried', () => {
    const t = timing(entry({}));
    expect(t).toMatchObject({ gatewayMs: 40, earlierAttemptsMs: 0, retries: 0, fallbackTarget: null });
    expect(t.includesWaits).toBe(false);
    expect(routeSummary(t)).toBe('—');
  });

  it('takes earlier attempts out, and says when retry waits are inside the rest', () => {
    const t = timing(
      entry({
        latency_ms: 500,
        upstream_latency_ms: 50,
        attempts: [attempt('0', 30), attempt('0', 20), attempt('1', 45, 200)],
      }),
    );
    expect(t).toMatchObject({ gatewayMs: 400, earlierAttemptsMs: 50, retries: 1, fallbackTarget: '1' });
    expect(t.includesWaits).toBe(true);
    expect(routeSummary(t)).toBe('1 retry, fallback → 1');
  });

  it('takes the retry waits out too when the attempts time them', () => {
    const t = timing(
      entry({
        latency_ms: 500,
        upstream_latency_ms: 50,
        attempts: [
          { ...attempt('0', 30), wait_ms: 0 },
          { ...attempt('0', 20), wait_ms: 300 },
          { ...attempt('1', 45, 200), wait_ms: 0 },
        ],
      }),
    );
    expect(t).toMatchObject({ gatewayMs: 100, earlierAttemptsMs: 50, retryWaitsMs: 300, retries: 1 });
    expect(t.includesWaits).toBe(false);
  });

  it('has no gateway time when no upstream was reached', () => {
    expect(timing(entry({ upstream_latency_ms: null, attempts: [] })).gatewayMs).toBeNull();
  });
});

describe('dashboard exports', () => {
  it('writes CSV with quoting and without spreadsheet formulas', () => {
    const csv = toCsv([entry({ user: '=HYPERLINK("x")', metadata: { team: 'a,b' } })]).split('\r\n');
    const head = csv[0]?.split(',') ?? [];
    expect(head[0]).toBe('id');
    expect(csv[1]).toContain(`"'=HYPERLINK(""x"")"`);
    expect(csv[1]).toContain('"{""team"":""a,b""}"');
  });

  it('writes one JSON entry per line', () => {
    const text = toNdjson([entry({ id: 'a' }), entry({ id: 'b' })]);
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['a', 'b']);
  });
});

describe('dashboard URLs and diffs', () => {
  it('round-trips the filters and the live tail through the hash', () => {
    const filters = { ...NO_FILTERS, user: 'alice', metadataKey: 'team', metadataValue: 'a&b' };
    const search = filtersToSearch(filters, true);
    expect(search).toBe('user=alice&metadataKey=team&metadataValue=a%26b&live=1');
    expect(searchToFilters(search)).toEqual({ filters, live: true });
  });

  it('diffs lines', () => {
    expect(lineDiff('a\nb\nc', 'a\nx\nc')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'del', text: 'b' },
      { kind: 'add', text: 'x' },
      { kind: 'same', text: 'c' },
    ]);
  });
});

import type { LogEntry } from '../../functions/core/log-entry';

/** A complete, small log entry for store tests; `overrides` replace any field. */
export function sampleLogEntry(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    id: '01JABCDEFGHJKMNPQRSTVWXYZ0',
    trace_id: 't',
    timestamp: new Date(0).toISOString(),
    organisation_id: 'org_1',
    workspace: 'default',
    auth: { type: 'api_key', key_id: 'key_1' },
    user: null,
    metadata: {},
    operation: 'chat.completions',
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key: null,
    status: 200,
    stream: false,
    latency_ms: 1,
    upstream_latency_ms: 1,
    first_chunk_ms: null,
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    cost: 0.001,
    request: { messages: [] },
    response: { choices: [] },
    error: null,
    attempts: [],
    ...overrides,
  };
}

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import { describe, expect, it, vi } from 'vitest';
import { METRIC, METRICS_NAMESPACE, RequestTelemetry } from '../../functions/gateway/request-telemetry';
import type { LogEntry } from '../../functions/gateway/usage-log';

/** Keeps each EMF record that would have been printed, instead of printing it. */
class CapturedMetrics extends Metrics {
  readonly records: EmfOutput[] = [];

  override publishStoredMetrics(): this {
    if (this.hasStoredMetrics()) this.records.push(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }
}

function setup() {
  const metrics = new CapturedMetrics({ namespace: METRICS_NAMESPACE, serviceName: 'gateway' });
  const logger = new Logger({ serviceName: 'gateway', logLevel: 'INFO' });
  const info = vi.spyOn(logger, 'info').mockImplementation(() => undefined);
  return { metrics, info, telemetry: new RequestTelemetry(metrics, logger) };
}

function entry(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    id: '01JTESTREQUEST000000000000',
    trace_id: 'trace-1',
    timestamp: '2026-01-01T00:00:00.000Z',
    organisation_id: 'org_1',
    workspace: 'default',
    auth: { type: 'api_key', key_id: 'key_1' },
    user: 'alice@example.com',
    metadata: { team: 'search', secret_project: 'x' },
    operation: 'chat.completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    virtual_key: 'openai-prod',
    status: 200,
    stream: true,
    latency_ms: 120,
    upstream_latency_ms: 100,
    first_chunk_ms: 40,
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    cost: 0.0042,
    request: { messages: [{ role: 'user', content: 'a private prompt' }] },
    response: { choices: [{ message: { content: 'a private answer' } }] },
    error: null,
    attempts: [],
    ...overrides,
  };
}

const base = { requestId: 'r1', traceId: 't1', latencyMs: 10, errorOrigin: null };

describe('RequestTelemetry', () => {
  it('emits one EMF record per request with gateway, operation, and provider/model dimension sets', () => {
    const { metrics, telemetry } = setup();
    telemetry.complete({ ...base, operation: 'chat.completions', status: 200, entry: entry() });
    expect(metrics.records).toHaveLength(1);
    const record = metrics.records[0] as EmfOutput;
    const directive = record._aws.CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('LlmGateway');
    expect(directive?.Dimensions).toEqual([
      ['service'],
      ['service', 'operation'],
      ['service', 'provider', 'model'],
    ]);
    expect(record).toMatchObject({
      service: 'gateway',
      operation: 'chat.completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      [METRIC.requests]: 1,
      [METRIC.serverErrors]: 0,
      [METRIC.latency]: 120,
      [METRIC.upstreamLatency]: 100,
      [METRIC.timeToFirstChunk]: 40,
      [METRIC.promptTokens]: 12,
      [METRIC.completionTokens]: 5,
      [METRIC.cost]: 0.0042,
      requestId: 'r1',
      traceId: 't1',
    });
    const units = Object.fromEntries(directive?.Metrics.map((m) => [m.Name, m.Unit]) ?? []);
    expect(units).toMatchObject({ Latency: 'Milliseconds', Requests: 'Count', Cost: 'None' });
  });

  it('counts errors by origin and status class, with zeros so that averages are rates', () => {
    const { metrics, telemetry } = setup();
    const failed = entry({
      status: 502,
      error: { message: 'upstream down', type: 'api_error', code: null, origin: 'provider' },
      usage: null,
      cost: null,
      first_chunk_ms: null,
    });
    telemetry.complete({ ...base, operation: 'chat.completions', status: 200, entry: failed });
    telemetry.complete({ ...base, operation: 'logs.list', status: 401, errorOrigin: 'gateway' });
    telemetry.complete({
      ...base,
      operation: 'chat.completions',
      status: 200,
      entry: entry({ status: 499 }),
    });
    const [provider, gateway, departed] = metrics.records as [EmfOutput, EmfOutput, EmfOutput];
    // The entry's status wins over the 200 that was sent before the stream failed.
    expect(provider).toMatchObject({ ServerErrors: 1, ProviderErrors: 1, GatewayErrors: 0, ClientErrors: 0 });
    expect(provider).not.toHaveProperty(METRIC.cost);
    expect(provider).not.toHaveProperty(METRIC.timeToFirstChunk);
    expect(gateway).toMatchObject({ ServerErrors: 0, ClientErrors: 1, GatewayErrors: 1, ProviderErrors: 0 });
    expect(gateway._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service'], ['service', 'operation']]);
    expect(departed).toMatchObject({ ClientDisconnects: 1, GatewayErrors: 0, ProviderErrors: 0 });
  });

  it('logs "request completed" for logged requests only, without bodies, metadata or users', () => {
    const { info, telemetry } = setup();
    telemetry.complete({ ...base, operation: 'health', status: 200 });
    expect(info).not.toHaveBeenCalled();
    telemetry.complete({ ...base, operation: 'chat.completions', status: 200, entry: entry() });
    expect(info).toHaveBeenCalledTimes(1);
    const [message, fields] = info.mock.calls[0] as [string, Record<string, unknown>];
    expect(message).toBe('request completed');
    expect(fields).toMatchObject({
      requestId: '01JTESTREQUEST000000000000',
      traceId: 'trace-1',
      operation: 'chat.completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      status: 200,
      latencyMs: 120,
      upstreamLatencyMs: 100,
      firstChunkMs: 40,
      promptTokens: 12,
      completionTokens: 5,
    });
    const text = JSON.stringify(fields);
    for (const secret of ['private prompt', 'private answer', 'secret_project', 'alice@example.com']) {
      expect(text).not.toContain(secret);
    }
  });
});

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { EmfOutput } from '@aws-lambda-powertools/metrics/types';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LogEntry } from '../../functions/core/log-entry';
import { applyPricingFile, clearPricingOverrides } from '../../functions/gateway/pricing';
import {
  METRIC,
  METRICS_NAMESPACE,
  metricModel,
  OTHER_MODEL,
  RequestTelemetry,
} from '../../functions/gateway/request-telemetry';

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
  return { metrics, info, telemetry: new RequestTelemetry(() => metrics, logger) };
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

  it('reports a model the price table does not hold under `other`, so callers cannot mint metrics', () => {
    const { metrics, telemetry } = setup();
    for (const model of ['gpt-4o-mini', 'made-up-model-123', 'constructor', '__proto__']) {
      telemetry.complete({ ...base, operation: 'chat.completions', status: 200, entry: entry({ model }) });
    }
    expect(metrics.records.map((r) => r.model)).toEqual(['gpt-4o-mini', 'other', 'other', 'other']);
  });
});

describe('metricModel', () => {
  afterEach(() => clearPricingOverrides());

  it('keeps listed models, counts dated snapshots under their base model and the rest under other', () => {
    expect(metricModel('openai', 'gpt-4o')).toBe('gpt-4o');
    expect(metricModel('openai', 'gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(metricModel('openai', 'gpt-4o-20991231')).toBe('gpt-4o');
    // A snapshot of a snapshot is not a listed name either: no date may reach the dimension.
    expect(metricModel('openai', 'gpt-4o-2024-08-06-2024-08-06')).toBe(OTHER_MODEL);
    expect(metricModel('anthropic', 'claude-sonnet-4-5')).toBe('claude-sonnet-4-5');
    expect(metricModel('bedrock', 'anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(
      'anthropic.claude-sonnet-4-5-20250929-v1:0',
    );
    expect(metricModel('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    );
    // A model listed for one provider is not listed for another; an unknown provider lists nothing.
    expect(metricModel('anthropic', 'gpt-4o')).toBe(OTHER_MODEL);
    expect(metricModel('no-such-provider', 'gpt-4o')).toBe(OTHER_MODEL);
    expect(metricModel('openai', 'hasOwnProperty')).toBe(OTHER_MODEL);
    expect(metricModel('openai', '')).toBe(OTHER_MODEL);
  });

  it("counts a model the deployment's pricing file adds as listed", () => {
    expect(metricModel('openai', 'ft:gpt-4o-mini:acme::abc123')).toBe(OTHER_MODEL);
    applyPricingFile({
      'ft:gpt-4o-mini:acme::abc123': {
        litellm_provider: 'openai',
        input_cost_per_token: 0.0000003,
        output_cost_per_token: 0.0000012,
      },
    });
    expect(metricModel('openai', 'ft:gpt-4o-mini:acme::abc123')).toBe('ft:gpt-4o-mini:acme::abc123');
  });
});

import { type Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { LogEntry } from '../core/log-entry';
import { logger } from '../core/logger';
import { settings } from '../core/settings';
import { priceOf } from './pricing';
import { PRICES } from './pricing-data';

// What CloudWatch sees of each request: one structured log line per logged request, and EMF metrics
// for every request, flushed once per invocation after the client has its last byte.

/** Namespace of every gateway metric; the stack's dashboard and alarms read the same names. */
export const METRICS_NAMESPACE = 'LlmGateway';

/** Metric names, shared with lib/observability.ts so the dashboard cannot drift from what is emitted. */
export const METRIC = {
  requests: 'Requests',
  serverErrors: 'ServerErrors',
  clientErrors: 'ClientErrors',
  gatewayErrors: 'GatewayErrors',
  providerErrors: 'ProviderErrors',
  clientDisconnects: 'ClientDisconnects',
  latency: 'Latency',
  upstreamLatency: 'UpstreamLatency',
  timeToFirstChunk: 'TimeToFirstChunk',
  promptTokens: 'PromptTokens',
  completionTokens: 'CompletionTokens',
  cost: 'Cost',
} as const;

/** What the streaming adapter knows of any request once its reply is sent. */
export interface CompletedRequest {
  requestId: string;
  traceId: string;
  operation: string | null;
  status: number;
  latencyMs: number;
  /** From `x-gateway-error-origin` of the reply, or `client` for a departed client. */
  errorOrigin: string | null;
  /** The finished log entry, for operations that write one. */
  entry?: LogEntry;
}

/** The `model` dimension value of every model without a price: any other name a caller invents. */
export const OTHER_MODEL = 'other';

const DATED = /-(?:\d{4}-\d{2}-\d{2}|\d{8})$/;

/** A name the price table holds as it is (built in, or from the deployment's pricing file). */
function listed(provider: string, model: string): boolean {
  const builtIn = Object.hasOwn(PRICES, provider) && Object.hasOwn(PRICES[provider]?.models ?? {}, model);
  // priceOf also finds any dated snapshot of a listed model; only an undated name counts as listed here.
  return builtIn || (!DATED.test(model) && priceOf(provider, model) !== undefined);
}

/**
 * The model as a metric dimension: each custom metric costs money, so only models of the price table
 * get their own; a dated snapshot counts under its listed base model and anything else under `other`.
 */
export function metricModel(provider: string, model: string): string {
  if (listed(provider, model)) return model;
  const base = model.replace(DATED, '');
  return base !== model && listed(provider, base) ? base : OTHER_MODEL;
}

// What publishStoredMetrics consults itself; protected only in Powertools' types.
const metricsDisabled = (m: Metrics) => (m as unknown as { isDisabled(): boolean }).isDisabled();

export class RequestTelemetry {
  private metrics?: Metrics;

  /** `newMetrics` runs at the first request, not at import: a cold start does not wait for it. */
  constructor(
    private readonly newMetrics: () => Metrics,
    private readonly logger: Logger,
  ) {}

  /** Records one request: its log line (logged operations only) and its metrics, then flushes them. */
  complete(request: CompletedRequest): void {
    const { entry } = request;
    // A logged request's entry carries the status the client really saw (a stream failed after 200).
    const status = entry?.status ?? request.status;
    const latencyMs = entry?.latency_ms ?? request.latencyMs;
    // A departed client is neither the gateway's fault nor the provider's.
    const origin = status === 499 ? 'client' : entry ? (entry.error?.origin ?? null) : request.errorOrigin;
    // Built only when the line would be written (INFO or lower); locally it usually is not.
    if (entry && this.logger.level <= LogLevelThreshold.INFO) this.logCompleted(entry);

    this.metrics ??= this.newMetrics();
    const m = this.metrics;
    // Disabled metrics (the local server) would be stored only to be dropped at the flush.
    if (metricsDisabled(m)) return;
    // Three dimension sets: the whole gateway (alarms), each operation, and each provider and model.
    m.addDimensions({});
    if (request.operation) m.addDimensions({ operation: request.operation });
    if (entry?.provider && entry.model) {
      m.addDimensions({ provider: entry.provider, model: metricModel(entry.provider, entry.model) });
    }

    // Zeros are emitted too, so that the Average of an error metric is its rate.
    m.addMetric(METRIC.requests, MetricUnit.Count, 1);
    m.addMetric(METRIC.serverErrors, MetricUnit.Count, status >= 500 ? 1 : 0);
    m.addMetric(METRIC.clientErrors, MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0);
    m.addMetric(METRIC.gatewayErrors, MetricUnit.Count, status >= 400 && origin === 'gateway' ? 1 : 0);
    m.addMetric(METRIC.providerErrors, MetricUnit.Count, status >= 400 && origin === 'provider' ? 1 : 0);
    m.addMetric(METRIC.clientDisconnects, MetricUnit.Count, status === 499 ? 1 : 0);
    m.addMetric(METRIC.latency, MetricUnit.Milliseconds, latencyMs);
    if (entry) {
      if (entry.upstream_latency_ms !== null) {
        m.addMetric(METRIC.upstreamLatency, MetricUnit.Milliseconds, entry.upstream_latency_ms);
      }
      if (entry.first_chunk_ms !== null) {
        m.addMetric(METRIC.timeToFirstChunk, MetricUnit.Milliseconds, entry.first_chunk_ms);
      }
      if (entry.usage) {
        m.addMetric(METRIC.promptTokens, MetricUnit.Count, entry.usage.prompt_tokens);
        m.addMetric(METRIC.completionTokens, MetricUnit.Count, entry.usage.completion_tokens);
      }
      // USD has no CloudWatch unit; the dashboard labels it.
      if (entry.cost !== null) m.addMetric(METRIC.cost, MetricUnit.NoUnit, entry.cost);
    }
    // High-cardinality ids go to the EMF record as metadata: searchable in Logs Insights, never dimensions.
    m.addMetadata('requestId', request.requestId);
    m.addMetadata('traceId', request.traceId);
    m.publishStoredMetrics();
  }

  /** The ids, route, outcome and timings of a logged request; never a body, a key or metadata values. */
  private logCompleted(entry: LogEntry): void {
    this.logger.info('request completed', {
      requestId: entry.id,
      traceId: entry.trace_id,
      operation: entry.operation,
      organisationId: entry.organisation_id,
      workspace: entry.workspace,
      authType: entry.auth.type,
      provider: entry.provider,
      model: entry.model,
      virtualKey: entry.virtual_key,
      status: entry.status,
      stream: entry.stream,
      latencyMs: entry.latency_ms,
      upstreamLatencyMs: entry.upstream_latency_ms,
      firstChunkMs: entry.first_chunk_ms,
      promptTokens: entry.usage?.prompt_tokens ?? null,
      completionTokens: entry.usage?.completion_tokens ?? null,
      cost: entry.cost,
      attempts: entry.attempts.length,
      errorOrigin: entry.error?.origin ?? null,
      errorType: entry.error?.type ?? null,
      errorCode: entry.error?.code ?? null,
    });
  }
}

// Locally, local/server.ts sets POWERTOOLS_METRICS_DISABLED so that EMF records do not flood stdout.
export const telemetry = new RequestTelemetry(
  () =>
    new Metrics({
      namespace: METRICS_NAMESPACE,
      serviceName: settings().serviceName,
    }),
  logger,
);

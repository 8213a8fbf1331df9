// The gateway's own headers on model operations, as the public contract (README, "Headers") names them.
// The gateway key travels in `x-gateway-api-key` or `Authorization`: those are security schemes instead.

export interface HeaderSpec {
  name: string;
  description: string;
}

export const GATEWAY_REQUEST_HEADERS: readonly HeaderSpec[] = [
  {
    name: 'x-gateway-provider',
    description: 'Provider name (`openai`, `anthropic`, ...) or `@<slug>` of a virtual key.',
  },
  { name: 'x-gateway-virtual-key', description: 'Older form: the slug of a virtual key.' },
  { name: 'x-gateway-config', description: 'A gateway config as JSON, or the id of a saved config.' },
  {
    name: 'x-gateway-custom-host',
    description: 'Base URL of the provider (self-hosted or OpenAI-compatible servers).',
  },
  { name: 'x-gateway-vendor-organization', description: 'Upstream organization id.' },
  { name: 'x-gateway-vendor-project', description: 'Upstream project id.' },
  {
    name: 'OpenAI-Organization',
    description: 'Upstream organization id (x-gateway-vendor-organization wins when both are sent).',
  },
  {
    name: 'OpenAI-Project',
    description: 'Upstream project id (x-gateway-vendor-project wins when both are sent).',
  },
  { name: 'x-gateway-metadata', description: 'JSON object of string values, logged and filterable.' },
  { name: 'x-gateway-trace-id', description: 'The caller’s trace id; generated when absent; echoed back.' },
];

export const GATEWAY_RESPONSE_HEADERS: readonly HeaderSpec[] = [
  { name: 'x-gateway-request-id', description: 'Id of the request’s log entry (`GET /v1/logs/{id}`).' },
  { name: 'x-gateway-trace-id', description: 'The trace id, sent or generated.' },
  { name: 'x-gateway-provider', description: 'Provider that answered.' },
  { name: 'x-gateway-cost', description: 'Cost of the request in USD (replies that are not streamed).' },
  { name: 'x-gateway-overhead-ms', description: 'Time the gateway added, in milliseconds.' },
  { name: 'x-gateway-retry-count', description: 'Retries made before this reply.' },
  { name: 'x-gateway-target-index', description: 'Which target of a config answered.' },
  { name: 'x-gateway-upstream-request-id', description: 'The provider’s own request id.' },
  { name: 'x-gateway-guardrails', description: 'Results of the guardrail checks that ran.' },
];

export const ERROR_ORIGIN_HEADER: HeaderSpec = {
  name: 'x-gateway-error-origin',
  description: '`gateway` when the gateway refused the request, `provider` when the provider did.',
};

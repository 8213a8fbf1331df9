import {
  ANALYTICS_BUDGETS_QUERY,
  ANALYTICS_QUERY,
  ANALYTICS_USAGE_QUERY,
  API_KEY_CREATE,
  API_KEY_UPDATE,
  EGRESS_SETTINGS,
  GATEWAY_CONFIG_SCHEMA,
  GUARDRAIL,
  JWT_SETTINGS,
  LOGS_QUERY,
  PROMPT,
  PROMPT_RUN,
  SAVED_CONFIG,
  SSO_SETTINGS,
  VIRTUAL_KEY,
  WORKSPACE_CREATE,
  WORKSPACE_UPDATE,
} from '../control/bodies';
import { type BodySpec, bodySchema, type JsonSchema } from '../control/fields';
import { FUNCTION_GROUPS, OPERATIONS, type Operation, REALTIME_OPERATION } from '../core/operations';
import { ERROR_ORIGIN_HEADER, GATEWAY_REQUEST_HEADERS, GATEWAY_RESPONSE_HEADERS } from './headers';

// The OpenAPI 3.1 document of the gateway's own API, generated from the table of operations and the
// control plane's body descriptions. Model operations keep OpenAI's and Anthropic's formats: the document
// points to their references rather than copying them.

type Json = Record<string, unknown>;

/** Which body description each control-plane operation reads, and whether it creates (required fields). */
const REQUEST_BODIES: Record<string, { spec: BodySpec; creating: boolean }> = {
  'workspaces.create': { spec: WORKSPACE_CREATE, creating: true },
  'workspaces.update': { spec: WORKSPACE_UPDATE, creating: false },
  'api_keys.create': { spec: API_KEY_CREATE, creating: true },
  'api_keys.update': { spec: API_KEY_UPDATE, creating: false },
  'virtual_keys.create': { spec: VIRTUAL_KEY, creating: true },
  'virtual_keys.update': { spec: VIRTUAL_KEY, creating: false },
  'configs.create': { spec: SAVED_CONFIG, creating: true },
  'configs.replace': { spec: SAVED_CONFIG, creating: true },
  'guardrails.create': { spec: GUARDRAIL, creating: true },
  'guardrails.replace': { spec: GUARDRAIL, creating: false },
  'prompts.create': { spec: PROMPT, creating: true },
  'prompts.update': { spec: PROMPT, creating: false },
  'prompts.render': { spec: PROMPT_RUN, creating: true },
  'prompts.completions': { spec: PROMPT_RUN, creating: true },
  'organisation.jwt.put': { spec: JWT_SETTINGS, creating: true },
  'organisation.egress.put': { spec: EGRESS_SETTINGS, creating: true },
  'organisation.sso.put': { spec: SSO_SETTINGS, creating: true },
};

const QUERIES: Record<string, BodySpec> = {
  'logs.list': LOGS_QUERY,
  'analytics.users': ANALYTICS_QUERY,
  'analytics.usage': ANALYTICS_USAGE_QUERY,
  'analytics.budgets': ANALYTICS_BUDGETS_QUERY,
};

// Operations on workspace resources where an organisation admin may name another workspace.
const WORKSPACE_QUERY = /^(virtual_keys|configs|prompts)\.(list|get|update|replace|delete)$/;
const VERSION_QUERY = new Set(['prompts.get', 'prompts.render', 'prompts.completions']);
const LIST_QUERY = new Set(['audit_logs.list']);
// OpenAI takes these as multipart/form-data.
const MULTIPART = new Set([
  'images.edits',
  'images.variations',
  'audio.transcriptions',
  'audio.translations',
  'files.create',
  'videos.create',
]);

const OPENAI_REFERENCE = 'https://platform.openai.com/docs/api-reference';
const ANTHROPIC_REFERENCE: Record<string, string> = {
  'messages.create': 'https://docs.anthropic.com/en/api/messages',
  'messages.count_tokens': 'https://docs.anthropic.com/en/api/messages-count-tokens',
};
const isAnthropic = (op: Pick<Operation, 'name'>) => op.name in ANTHROPIC_REFERENCE;

/** `a virtual key`, not creating -> `VirtualKeyUpdate`. */
function schemaName(spec: BodySpec, creating: boolean): string {
  const name = spec.title
    .replace(/^an? /, '')
    .split(/[\s-]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
  return creating || name.endsWith('Update') ? name : `${name}Update`;
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

function accessText(op: Pick<Operation, 'access'>): string {
  switch (op.access.kind) {
    case 'public':
      return 'Public: no key needed.';
    case 'authenticated':
      return 'Any gateway key or JWT.';
    case 'admin':
      return 'An organisation admin key.';
    case 'scope':
      return `A key or JWT with the scope \`${op.access.scope}\` (an organisation admin key has every scope).`;
  }
}

function parameters(op: Pick<Operation, 'name' | 'path' | 'logged'>): Json[] {
  const list: Json[] = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = QUERIES[op.name];
  if (query) {
    for (const [name, f] of Object.entries(query.fields)) {
      list.push({ name, in: 'query', description: f.description, schema: f.schema });
    }
  }
  if (WORKSPACE_QUERY.test(op.name)) {
    list.push({
      name: 'workspace',
      in: 'query',
      description: 'Workspace slug (organisation admins only; the caller’s own when absent).',
      schema: { type: 'string' },
    });
  }
  if (VERSION_QUERY.has(op.name)) {
    list.push({
      name: 'version',
      in: 'query',
      description: 'Prompt version; the latest when absent.',
      schema: { type: 'integer', minimum: 1 },
    });
  }
  if (LIST_QUERY.has(op.name)) {
    list.push(
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
      { name: 'cursor', in: 'query', schema: { type: 'string' } },
    );
  }
  if (op.name === 'organisation.sso.config') {
    list.push({ name: 'organisation', in: 'query', schema: { type: 'string' } });
  }
  if (op.logged) for (const h of GATEWAY_REQUEST_HEADERS) list.push(ref('parameters', h.name));
  return list;
}

function requestBody(op: Pick<Operation, 'name' | 'method' | 'logged'>): Json | undefined {
  const body = REQUEST_BODIES[op.name];
  if (body) {
    return {
      required: true,
      content: { 'application/json': { schema: ref('schemas', schemaName(body.spec, body.creating)) } },
    };
  }
  if (!op.logged || op.method !== 'POST') return undefined;
  const format = isAnthropic(op) ? 'Anthropic’s' : 'OpenAI’s';
  return {
    required: true,
    description: `${format} request body for this operation: see the operation’s external docs.`,
    content: {
      [MULTIPART.has(op.name) ? 'multipart/form-data' : 'application/json']: { schema: { type: 'object' } },
    },
  };
}

function success(op: Operation): [string, Json] {
  if (op.group === 'dashboard') {
    return ['200', { description: 'The dashboard page or one of its files.', content: { 'text/html': {} } }];
  }
  if (op.logged) {
    const format = isAnthropic(op) ? 'Anthropic’s' : 'OpenAI’s';
    return [
      '200',
      {
        description: `${format} reply for this operation; a server-sent event stream when the request asks for one.`,
        headers: Object.fromEntries(GATEWAY_RESPONSE_HEADERS.map((h) => [h.name, ref('headers', h.name)])),
        content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': {} },
      },
    ];
  }
  const created = op.method === 'POST' && op.name.endsWith('.create');
  const list = op.name.endsWith('.list') || op.name.startsWith('analytics.');
  return [
    created ? '201' : '200',
    {
      description: created ? 'Created.' : 'OK.',
      content: { 'application/json': { schema: list ? ref('schemas', 'List') : { type: 'object' } } },
    },
  ];
}

function operationObject(op: Operation): Json {
  const [status, reply] = success(op);
  const anthropic = isAnthropic(op);
  const body = requestBody(op);
  const params = parameters(op);
  return {
    operationId: op.name,
    tags: [op.group],
    summary: op.name,
    description: accessText(op),
    'x-gateway-access': op.access,
    ...(op.logged
      ? {
          externalDocs: anthropic
            ? { description: 'Anthropic API reference', url: ANTHROPIC_REFERENCE[op.name] }
            : { description: 'OpenAI API reference', url: `${OPENAI_REFERENCE}/${referencePage(op.name)}` },
        }
      : {}),
    security:
      op.access.kind === 'public'
        ? []
        : [{ gatewayApiKey: [] }, { bearer: [] }, ...(anthropic ? [{ anthropicApiKey: [] }] : [])],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: {
      [status]: reply,
      '4XX': ref('responses', anthropic ? 'AnthropicError' : 'Error'),
      '5XX': ref('responses', anthropic ? 'AnthropicError' : 'Error'),
    },
  };
}

/** The page of OpenAI's reference for an operation: `vector_stores.files.create` -> `vector-stores-files`. */
function referencePage(name: string): string {
  const parts = name.split('.');
  const resource = parts.length > 1 ? parts.slice(0, -1) : parts;
  return resource.join('-').replaceAll('_', '-');
}

function realtimeOperation(): Json {
  const op = REALTIME_OPERATION;
  return {
    operationId: op.name,
    tags: ['realtime'],
    summary: op.name,
    description: `A WebSocket: send \`Upgrade: websocket\`. ${accessText(op)}`,
    'x-gateway-access': op.access,
    externalDocs: { description: 'OpenAI API reference', url: `${OPENAI_REFERENCE}/realtime` },
    security: [{ gatewayApiKey: [] }, { bearer: [] }],
    parameters: [{ name: 'model', in: 'query', schema: { type: 'string' } }],
    responses: {
      '101': { description: 'Switching protocols: OpenAI’s realtime events follow.' },
      '4XX': ref('responses', 'Error'),
    },
  };
}

const OPENAI_ERROR: JsonSchema = {
  type: 'object',
  description: 'OpenAI’s error shape, which every gateway and provider error takes.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'code', 'param'],
      properties: {
        message: { type: 'string', description: 'What went wrong and what to change.' },
        type: { type: 'string', description: 'OpenAI’s error type, such as `invalid_request_error`.' },
        code: {
          type: ['string', 'null'],
          description: 'Machine-readable reason, such as `budget_exceeded`.',
        },
        param: {
          type: ['string', 'null'],
          description: 'The field, query parameter or header to change.',
        },
      },
    },
  },
};

const ANTHROPIC_ERROR: JsonSchema = {
  type: 'object',
  description: 'Anthropic’s error shape, on /v1/messages.',
  required: ['type', 'error'],
  properties: {
    type: { const: 'error' },
    error: {
      type: 'object',
      required: ['type', 'message'],
      properties: { type: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

/** The whole document. Built once per container: it only changes with the code. */
export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    paths[op.path] ??= {};
    (paths[op.path] as Json)[op.method.toLowerCase()] = operationObject(op);
  }
  paths[REALTIME_OPERATION.path] = { get: realtimeOperation() };

  const schemas: Record<string, JsonSchema> = {
    Error: OPENAI_ERROR,
    AnthropicError: ANTHROPIC_ERROR,
    GatewayConfig: GATEWAY_CONFIG_SCHEMA,
    List: {
      type: 'object',
      required: ['object', 'data', 'next_cursor'],
      properties: {
        object: { const: 'list' },
        data: { type: 'array', items: { type: 'object' } },
        next_cursor: { type: ['string', 'null'] },
      },
    },
  };
  for (const { spec, creating } of Object.values(REQUEST_BODIES)) {
    schemas[schemaName(spec, creating)] = bodySchema(spec, { creating });
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'AWS LLM Gateway',
      version: '1',
      description:
        'The gateway’s own API: the control plane, the gateway headers and error shapes. Model operations keep OpenAI’s (and, on /v1/messages, Anthropic’s) request and reply formats; each links to its reference.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://localhost:8787', description: 'The local server (npm start)' }],
    tags: [
      ...Object.entries(FUNCTION_GROUPS).map(([name, g]) => ({ name, description: g.description })),
      { name: 'realtime', description: 'The realtime API over a WebSocket' },
    ],
    paths,
    components: {
      schemas,
      parameters: Object.fromEntries(
        GATEWAY_REQUEST_HEADERS.map((h) => [
          h.name,
          { name: h.name, in: 'header', description: h.description, schema: { type: 'string' } },
        ]),
      ),
      headers: Object.fromEntries(
        [...GATEWAY_RESPONSE_HEADERS, ERROR_ORIGIN_HEADER].map((h) => [
          h.name,
          { description: h.description, schema: { type: 'string' } },
        ]),
      ),
      responses: {
        Error: {
          description: 'An error in OpenAI’s shape.',
          headers: { [ERROR_ORIGIN_HEADER.name]: ref('headers', ERROR_ORIGIN_HEADER.name) },
          content: { 'application/json': { schema: ref('schemas', 'Error') } },
        },
        AnthropicError: {
          description: 'An error in Anthropic’s shape.',
          headers: { [ERROR_ORIGIN_HEADER.name]: ref('headers', ERROR_ORIGIN_HEADER.name) },
          content: { 'application/json': { schema: ref('schemas', 'AnthropicError') } },
        },
      },
      securitySchemes: {
        gatewayApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-gateway-api-key',
          description: 'A gateway API key or JWT, raw (without `Bearer `).',
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            '`Authorization: Bearer <gateway key>` when x-gateway-api-key is absent; otherwise Authorization carries the provider’s key.',
        },
        anthropicApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'The gateway key, as Anthropic clients send their key (on /v1/messages).',
        },
      },
    },
  };
}

let built: Json | undefined;

/** The document, built on first use. */
export function openApiDocument(): Json {
  built ??= buildOpenApiDocument();
  return built;
}

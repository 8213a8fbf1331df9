// The single table of operations. Plain data: imported by lib/ (functions, URLs, routes) and by
// local/ (which handler serves which path), and by the handlers themselves (routing and scopes).

export const SCOPES = [
  'completions.write',
  'logs.view',
  'virtual_keys.read',
  'virtual_keys.write',
  'prompts.read',
  'prompts.write',
  'configs.read',
  'configs.write',
  'api_keys.read',
  'api_keys.write',
] as const;
export type Scope = (typeof SCOPES)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an operation: anyone; any authenticated caller; a caller holding `scope`; or only an
 * organisation admin key.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'authenticated' }
  | { kind: 'scope'; scope: Scope }
  | { kind: 'admin' };

/** One Lambda function: the operations it serves share its bundle, memory and timeout. */
export interface FunctionGroup {
  /** Source file of the handler, relative to the repository root. */
  entry: string;
  memoryMb: number;
  timeoutSeconds: number;
  description: string;
}

export const FUNCTION_GROUPS = {
  chat: {
    entry: 'functions/handlers/chat.ts',
    // 3.7 ms of CPU per request (npm run bench) takes about 13 ms at 512 MB: see docs/scaling.md.
    memoryMb: 512,
    timeoutSeconds: 900,
    description: 'Model operations: chat completions, Anthropic messages',
  },
  control: {
    entry: 'functions/handlers/control.ts',
    memoryMb: 512,
    timeoutSeconds: 30,
    description:
      'Control plane: organisation, workspaces, API keys, virtual keys, configs, guardrails, JWT key sets, audit logs, health',
  },
  logs: {
    entry: 'functions/handlers/logs.ts',
    memoryMb: 512,
    timeoutSeconds: 30,
    description: 'Usage logs and analytics',
  },
  responses: {
    entry: 'functions/handlers/responses.ts',
    memoryMb: 1024,
    timeoutSeconds: 900,
    description: 'Model operations: the Responses API',
  },
  media: {
    entry: 'functions/handlers/media.ts',
    memoryMb: 1024,
    timeoutSeconds: 900,
    description: 'Model operations: images, video, audio',
  },
  files: {
    entry: 'functions/handlers/files.ts',
    memoryMb: 1024,
    timeoutSeconds: 900,
    description: 'Model operations: files, vector stores, fine-tuning, models, embeddings',
  },
  prompts: {
    entry: 'functions/handlers/prompts.ts',
    memoryMb: 1024,
    timeoutSeconds: 900,
    description: 'Prompt library: templates, versions, rendering and prompt completions',
  },
  dashboard: {
    entry: 'functions/handlers/dashboard.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    description: 'Web dashboard: its static files (its data come from the logs and control APIs)',
  },
} as const satisfies Record<string, FunctionGroup>;
export type FunctionGroupName = keyof typeof FUNCTION_GROUPS;

/**
 * The realtime API's functions, which API Gateway's WebSocket routes invoke rather than a function URL:
 * the three routes of `/v1/realtime`, and the relay that owns one session's upstream socket. The relay's
 * timeout is Lambda's maximum; it closes the session before (GATEWAY_REALTIME_SESSION_LIMIT_MS).
 */
export const REALTIME_FUNCTIONS = {
  realtimeSocket: {
    entry: 'functions/handlers/realtime-socket.ts',
    memoryMb: 512,
    timeoutSeconds: 29,
    description: 'Realtime WebSocket routes: $connect (auth, routing, budget), $default, $disconnect',
  },
  realtimeRelay: {
    entry: 'functions/handlers/realtime-relay.ts',
    // Mostly waiting on two sockets: the smallest size that parses audio events without lag.
    memoryMb: 256,
    timeoutSeconds: 900,
    description: 'Realtime relay: owns the upstream socket of one session for its whole life',
  },
} as const satisfies Record<string, FunctionGroup>;
export type RealtimeFunctionName = keyof typeof REALTIME_FUNCTIONS;

export interface Operation {
  /** Stable name, recorded as `operation` in log entries. */
  name: string;
  method: HttpMethod;
  /** Path template; `{name}` matches one path segment. */
  path: string;
  group: FunctionGroupName;
  access: Access;
  /** Writes a usage log entry (every model operation does). */
  logged: boolean;
}

const scope = <S extends Scope>(s: S) => ({ kind: 'scope', scope: s }) as const;
const admin = { kind: 'admin' } as const;
const open = { kind: 'public' } as const;
const anyCaller = { kind: 'authenticated' } as const;

/**
 * A model operation of the OpenAI API: completions.write, logged. `method path` is written exactly as
 * the OpenAI API reference writes it, with `{name}` for a path segment.
 */
const model = <G extends FunctionGroupName, N extends string>(
  group: G,
  name: N,
  route: `${HttpMethod} /v1/${string}`,
) => {
  const [method, path] = route.split(' ') as [HttpMethod, string];
  return { name, method, path, group, access: scope('completions.write'), logged: true as const };
};

/** An operation that writes no usage log entry (the control plane, logs, prompts, the dashboard). */
const unlogged = <G extends FunctionGroupName, N extends string, A extends Access>(
  group: G,
  name: N,
  route: `${HttpMethod} /${string}`,
  access: A,
) => {
  const [method, path] = route.split(' ') as [HttpMethod, string];
  return { name, method, path, group, access, logged: false as const };
};

export const OPERATIONS = [
  unlogged('control', 'health', 'GET /v1/health', open),
  // This API's OpenAPI document, generated from this table and the control plane's body descriptions.
  unlogged('control', 'openapi', 'GET /v1/openapi.json', open),

  model('chat', 'chat.completions', 'POST /v1/chat/completions'),
  // Anthropic's Messages API, for Claude Code and the Anthropic SDKs (base URL: the gateway root).
  model('chat', 'messages.create', 'POST /v1/messages'),
  model('chat', 'messages.count_tokens', 'POST /v1/messages/count_tokens'),

  unlogged('control', 'organisation.get', 'GET /v1/organisation', anyCaller),
  unlogged('control', 'workspaces.create', 'POST /v1/workspaces', admin),
  unlogged('control', 'workspaces.list', 'GET /v1/workspaces', admin),
  unlogged('control', 'workspaces.get', 'GET /v1/workspaces/{slug}', anyCaller),
  unlogged('control', 'workspaces.update', 'PATCH /v1/workspaces/{slug}', admin),
  unlogged('control', 'api_keys.create', 'POST /v1/api-keys', scope('api_keys.write')),
  unlogged('control', 'api_keys.list', 'GET /v1/api-keys', scope('api_keys.read')),
  unlogged('control', 'api_keys.update', 'PATCH /v1/api-keys/{id}', scope('api_keys.write')),
  unlogged('control', 'api_keys.delete', 'DELETE /v1/api-keys/{id}', scope('api_keys.write')),

  unlogged('control', 'virtual_keys.create', 'POST /v1/virtual-keys', scope('virtual_keys.write')),
  unlogged('control', 'virtual_keys.list', 'GET /v1/virtual-keys', scope('virtual_keys.read')),
  unlogged('control', 'virtual_keys.get', 'GET /v1/virtual-keys/{slug}', scope('virtual_keys.read')),
  unlogged('control', 'virtual_keys.update', 'PATCH /v1/virtual-keys/{slug}', scope('virtual_keys.write')),
  unlogged('control', 'virtual_keys.delete', 'DELETE /v1/virtual-keys/{slug}', scope('virtual_keys.write')),
  unlogged('control', 'configs.create', 'POST /v1/configs', scope('configs.write')),
  unlogged('control', 'configs.list', 'GET /v1/configs', scope('configs.read')),
  unlogged('control', 'configs.get', 'GET /v1/configs/{id}', scope('configs.read')),
  unlogged('control', 'configs.replace', 'PUT /v1/configs/{id}', scope('configs.write')),
  unlogged('control', 'configs.delete', 'DELETE /v1/configs/{id}', scope('configs.write')),
  unlogged('control', 'guardrails.create', 'POST /v1/guardrails', scope('configs.write')),
  unlogged('control', 'guardrails.list', 'GET /v1/guardrails', scope('configs.read')),
  unlogged('control', 'guardrails.get', 'GET /v1/guardrails/{id}', scope('configs.read')),
  unlogged('control', 'guardrails.replace', 'PUT /v1/guardrails/{id}', scope('configs.write')),
  unlogged('control', 'guardrails.delete', 'DELETE /v1/guardrails/{id}', scope('configs.write')),
  unlogged('control', 'organisation.jwt.put', 'PUT /v1/organisation/jwt', admin),
  unlogged('control', 'organisation.jwt.get', 'GET /v1/organisation/jwt', admin),
  unlogged('control', 'organisation.jwt.delete', 'DELETE /v1/organisation/jwt', admin),
  unlogged('control', 'organisation.egress.put', 'PUT /v1/organisation/egress', admin),
  unlogged('control', 'organisation.egress.get', 'GET /v1/organisation/egress', admin),
  unlogged('control', 'organisation.sso.put', 'PUT /v1/organisation/sso', admin),
  unlogged('control', 'organisation.sso.get', 'GET /v1/organisation/sso', admin),
  unlogged('control', 'organisation.sso.delete', 'DELETE /v1/organisation/sso', admin),
  // The sign-in page reads it before anyone is signed in: issuer and public client id only.
  unlogged('control', 'organisation.sso.config', 'GET /v1/organisation/sso/config', open),
  unlogged('control', 'audit_logs.list', 'GET /v1/audit-logs', admin),

  unlogged('logs', 'logs.list', 'GET /v1/logs', scope('logs.view')),
  unlogged('logs', 'logs.get', 'GET /v1/logs/{id}', scope('logs.view')),
  unlogged('logs', 'analytics.users', 'GET /v1/analytics/users', scope('logs.view')),
  unlogged('logs', 'analytics.usage', 'GET /v1/analytics/usage', scope('logs.view')),
  unlogged('logs', 'analytics.budgets', 'GET /v1/analytics/budgets', scope('logs.view')),

  model('responses', 'responses.create', 'POST /v1/responses'),
  model('responses', 'responses.get', 'GET /v1/responses/{response_id}'),
  model('responses', 'responses.delete', 'DELETE /v1/responses/{response_id}'),
  model('responses', 'responses.input_items', 'GET /v1/responses/{response_id}/input_items'),
  model('responses', 'responses.cancel', 'POST /v1/responses/{response_id}/cancel'),

  model('media', 'images.generations', 'POST /v1/images/generations'),
  model('media', 'images.edits', 'POST /v1/images/edits'),
  model('media', 'images.variations', 'POST /v1/images/variations'),
  model('media', 'videos.create', 'POST /v1/videos'),
  model('media', 'videos.list', 'GET /v1/videos'),
  model('media', 'videos.get', 'GET /v1/videos/{video_id}'),
  model('media', 'videos.delete', 'DELETE /v1/videos/{video_id}'),
  model('media', 'videos.content', 'GET /v1/videos/{video_id}/content'),
  model('media', 'audio.transcriptions', 'POST /v1/audio/transcriptions'),
  model('media', 'audio.translations', 'POST /v1/audio/translations'),
  model('media', 'audio.speech', 'POST /v1/audio/speech'),

  model('files', 'files.create', 'POST /v1/files'),
  model('files', 'files.list', 'GET /v1/files'),
  model('files', 'files.get', 'GET /v1/files/{file_id}'),
  model('files', 'files.delete', 'DELETE /v1/files/{file_id}'),
  model('files', 'files.content', 'GET /v1/files/{file_id}/content'),
  model('files', 'vector_stores.create', 'POST /v1/vector_stores'),
  model('files', 'vector_stores.list', 'GET /v1/vector_stores'),
  model('files', 'vector_stores.get', 'GET /v1/vector_stores/{vector_store_id}'),
  model('files', 'vector_stores.update', 'POST /v1/vector_stores/{vector_store_id}'),
  model('files', 'vector_stores.delete', 'DELETE /v1/vector_stores/{vector_store_id}'),
  model('files', 'vector_stores.search', 'POST /v1/vector_stores/{vector_store_id}/search'),
  model('files', 'vector_stores.files.create', 'POST /v1/vector_stores/{vector_store_id}/files'),
  model('files', 'vector_stores.files.list', 'GET /v1/vector_stores/{vector_store_id}/files'),
  model('files', 'vector_stores.files.get', 'GET /v1/vector_stores/{vector_store_id}/files/{file_id}'),
  model('files', 'vector_stores.files.delete', 'DELETE /v1/vector_stores/{vector_store_id}/files/{file_id}'),
  model('files', 'fine_tuning.jobs.create', 'POST /v1/fine_tuning/jobs'),
  model('files', 'fine_tuning.jobs.list', 'GET /v1/fine_tuning/jobs'),
  model('files', 'fine_tuning.jobs.get', 'GET /v1/fine_tuning/jobs/{fine_tuning_job_id}'),
  model('files', 'fine_tuning.jobs.cancel', 'POST /v1/fine_tuning/jobs/{fine_tuning_job_id}/cancel'),
  model('files', 'fine_tuning.jobs.events', 'GET /v1/fine_tuning/jobs/{fine_tuning_job_id}/events'),
  model('files', 'fine_tuning.jobs.checkpoints', 'GET /v1/fine_tuning/jobs/{fine_tuning_job_id}/checkpoints'),
  model('files', 'models.list', 'GET /v1/models'),
  model('files', 'models.get', 'GET /v1/models/{model}'),
  model('files', 'embeddings.create', 'POST /v1/embeddings'),

  unlogged('prompts', 'prompts.create', 'POST /v1/prompts', scope('prompts.write')),
  unlogged('prompts', 'prompts.list', 'GET /v1/prompts', scope('prompts.read')),
  unlogged('prompts', 'prompts.get', 'GET /v1/prompts/{id}', scope('prompts.read')),
  unlogged('prompts', 'prompts.update', 'PUT /v1/prompts/{id}', scope('prompts.write')),
  unlogged('prompts', 'prompts.delete', 'DELETE /v1/prompts/{id}', scope('prompts.write')),
  unlogged('prompts', 'prompts.render', 'POST /v1/prompts/{id}/render', scope('prompts.read')),
  model('prompts', 'prompts.completions', 'POST /v1/prompts/{id}/completions'),

  // The page and its files are public: what it shows comes from the API, with the key signed in.
  unlogged('dashboard', 'dashboard.page', 'GET /dashboard', open),
  unlogged('dashboard', 'dashboard.asset', 'GET /dashboard/{asset}', open),
] as const satisfies readonly Operation[];

/** One row of the table, with its literal name, group, access and logged flag. */
export type OperationEntry = (typeof OPERATIONS)[number];
/** Every operation's name: a dispatch table keyed by anything else does not compile. */
export type OperationName = OperationEntry['name'];
/** The operations one function group serves. */
export type OperationNameOf<G extends FunctionGroupName> = Extract<OperationEntry, { group: G }>['name'];

/** `GET /v1/realtime` upgraded to a WebSocket: a model operation, logged once per session. */
export const REALTIME_OPERATION = {
  name: 'realtime',
  method: 'GET',
  path: '/v1/realtime',
  access: scope('completions.write'),
  logged: true,
} as const satisfies Omit<Operation, 'group'>;

/** Operations of one function group, for its handler's router and for the stack's routes. */
export function operationsOf(group: FunctionGroupName): Operation[] {
  return (OPERATIONS as readonly Operation[]).filter((op) => op.group === group);
}

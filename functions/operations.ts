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
    memoryMb: 1024,
    timeoutSeconds: 900,
    description: 'Model operations: chat completions',
  },
  control: {
    entry: 'functions/handlers/control.ts',
    memoryMb: 512,
    timeoutSeconds: 30,
    description:
      'Control plane: organisation, workspaces, API keys, virtual keys, configs, JWT key sets, audit logs, health',
  },
  logs: {
    entry: 'functions/handlers/logs.ts',
    memoryMb: 512,
    timeoutSeconds: 30,
    description: 'Usage logs and analytics',
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

const scope = (s: Scope): Access => ({ kind: 'scope', scope: s });
const admin: Access = { kind: 'admin' };
const open: Access = { kind: 'public' };
const anyCaller: Access = { kind: 'authenticated' };

export const OPERATIONS: readonly Operation[] = [
  { name: 'health', method: 'GET', path: '/v1/health', group: 'control', access: open, logged: false },

  {
    name: 'chat.completions',
    method: 'POST',
    path: '/v1/chat/completions',
    group: 'chat',
    access: scope('completions.write'),
    logged: true,
  },

  {
    name: 'organisation.get',
    method: 'GET',
    path: '/v1/organisation',
    group: 'control',
    access: anyCaller,
    logged: false,
  },
  {
    name: 'workspaces.create',
    method: 'POST',
    path: '/v1/workspaces',
    group: 'control',
    access: admin,
    logged: false,
  },
  {
    name: 'workspaces.list',
    method: 'GET',
    path: '/v1/workspaces',
    group: 'control',
    access: admin,
    logged: false,
  },
  {
    name: 'api_keys.create',
    method: 'POST',
    path: '/v1/api-keys',
    group: 'control',
    access: scope('api_keys.write'),
    logged: false,
  },
  {
    name: 'api_keys.list',
    method: 'GET',
    path: '/v1/api-keys',
    group: 'control',
    access: scope('api_keys.read'),
    logged: false,
  },
  {
    name: 'api_keys.delete',
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    group: 'control',
    access: scope('api_keys.write'),
    logged: false,
  },

  {
    name: 'virtual_keys.create',
    method: 'POST',
    path: '/v1/virtual-keys',
    group: 'control',
    access: scope('virtual_keys.write'),
    logged: false,
  },
  {
    name: 'virtual_keys.list',
    method: 'GET',
    path: '/v1/virtual-keys',
    group: 'control',
    access: scope('virtual_keys.read'),
    logged: false,
  },
  {
    name: 'virtual_keys.get',
    method: 'GET',
    path: '/v1/virtual-keys/{slug}',
    group: 'control',
    access: scope('virtual_keys.read'),
    logged: false,
  },
  {
    name: 'virtual_keys.update',
    method: 'PATCH',
    path: '/v1/virtual-keys/{slug}',
    group: 'control',
    access: scope('virtual_keys.write'),
    logged: false,
  },
  {
    name: 'virtual_keys.delete',
    method: 'DELETE',
    path: '/v1/virtual-keys/{slug}',
    group: 'control',
    access: scope('virtual_keys.write'),
    logged: false,
  },
  {
    name: 'configs.create',
    method: 'POST',
    path: '/v1/configs',
    group: 'control',
    access: scope('configs.write'),
    logged: false,
  },
  {
    name: 'configs.list',
    method: 'GET',
    path: '/v1/configs',
    group: 'control',
    access: scope('configs.read'),
    logged: false,
  },
  {
    name: 'configs.get',
    method: 'GET',
    path: '/v1/configs/{id}',
    group: 'control',
    access: scope('configs.read'),
    logged: false,
  },
  {
    name: 'configs.replace',
    method: 'PUT',
    path: '/v1/configs/{id}',
    group: 'control',
    access: scope('configs.write'),
    logged: false,
  },
  {
    name: 'configs.delete',
    method: 'DELETE',
    path: '/v1/configs/{id}',
    group: 'control',
    access: scope('configs.write'),
    logged: false,
  },
  {
    name: 'organisation.jwt.put',
    method: 'PUT',
    path: '/v1/organisation/jwt',
    group: 'control',
    access: admin,
    logged: false,
  },
  {
    name: 'organisation.jwt.get',
    method: 'GET',
    path: '/v1/organisation/jwt',
    group: 'control',
    access: admin,
    logged: false,
  },
  {
    name: 'organisation.jwt.delete',
    method: 'DELETE',
    path: '/v1/organisation/jwt',
    group: 'control',
    access: admin,
    logged: false,
  },
  {
    name: 'audit_logs.list',
    method: 'GET',
    path: '/v1/audit-logs',
    group: 'control',
    access: admin,
    logged: false,
  },

  {
    name: 'logs.list',
    method: 'GET',
    path: '/v1/logs',
    group: 'logs',
    access: scope('logs.view'),
    logged: false,
  },
  {
    name: 'logs.get',
    method: 'GET',
    path: '/v1/logs/{id}',
    group: 'logs',
    access: scope('logs.view'),
    logged: false,
  },
  {
    name: 'analytics.users',
    method: 'GET',
    path: '/v1/analytics/users',
    group: 'logs',
    access: scope('logs.view'),
    logged: false,
  },
];

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
  return OPERATIONS.filter((op) => op.group === group);
}

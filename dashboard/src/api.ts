// Every call goes through the public control-plane API with the signed-in key: the dashboard can do
// nothing that the key could not do with curl.

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface Attempt {
  target_index: string;
  provider: string | null;
  virtual_key: string | null;
  status: number | null;
  latency_ms: number;
  /** The backoff waited before this attempt (0 for a first try); absent in entries written before it. */
  wait_ms?: number;
  error: string | null;
}

export interface LogEntry {
  id: string;
  trace_id: string;
  timestamp: string;
  workspace: string;
  auth: { type: string; key_id?: string; subject?: string };
  user: string | null;
  metadata: Record<string, string>;
  operation: string;
  provider: string | null;
  model: string | null;
  virtual_key: string | null;
  status: number;
  stream: boolean;
  latency_ms: number;
  upstream_latency_ms: number | null;
  first_chunk_ms?: number | null;
  usage: Usage | null;
  cost: number | null;
  request: unknown;
  response: unknown;
  error: { message: string; type: string; code: string | null; origin: string } | null;
  attempts?: Attempt[];
  body_ref?: string;
}

export type Dimension = 'user' | 'model' | 'provider' | 'virtual_key' | 'api_key' | 'status_class';

export interface UsageRow {
  bucket_start: string;
  group_by?: Dimension;
  group?: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  errors: number;
  latency_ms: { mean: number | null; p50: number | null; p95: number | null };
  latency_histogram: number[];
}

export interface Spend {
  limit: number;
  spent: number;
  remaining: number;
  period_start: string | null;
}

export interface BudgetsReply {
  workspace: { slug: string; budget: Spend | null };
  api_keys: Array<{ id: string; name: string; budget: Spend }>;
  virtual_keys: Array<{ slug: string; name: string; budget_limit: number; spent: number; remaining: number }>;
}

/** What the signed-in key or token may do: `caller` of `GET /v1/organisation`. */
export interface Caller {
  type: 'api_key' | 'jwt';
  workspace: string;
  organisation_admin: boolean;
  scopes: string[];
}

/** Whether the caller holds a scope, or is an organisation admin (`'admin'`). */
export function can(caller: Caller, need: string): boolean {
  return caller.organisation_admin || (need !== 'admin' && caller.scopes.includes(need));
}

export interface ListReply<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field the API named as wrong, when it named one. */
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

interface ErrorBody {
  error?: { message?: string; param?: string | null; code?: string | null };
}

export type Query = Record<string, string | undefined>;

export class GatewayApi {
  constructor(
    /** The gateway's `/v1` base URL, without a trailing slash. */
    readonly base: string,
    private readonly key: string,
  ) {}

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.send<T>('GET', path, undefined, query);
  }

  /** One call of the public API; a refusal becomes an ApiError with the API's own message. */
  async send<T>(
    method: string,
    path: string,
    body?: unknown,
    query: Query = {},
    headers: Record<string, string> = {},
  ): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, v);
    const qs = params.toString();
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}${qs ? `?${qs}` : ''}`, {
        method,
        headers: {
          'x-gateway-api-key': this.key,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, `Cannot reach the gateway at ${this.base}.`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as ErrorBody | undefined)?.error;
      throw new ApiError(
        res.status,
        error?.message ?? `The gateway answered ${res.status}.`,
        error?.param ?? null,
        error?.code ?? null,
      );
    }
    return parsed as T;
  }

  logs(query: Query): Promise<ListReply<LogEntry>> {
    return this.get('/logs', query);
  }

  log(id: string): Promise<LogEntry> {
    return this.get(`/logs/${encodeURIComponent(id)}`);
  }

  /** Usage aggregates over time (`GET /v1/analytics/usage`), overall or per value of `group_by`. */
  usage(query: Query): Promise<ListReply<UsageRow>> {
    return this.get('/analytics/usage', query);
  }

  /** The budgets of the key's workspace, its API keys and its virtual keys. */
  budgets(): Promise<BudgetsReply> {
    return this.get('/analytics/budgets');
  }
}

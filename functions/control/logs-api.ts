import { badRequest, notFound } from '../core/errors';
import { type CallerState, jsonResult, listResult } from '../core/http';
import { latencyQuantile } from '../core/latency-histogram';
import type { Principal } from '../core/principal';
import { budgetStatus, candidatePeriods, periodStart, spendView } from '../gateway/budget';
import type { OperationTable } from '../gateway/dispatch';
import { apiKeyHolderKey, limitsOf, readPolicy, userHolderKey, workspaceHolderKey } from '../gateway/policy';
import { UserUsage, type UserUsageOrder } from '../gateway/user-usage';
import { AnalyticsStore, DIMENSIONS, type Dimension, type Interval } from '../store/analytics-store';
import { ControlStore } from '../store/control-store';
import { CounterStore } from '../store/counter-store';
import { CursorError } from '../store/dynamo';
import { type LogQuery, LogStore, type LogWorkspace, UnindexedFilterError } from '../store/log-store';
import { parseLimit, parseTime } from './list-query';

const logs = new LogStore();
const users = new UserUsage();
const control = new ControlStore();
const aggregates = new AnalyticsStore();
const counters = new CounterStore();
const DEFAULT_ANALYTICS_DAYS = 30;
// The widest range one read may cover, so that a reply stays a few hundred buckets per group.
const MAX_RANGE_DAYS: Record<Interval, number> = { hour: 31, day: 400 };

/** Workspace keys and JWTs read their own workspace; an organisation admin reads all, or the one named. */
function readableWorkspace(principal: Principal, requested: string | undefined): string | undefined {
  if (principal.isOrganisationAdmin) return requested || undefined;
  return principal.workspace;
}

export function parseLogQuery(principal: Principal, q: Record<string, string | undefined>): LogQuery {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    if (k.startsWith('metadata.') && k.length > 9 && v !== undefined) metadata[k.slice(9)] = v;
  }
  const limit = parseLimit(q.limit);
  let status: number | undefined;
  if (q.status !== undefined) {
    status = Number(q.status);
    if (!Number.isInteger(status)) throw badRequest('status must be an HTTP status code.', 'status');
  }
  return {
    organisationId: principal.organisationId,
    workspace: readableWorkspace(principal, q.workspace),
    user: q.user,
    virtualKey: q.virtual_key,
    apiKey: q.api_key,
    traceId: q.trace_id,
    model: q.model,
    status,
    metadata,
    fromMs: parseTime(q.from, 'from'),
    toMs: parseTime(q.to, 'to'),
    limit,
    cursor: q.cursor,
  };
}

const caller = (state: CallerState) => state.principal;

const filtered = (query: LogQuery) =>
  [query.user, query.virtualKey, query.apiKey, query.traceId, query.model, query.status].some(
    (v) => v !== undefined,
  ) || Object.keys(query.metadata).length > 0;

/** The workspaces a filtered read covers, each with the metadata keys it indexes. */
async function workspacesOf(query: LogQuery): Promise<LogWorkspace[]> {
  const records =
    query.workspace !== undefined
      ? [await control.getWorkspace(query.organisationId, query.workspace)].filter((w) => w !== undefined)
      : await control.listWorkspaces(query.organisationId);
  const found = records.map((w) => ({ slug: w.slug, indexedMetadata: w.indexed_metadata ?? [] }));
  // A workspace without a record (the default before its first change) indexes no metadata.
  if (query.workspace !== undefined && found.length === 0)
    found.push({ slug: query.workspace, indexedMetadata: [] });
  return found;
}

export const logsOperations = {
  'logs.list': async (event, state) => {
    const query = parseLogQuery(caller(state), event.queryStringParameters ?? {});
    if (filtered(query)) query.workspaces = await workspacesOf(query);
    try {
      const page = await logs.list(query);
      return listResult(page.data, page.nextCursor);
    } catch (error) {
      if (error instanceof CursorError)
        throw badRequest('cursor is not one this list handed out.', 'cursor', 'invalid_cursor');
      if (error instanceof UnindexedFilterError)
        throw badRequest(error.message, 'metadata', 'unindexed_filter');
      throw error;
    }
  },

  'logs.get': async (_event, state) => {
    const principal = caller(state);
    const id = state.params.id ?? '';
    const entry = await logs.get(principal.organisationId, readableWorkspace(principal, undefined), id);
    if (!entry) throw notFound(`No log entry with id "${id}".`);
    return jsonResult(200, entry);
  },

  'analytics.users': async (event, state) => {
    const principal = caller(state);
    const q = event.queryStringParameters ?? {};
    const toMs = parseTime(q.to, 'to') ?? Date.now();
    const fromMs = parseTime(q.from, 'from') ?? toMs - DEFAULT_ANALYTICS_DAYS * 86_400_000;
    if (fromMs > toMs) throw badRequest('from must not be after to.', 'from');
    const order = (q.order ?? 'cost') as UserUsageOrder;
    if (order !== 'cost' && order !== 'requests')
      throw badRequest('order must be "cost" or "requests".', 'order');
    const workspace = readableWorkspace(principal, q.workspace);
    const workspaces =
      workspace !== undefined
        ? [workspace]
        : (await control.listWorkspaces(principal.organisationId)).map((w) => w.slug);
    const rows = await users.report(principal.organisationId, workspaces, fromMs, toMs, order);
    // Budgets are per workspace: they are shown when the report covers exactly one.
    const [only] = workspaces;
    if (workspaces.length !== 1 || only === undefined) return listResult(rows, null);
    const record = await control.getWorkspace(principal.organisationId, only);
    const limits = limitsOf(readPolicy(record?.policy_json)?.user_limits);
    const withBudgets = await Promise.all(
      rows.map(async (row) => {
        const view = await spendView(userHolderKey(principal.organisationId, only, row.user), limits);
        return view
          ? {
              ...row,
              budget_limit: view.limit,
              spent: view.spent,
              remaining: view.remaining,
              period_start: view.period_start,
            }
          : row;
      }),
    );
    return listResult(withBudgets, null);
  },

  'analytics.usage': async (event, state) => {
    const principal = caller(state);
    const q = event.queryStringParameters ?? {};
    const interval = (q.interval ?? 'hour') as Interval;
    if (interval !== 'hour' && interval !== 'day')
      throw badRequest('interval must be "hour" or "day".', 'interval');
    const groupBy = q.group_by === undefined || q.group_by === '' ? undefined : (q.group_by as Dimension);
    if (groupBy !== undefined && !DIMENSIONS.includes(groupBy))
      throw badRequest(`group_by must be one of ${DIMENSIONS.join(', ')}.`, 'group_by');
    const toMs = parseTime(q.to, 'to') ?? Date.now();
    const fromMs =
      parseTime(q.from, 'from') ?? toMs - (interval === 'hour' ? 1 : DEFAULT_ANALYTICS_DAYS) * 86_400_000;
    if (fromMs > toMs) throw badRequest('from must not be after to.', 'from');
    if (toMs - fromMs > MAX_RANGE_DAYS[interval] * 86_400_000)
      throw badRequest(
        `A range of ${interval}s covers at most ${MAX_RANGE_DAYS[interval]} days; use interval=day for longer.`,
        'from',
      );
    const workspace = readableWorkspace(principal, q.workspace);
    const workspaces =
      workspace !== undefined
        ? [workspace]
        : (await control.listWorkspaces(principal.organisationId)).map((w) => w.slug);
    const buckets = await aggregates.read({
      organisationId: principal.organisationId,
      workspaces,
      interval,
      groupBy,
      fromMs,
      toMs,
    });
    const rows = buckets.map((b) => ({
      bucket_start: new Date(
        interval === 'hour' ? `${b.bucket}:00:00Z` : `${b.bucket}T00:00:00Z`,
      ).toISOString(),
      ...(groupBy ? { group_by: groupBy, group: b.group } : {}),
      requests: b.requests,
      prompt_tokens: b.prompt_tokens,
      completion_tokens: b.completion_tokens,
      total_tokens: b.prompt_tokens + b.completion_tokens,
      cost: Math.round(b.cost * 1e12) / 1e12,
      errors: b.errors,
      latency_ms: {
        mean: b.requests ? Math.round((b.latency_sum_ms / b.requests) * 100) / 100 : null,
        p50: latencyQuantile(b.histogram, 0.5),
        p95: latencyQuantile(b.histogram, 0.95),
      },
      // Counts per latency bucket (bounds in LATENCY_BOUNDS_MS, README): buckets merge into any range's quantiles.
      latency_histogram: b.histogram,
    }));
    return listResult(rows, null);
  },

  'analytics.budgets': async (event, state) => {
    const principal = caller(state);
    const slug = readableWorkspace(principal, event.queryStringParameters?.workspace) ?? principal.workspace;
    const org = principal.organisationId;
    const [record, keys, virtualKeys] = await Promise.all([
      control.getWorkspace(org, slug),
      control.listApiKeys(org),
      control.listVirtualKeys(org, slug),
    ]);
    const workspaceBudget = await spendView(
      workspaceHolderKey(org, slug),
      limitsOf(readPolicy(record?.policy_json)),
    );
    const apiKeys = await Promise.all(
      keys
        .filter((k) => k.workspace === slug)
        .map(async (k) => ({
          id: k.id,
          name: k.name,
          budget: await spendView(apiKeyHolderKey(k.id), limitsOf(readPolicy(k.policy_json))),
        })),
    );
    const periods = candidatePeriods();
    const vks = await Promise.all(
      virtualKeys.map(async (vk) => {
        const budget = await counters.readBudget(vk.id, periods);
        if (!budget.state) return undefined;
        const status = budgetStatus(budget.state, budget.spent);
        return {
          slug: vk.slug,
          name: vk.name,
          budget_limit: status.limit,
          spent: status.spent,
          remaining: status.remaining,
          period_start: periodStart(status.period),
        };
      }),
    );
    return jsonResult(200, {
      object: 'budgets',
      workspace: { slug, budget: workspaceBudget },
      api_keys: apiKeys.filter((k) => k.budget !== null),
      virtual_keys: vks.filter((v) => v !== undefined && v.budget_limit !== null),
    });
  },
} satisfies OperationTable<'logs'>;

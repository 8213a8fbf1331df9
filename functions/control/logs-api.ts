import { badRequest, notFound } from '../core/errors';
import { jsonResult, listResult, type RequestState } from '../core/http';
import type { Principal } from '../core/principal';
import type { OperationHandler } from '../gateway/dispatch';
import { UserUsage, type UserUsageOrder } from '../gateway/user-usage';
import { ControlStore } from '../store/control-store';
import { CursorError } from '../store/dynamo';
import { type LogQuery, LogStore, type LogWorkspace, UnindexedFilterError } from '../store/log-store';
import { parseLimit, parseTime } from './list-query';

const logs = new LogStore();
const users = new UserUsage();
const control = new ControlStore();
const DEFAULT_ANALYTICS_DAYS = 30;

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

const caller = (state: RequestState) => state.principal as Principal;

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

export const logsOperations: Record<string, OperationHandler> = {
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
    return listResult(rows, null);
  },
};

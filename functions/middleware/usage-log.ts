import { hasCaller } from '../core/http';
import { type LogEntry, UsageLogDraft } from '../core/log-entry';
import { logger } from '../core/logger';
import { parseMetadata } from '../core/request-body';
import { markStage } from '../core/stage-clock';
import { policies } from '../gateway/policy';
import { UserUsage } from '../gateway/user-usage';
import { AnalyticsStore } from '../store/analytics-store';
import { LogStore } from '../store/log-store';
import type { GatewayMiddleware } from './types';

/**
 * Opens a log entry for every authenticated call of a logged operation and writes it once the client
 * has its last byte: the stream adapter runs `afterSend` after `end()` (on Lambda, before the invocation
 * returns).
 */
export function usageLog(
  store = new LogStore(),
  users = new UserUsage(),
  analytics = new AnalyticsStore(),
): GatewayMiddleware {
  const stores = { store, users, analytics };
  return {
    before: (request) => {
      const state = request.context.gateway;
      if (!state.operation?.logged || !hasCaller(state)) return;
      const { operation, principal } = state;
      let metadata: Record<string, string> = {};
      let metadataError: Error | undefined;
      try {
        metadata = parseMetadata(state.headers['x-gateway-metadata']);
      } catch (error) {
        metadataError = error as Error;
      }
      const draft = new UsageLogDraft(
        {
          id: state.requestId,
          trace_id: state.traceId,
          timestamp: new Date(state.startedAtMs).toISOString(),
          organisation_id: principal.organisationId,
          workspace: principal.workspace,
          auth: {
            type: principal.type,
            ...(principal.keyId ? { key_id: principal.keyId } : {}),
            ...(principal.subject ? { subject: principal.subject } : {}),
          },
          metadata,
          operation: operation.name,
        },
        state.startedAt,
      );
      draft.user = metadata._user ?? null;
      state.log = draft;
      state.afterSend.push(async (outcome) => {
        const entry = draft.finish(outcome, performance.now());
        state.entry = entry;
        // The workspace record is cached for the request's policies; its metadata keys pick the indexes.
        const indexedMetadata = policies
          .forRequest(state)
          .then((p) => p.workspace?.indexed_metadata ?? [])
          .catch(() => []);
        // What follows waits for writes; it holds the entry, not the request's state or its draft.
        return recordEntry(entry, indexedMetadata, draft.settlements, stores);
      });
      markStage('handler');
      if (metadataError) throw metadataError;
    },
  };
}

/**
 * Writes a finished entry, its spend, per-user counters and usage aggregates, side by side (on Lambda, all
 * before the invocation ends). A function of its own so that the wait holds only what it writes.
 */
async function recordEntry(
  entry: LogEntry,
  indexedMetadata: Promise<readonly string[]>,
  settlements: UsageLogDraft['settlements'],
  stores: { store: LogStore; users: UserUsage; analytics: AnalyticsStore },
): Promise<void> {
  const write = async () => {
    try {
      await stores.store.write(entry, { indexedMetadata: await indexedMetadata });
    } catch (error) {
      // The SDK already retried. Keep what we can in the operational log, without bodies.
      const { request: _req, response: _res, ...summary } = entry;
      logger.error('usage log write failed', { entry: summary, error: (error as Error).message });
    }
  };
  const settle = (task: () => Promise<void>, what: string) =>
    task().catch((error: unknown) =>
      logger.error(`${what} failed`, { requestId: entry.id, error: (error as Error).message }),
    );
  await Promise.all([
    write(),
    settle(() => stores.users.record(entry), 'user usage update'),
    settle(() => stores.analytics.record(entry), 'usage aggregates update'),
    ...settlements.map((s) => settle(() => s(entry), 'spend update')),
  ]);
}

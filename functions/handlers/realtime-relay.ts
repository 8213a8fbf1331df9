import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logInvocation } from '../core/logger';
import { settings } from '../core/settings';
import { BudgetLedger } from '../gateway/budget';
import { relaySession } from '../gateway/realtime/relay';
import type { RelayJob } from '../gateway/realtime/session';
import { openUpstreamSocket } from '../gateway/realtime/upstream-socket';
import { UserUsage } from '../gateway/user-usage';
import { clientConnections } from '../store/client-connections';
import { ConnectionStore } from '../store/connection-store';
import { LogStore } from '../store/log-store';
import { realtimeChannel } from '../store/realtime-channel';

const deps = {
  channel: realtimeChannel(),
  clients: clientConnections(),
  connections: new ConnectionStore(),
  logs: new LogStore(),
  users: new UserUsage(),
  ledger: new BudgetLedger(),
  openUpstream: openUpstreamSocket,
};

/** Invoked asynchronously by `$connect`; runs for the whole session. */
export const handler = middy<RelayJob, void>({ timeoutEarlyInMillis: 0 }).handler(
  (job: RelayJob, context: Context) => {
    logInvocation(context);
    return relaySession(job, deps, {
      sessionLimitMs: Math.max(
        1_000,
        // 14.5 minutes by default; the session also ends 20 s before the invocation would, whatever is configured.
        Math.min(settings().realtimeSessionLimitMs, context.getRemainingTimeInMillis() - 20_000),
      ),
      logIntervalMs: settings().realtimeLogIntervalMs,
      connectTimeoutMs: 10_000,
      openingGraceMs: 10_000,
    });
  },
);

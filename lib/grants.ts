// What each function may touch, derived from the operations it serves (no CDK: a pure function that
// lib/gateway-stack.ts and lib/realtime.ts both read).

import type { Operation, Scope } from '../functions/core/operations';
import type { TableName } from '../functions/store/tables';

/** What one data resource allows a function to do. */
export interface DataAccess {
  read: boolean;
  write: boolean;
  /** PutItem only: adds items, never updates or deletes them (audit entries). Implied by `write`. */
  append?: boolean;
}

export interface GroupGrants {
  tables: Record<TableName, DataAccess>;
  blobBucket: DataAccess;
  adminKeySecret: { read: boolean };
  /** Provider credentials of virtual keys, the secrets under the stack's virtualKeySecretPrefix. */
  virtualKeySecrets: DataAccess;
  /** Calls Bedrock with its own role, for virtual keys whose credential names no access keys. */
  bedrockInvoke: boolean;
}

/**
 * Every virtual key's secret lives under this name prefix, so IAM can name exactly those secrets; the
 * stack's name in it keeps two stacks in one account from reading each other's keys.
 */
export const virtualKeySecretPrefix = (stackName: string) => `gateway/${stackName}/virtual-keys/`;

/**
 * Permissions a function needs, from the operations it serves, so a new group in operations.ts gets the
 * right grants without touching this file.
 */
export function grantsFor(
  operations: readonly Pick<Operation, 'name' | 'method' | 'access' | 'logged'>[],
): GroupGrants {
  // Model operations write a usage log entry and, when large, its bodies.
  const writesLogs = operations.some((op) => op.logged);
  // Reading logs is exactly what the logs.view scope allows.
  const readsLogs = operations.some((op) => op.access.kind === 'scope' && op.access.scope === 'logs.view');
  // Control-plane mutations are the non-GET operations that are not model operations.
  const writesControl = operations.some((op) => !op.logged && op.method !== 'GET');
  const hasScope = (scope: Scope) =>
    operations.some((op) => op.access.kind === 'scope' && op.access.scope === scope);
  // Model operations may name a virtual key: they read its credential, check and charge its budget and
  // rate limit, and count per-user usage.
  const usesVirtualKeys = writesLogs;
  // Creating, rotating and deleting a virtual key writes its secret and its enforced state.
  const managesVirtualKeys = hasScope('virtual_keys.write');
  // A function that authenticates callers records every invalid JWT it sees in the audit table.
  const authenticates = operations.some((op) => op.access.kind !== 'public');
  // The audit log is read only by its own (admin) operations.
  const readsAudit = operations.some((op) => op.name.startsWith('audit_logs.'));
  return {
    tables: {
      // Functions authenticate callers against the control table; one serving only public files does not.
      control: { read: authenticates || writesControl, write: writesControl },
      // Model functions only ever add entries (LogStore.put is one PutItem): no update, no delete.
      logs: { read: readsLogs, write: false, append: writesLogs },
      // Virtual key reads show the spend; log readers see per-user analytics.
      counters: {
        read: usesVirtualKeys || managesVirtualKeys || hasScope('virtual_keys.read') || readsLogs,
        write: usesVirtualKeys || managesVirtualKeys,
      },
      audit: { read: readsAudit, write: false, append: authenticates },
      // Realtime sessions only (lib/realtime.ts grants it to the realtime functions).
      connections: { read: false, write: false },
    },
    blobBucket: { read: readsLogs, write: writesLogs },
    // The first use of the bootstrap admin key creates the organisation, a control-table write: only a
    // function that may write that table recognises the key (README: call /v1/organisation first).
    adminKeySecret: { read: writesControl },
    virtualKeySecrets: { read: usesVirtualKeys, write: managesVirtualKeys },
    bedrockInvoke: usesVirtualKeys,
  };
}

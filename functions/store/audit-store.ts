import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { settings } from '../core/settings';
import { isConditionFailure } from './control-store';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';

// Audit entries, append-only. Keys: `pk` = ORG#<organisation_id> or UNKNOWN, `id` = ULID (time order).
// Beside them, `pk` = LIMIT#<partition>, `id` = <window key>: which entry counts the attempts of one window.

export const UNKNOWN_ORGANISATION = 'UNKNOWN';

export interface AuditEntry {
  id: string;
  /** ISO 8601. */
  timestamp: string;
  /** Null when no existing organisation could be named. */
  organisation_id: string | null;
  event: 'jwt.invalid';
  /** The presented token, masked: never the token itself. */
  jwtToken: string;
  error: string;
  /** More about the failure when there is something safe to add (e.g. why a key set was refused). */
  detail?: string;
  request_id?: string;
  /** Where the attempts came from (the client's address). */
  source?: string;
  /** Attempts with this error from this source in the entry's minute. */
  count?: number;
}

interface StoredAudit extends AuditEntry {
  pk: string;
  expires_at: number;
}

const partitionOf = (organisationId: string | null) =>
  organisationId ? `ORG#${organisationId}` : UNKNOWN_ORGANISATION;

export class AuditStore {
  private readonly db = documentClient();

  constructor(private readonly retentionDays = settings().logRetentionDays) {}

  async put(entry: AuditEntry): Promise<void> {
    const item: StoredAudit = {
      ...entry,
      pk: partitionOf(entry.organisation_id),
      expires_at: nowEpochSeconds() + this.retentionDays * 86_400,
    };
    await this.db.send(new PutCommand({ TableName: tableName('audit'), Item: item }));
  }

  /**
   * Writes the entry unless one for the same window key exists; then that entry's count goes up by one
   * instead. Two conditional writes at most, whichever container sees the attempt.
   */
  async putOncePerWindow(entry: AuditEntry, windowKey: string, windowSeconds: number): Promise<void> {
    const table = tableName('audit');
    const limitPk = `LIMIT#${partitionOf(entry.organisation_id)}`;
    try {
      await this.db.send(
        new PutCommand({
          TableName: table,
          Item: {
            pk: limitPk,
            id: windowKey,
            entry_id: entry.id,
            expires_at: nowEpochSeconds() + 2 * windowSeconds,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const limit = await this.db.send(
        new GetCommand({ TableName: table, Key: { pk: limitPk, id: windowKey }, ConsistentRead: true }),
      );
      const entryId = limit.Item?.entry_id as string | undefined;
      if (!entryId) return;
      await this.db
        .send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: partitionOf(entry.organisation_id), id: entryId },
            UpdateExpression: 'ADD #count :one',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':one': 1 },
          }),
        )
        .catch((failure: unknown) => {
          // The first attempt's entry is still being written: this one goes uncounted.
          if (!isConditionFailure(failure)) throw failure;
        });
      return;
    }
    await this.put({ ...entry, count: 1 });
  }

  /**
   * Up to `limit` unexpired entries of one partition with an id below `before` (all when undefined),
   * newest first. Expired items are filtered in DynamoDB, so a page may take more than one query.
   */
  async listBefore(organisationId: string | null, before: string | undefined, limit: number) {
    const found: AuditEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    const values: Record<string, unknown> = { ':pk': partitionOf(organisationId), ':now': nowEpochSeconds() };
    if (before !== undefined) values[':before'] = before;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: tableName('audit'),
          KeyConditionExpression: before === undefined ? 'pk = :pk' : 'pk = :pk AND id < :before',
          FilterExpression: 'attribute_not_exists(expires_at) OR expires_at > :now',
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: Math.max(25, (limit - found.length) * 2),
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) {
        const { pk: _pk, expires_at: _exp, ...entry } = item as StoredAudit;
        found.push(entry);
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey && found.length < limit);
    return found.slice(0, limit);
  }
}

import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';

// Audit entries, append-only. Keys: `pk` = ORG#<organisation_id> or UNKNOWN, `id` = ULID (time order).

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
}

interface StoredAudit extends AuditEntry {
  pk: string;
  expires_at: number;
}

const partitionOf = (organisationId: string | null) =>
  organisationId ? `ORG#${organisationId}` : UNKNOWN_ORGANISATION;

export class AuditStore {
  private readonly db = documentClient();

  constructor(private readonly retentionDays = Number(process.env.GATEWAY_LOG_RETENTION_DAYS ?? 30)) {}

  async put(entry: AuditEntry): Promise<void> {
    const item: StoredAudit = {
      ...entry,
      pk: partitionOf(entry.organisation_id),
      expires_at: nowEpochSeconds() + this.retentionDays * 86_400,
    };
    await this.db.send(new PutCommand({ TableName: tableName('audit'), Item: item }));
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

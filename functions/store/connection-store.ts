import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';

// API Gateway closes every WebSocket after two hours; the item outlives that by a day for inspection.
const EXPIRY_SECONDS = 26 * 3600;

export type ConnectionStatus = 'connecting' | 'relaying' | 'closed';

/** The state of one realtime session, by API Gateway connection id. No credential is ever stored here. */
export interface ConnectionRecord {
  connection_id: string;
  /** Id of the session's log entry. */
  log_id: string;
  organisation_id: string;
  workspace: string;
  provider: string;
  model: string;
  virtual_key: string | null;
  status: ConnectionStatus;
  created_at: string;
  /** Last sign of life from the relay; a stale one means no relay owns the session any more. */
  heartbeat_at: string | null;
  closed_at: string | null;
  close_code: number | null;
  close_reason: string | null;
}

const key = (connectionId: string) => ({ pk: connectionId, sk: 'SESSION' });

export class ConnectionStore {
  private readonly db = documentClient();

  async put(record: ConnectionRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: tableName('connections'),
        Item: { ...key(record.connection_id), ...record, expires_at: nowEpochSeconds() + EXPIRY_SECONDS },
      }),
    );
  }

  async get(connectionId: string): Promise<ConnectionRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: tableName('connections'), Key: key(connectionId), ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, expires_at: _exp, message_seq: _seq, ...record } = out.Item;
    return record as ConnectionRecord;
  }

  /**
   * The next number of the connection's client messages (1, 2, ...), atomically: overlapping `$default`
   * invocations each get their own, in the order they reach the table. Undefined when the connection has
   * no record (it was refused, or has expired).
   */
  async nextSequence(connectionId: string): Promise<number | undefined> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: tableName('connections'),
          Key: key(connectionId),
          UpdateExpression: 'ADD message_seq :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(out.Attributes?.message_seq);
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    }
  }

  /** The relay is alive and owns the session. */
  async heartbeat(connectionId: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: tableName('connections'),
          Key: key(connectionId),
          UpdateExpression: 'SET heartbeat_at = :now, #status = :relaying',
          ConditionExpression: 'attribute_exists(pk) AND #status <> :closed',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':now': new Date().toISOString(),
            ':relaying': 'relaying',
            ':closed': 'closed',
          },
        }),
      )
      .catch((error: unknown) => {
        // A session closed meanwhile stays closed; that is the point of the condition.
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      });
  }

  async close(connectionId: string, code: number, reason: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: tableName('connections'),
          Key: key(connectionId),
          UpdateExpression:
            'SET #status = :closed, closed_at = :now, close_code = :code, close_reason = :reason',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':closed': 'closed',
            ':now': new Date().toISOString(),
            ':code': code,
            ':reason': reason,
          },
        }),
      )
      .catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      });
  }
}

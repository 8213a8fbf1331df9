import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './control-store';
import { documentClient, queryByPrefix, tableName } from './dynamo';

// Prompt templates in the control table. Every version is an immutable item; a head item per prompt
// carries its latest version for listing and for reads that name no version:
//   ORG#<org> / PROMPT#<ws>#<id>                  -> head: the latest version's record
//   ORG#<org> / PROMPTV#<ws>#<id>#<version, 6 digits> -> one version

export interface PromptRecord {
  id: string;
  version: number;
  name: string;
  organisation_id: string;
  workspace: string;
  model: string;
  /** Template messages as JSON text: any JSON content must be storable (see the log store). */
  messages_json: string;
  provider: string | null;
  virtual_key: string | null;
  hyperparameters_json: string;
  created_at: string;
  updated_at: string;
}

const TABLE = () => tableName('control');
const pad = (version: number) => String(version).padStart(6, '0');
const headKey = (p: Pick<PromptRecord, 'organisation_id' | 'workspace' | 'id'>) => ({
  pk: `ORG#${p.organisation_id}`,
  sk: `PROMPT#${p.workspace}#${p.id}`,
});
const versionPrefix = (workspace: string, id: string) => `PROMPTV#${workspace}#${id}#`;

function strip(item: Record<string, unknown>): PromptRecord {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as PromptRecord;
}

export class PromptStore {
  private readonly db = documentClient();

  /**
   * Adds a version. False when that version exists already: two updates raced and this one lost, so
   * nothing was overwritten. The head follows the version; a version is never rewritten.
   */
  async putVersion(record: PromptRecord): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: {
            pk: `ORG#${record.organisation_id}`,
            sk: `${versionPrefix(record.workspace, record.id)}${pad(record.version)}`,
            ...record,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    await this.db.send(new PutCommand({ TableName: TABLE(), Item: { ...headKey(record), ...record } }));
    return true;
  }

  async getLatest(organisationId: string, workspace: string, id: string): Promise<PromptRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: TABLE(),
        Key: headKey({ organisation_id: organisationId, workspace, id }),
      }),
    );
    return out.Item ? strip(out.Item) : undefined;
  }

  async getVersion(
    organisationId: string,
    workspace: string,
    id: string,
    version: number,
  ): Promise<PromptRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({
        TableName: TABLE(),
        Key: { pk: `ORG#${organisationId}`, sk: `${versionPrefix(workspace, id)}${pad(version)}` },
      }),
    );
    return out.Item ? strip(out.Item) : undefined;
  }

  /** The highest version written, read from the versions themselves rather than the head. */
  async latestVersion(organisationId: string, workspace: string, id: string): Promise<number> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': `ORG#${organisationId}`,
          ':prefix': versionPrefix(workspace, id),
        },
        ScanIndexForward: false,
        Limit: 1,
        ProjectionExpression: 'version',
      }),
    );
    return (out.Items?.[0]?.version as number | undefined) ?? 0;
  }

  async list(organisationId: string, workspace: string): Promise<PromptRecord[]> {
    return (await queryByPrefix(
      TABLE(),
      `ORG#${organisationId}`,
      `PROMPT#${workspace}#`,
    )) as unknown as PromptRecord[];
  }

  /** Removes the head first, so the prompt disappears at once, then every version. */
  async delete(organisationId: string, workspace: string, id: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: headKey({ organisation_id: organisationId, workspace, id }),
      }),
    );
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: TABLE(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: {
            ':pk': `ORG#${organisationId}`,
            ':prefix': versionPrefix(workspace, id),
          },
          ProjectionExpression: 'pk, sk',
          ExclusiveStartKey: startKey,
        }),
      );
      const keys = out.Items ?? [];
      for (let i = 0; i < keys.length; i += 25) {
        let batch: Record<string, unknown>[] = keys
          .slice(i, i + 25)
          .map((key) => ({ DeleteRequest: { Key: { pk: key.pk, sk: key.sk } } }));
        // BatchWrite may hand back items it did not process; send those again until none are left.
        while (batch.length > 0) {
          const result = await this.db.send(new BatchWriteCommand({ RequestItems: { [TABLE()]: batch } }));
          batch = (result.UnprocessedItems?.[TABLE()] ?? []) as Record<string, unknown>[];
        }
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
  }
}

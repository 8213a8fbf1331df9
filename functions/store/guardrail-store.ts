import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, queryByPrefix, tableName } from './dynamo';

// Saved guardrails live in the control table: ORG#<org> / GR#<workspace>#<id>.

export interface GuardrailRecord {
  id: string;
  name: string;
  organisation_id: string;
  workspace: string;
  /** The checks as JSON text: any parameters a client sends must be storable. */
  checks_json: string;
  created_at: string;
  updated_at: string;
}

const TABLE = () => tableName('control');
const key = (organisationId: string, workspace: string, id: string) => ({
  pk: `ORG#${organisationId}`,
  sk: `GR#${workspace}#${id}`,
});

export class GuardrailStore {
  // Read on use: a store may be made at import, before the local runtime sets the DynamoDB endpoint.
  private get db() {
    return documentClient();
  }

  async put(record: GuardrailRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: TABLE(),
        Item: { ...key(record.organisation_id, record.workspace, record.id), ...record },
      }),
    );
  }

  async get(organisationId: string, workspace: string, id: string): Promise<GuardrailRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: TABLE(), Key: key(organisationId, workspace, id) }),
    );
    if (!out.Item) return undefined;
    const { pk: _pk, sk: _sk, ...record } = out.Item;
    return record as GuardrailRecord;
  }

  async list(organisationId: string, workspace: string): Promise<GuardrailRecord[]> {
    return (await queryByPrefix(
      TABLE(),
      `ORG#${organisationId}`,
      `GR#${workspace}#`,
    )) as unknown as GuardrailRecord[];
  }

  async delete(organisationId: string, workspace: string, id: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({
        TableName: TABLE(),
        Key: key(organisationId, workspace, id),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return out.Attributes !== undefined;
  }
}

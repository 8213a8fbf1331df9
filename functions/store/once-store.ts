import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './control-store';
import { documentClient, nowEpochSeconds, tableName } from './dynamo';

// Marks that something happened once, in the counters table: a conditional PutItem wins for exactly one
// caller however many ask at the same time (a video's cost is logged by the first read that sees it done).

const KEEP_DAYS = 90;

export class OnceStore {
  private readonly db = documentClient();

  /** True for the first claim of `key` in the organisation, false for every later one. */
  async claim(organisationId: string, key: string): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: tableName('counters'),
          Item: {
            pk: `ONCE#${organisationId}`,
            sk: key,
            claimed_at: new Date().toISOString(),
            expires_at: nowEpochSeconds() + KEEP_DAYS * 86_400,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

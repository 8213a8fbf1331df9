import {
  BatchGetCommand,
  DeleteCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from './control-store';
import { documentClient, tableName } from './dynamo';

// Single-item atomic counters (DESIGN.md section 5: no read-modify-write). Keys:
//   VK#<virtual key id> / STATE                     -> what is enforced: budget, period, alert, rate limit;
//                                                      absent once the key is deleted
//   VK#<virtual key id> / SPEND#<period>            -> spent (USD) in a budget period (`all` or `yyyy-mm`)
//   VK#<virtual key id> / RATE#<epoch minute>       -> requests in one minute window; expires
//   VK#<virtual key id> / ALERT#<period>            -> the budget alert of a period, written once
//   USERS#<org>#<workspace> / <yyyy-mm-dd>#<user>   -> one end user's usage on one day (UTC)
// Counters are keyed by the virtual key's id, not its slug, so a slug deleted and re-created starts at 0.

/** The enforced settings of a virtual key, read strongly with its spend on every request. */
export interface VirtualKeyState {
  budget_limit: number | null;
  budget_period: 'none' | 'monthly';
  /** Fraction of the limit (0 to 1) whose crossing records an alert; null for none. */
  budget_alert_threshold: number | null;
  requests_per_minute: number | null;
}

export interface BudgetAlert {
  period: string;
  threshold_usd: number;
  spent: number;
  created_at: string;
}

export interface UserDayUsage {
  user: string;
  day: string;
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

const TABLE = () => tableName('counters');
const vkKey = (id: string) => `VK#${id}`;
const usersKey = (organisationId: string, workspace: string) => `USERS#${organisationId}#${workspace}`;

export class CounterStore {
  private readonly db = documentClient();

  async putState(virtualKeyId: string, state: VirtualKeyState): Promise<void> {
    await this.db.send(
      new PutCommand({ TableName: TABLE(), Item: { pk: vkKey(virtualKeyId), sk: 'STATE', ...state } }),
    );
  }

  async deleteState(virtualKeyId: string): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: TABLE(), Key: { pk: vkKey(virtualKeyId), sk: 'STATE' } }),
    );
  }

  /**
   * The key's state and its spend in each period asked for, in one strongly consistent round trip: a
   * budget check must see every charge already made, and a raised limit or a deletion at once.
   */
  async readBudget(
    virtualKeyId: string,
    periods: string[],
  ): Promise<{ state: VirtualKeyState | undefined; spent: Record<string, number> }> {
    const table = TABLE();
    const keys = [
      { pk: vkKey(virtualKeyId), sk: 'STATE' },
      ...periods.map((p) => ({ pk: vkKey(virtualKeyId), sk: `SPEND#${p}` })),
    ];
    let pending: Record<string, unknown>[] = keys;
    const items: Record<string, unknown>[] = [];
    // BatchGetItem may hand back unprocessed keys under load; ask again for those.
    for (let round = 0; pending.length > 0 && round < 5; round++) {
      const out = await this.db.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
      );
      items.push(...(out.Responses?.[table] ?? []));
      pending = out.UnprocessedKeys?.[table]?.Keys ?? [];
    }
    if (pending.length > 0) throw new Error('budget read left keys unprocessed');
    const spent: Record<string, number> = Object.fromEntries(periods.map((p) => [p, 0]));
    let state: VirtualKeyState | undefined;
    for (const item of items) {
      const sk = String(item.sk);
      if (sk === 'STATE') {
        state = {
          budget_limit: item.budget_limit == null ? null : Number(item.budget_limit),
          budget_period: item.budget_period === 'monthly' ? 'monthly' : 'none',
          budget_alert_threshold:
            item.budget_alert_threshold == null ? null : Number(item.budget_alert_threshold),
          requests_per_minute: item.requests_per_minute == null ? null : Number(item.requests_per_minute),
        };
      } else if (sk.startsWith('SPEND#')) {
        spent[sk.slice(6)] = Number(item.spent ?? 0);
      }
    }
    return { state, spent };
  }

  /** Adds `usd` to a period's spend in one atomic ADD; returns the new total. */
  async addSpend(virtualKeyId: string, period: string, usd: number): Promise<number> {
    const out = await this.db.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: vkKey(virtualKeyId), sk: `SPEND#${period}` },
        UpdateExpression: 'ADD spent :usd',
        ExpressionAttributeValues: { ':usd': usd },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.spent ?? usd);
  }

  /**
   * Counts one request in the current minute window unless the window already holds `limit`: one
   * conditional ADD, so concurrent callers can never push a window past its limit. False when refused.
   */
  async takeRate(virtualKeyId: string, windowStartSeconds: number, limit: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: TABLE(),
          Key: { pk: vkKey(virtualKeyId), sk: `RATE#${windowStartSeconds}` },
          UpdateExpression: 'ADD #count :one SET expires_at = :expires',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':expires': windowStartSeconds + 120 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Records a period's budget alert once; false when it was already recorded. */
  async putAlertOnce(virtualKeyId: string, alert: BudgetAlert): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: TABLE(),
          Item: { pk: vkKey(virtualKeyId), sk: `ALERT#${alert.period}`, ...alert },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async listAlerts(virtualKeyId: string): Promise<BudgetAlert[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': vkKey(virtualKeyId), ':prefix': 'ALERT#' },
      }),
    );
    return (out.Items ?? []).map((item) => ({
      period: String(item.period),
      threshold_usd: Number(item.threshold_usd),
      spent: Number(item.spent),
      created_at: String(item.created_at),
    }));
  }

  /** Adds one request's usage to its user's counters for the day, in one atomic ADD. */
  async addUserUsage(
    organisationId: string,
    workspace: string,
    day: string,
    user: string,
    usage: { cost: number; prompt_tokens: number; completion_tokens: number },
  ): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: usersKey(organisationId, workspace), sk: `${day}#${user}` },
        UpdateExpression:
          'ADD requests :one, cost :cost, prompt_tokens :prompt, completion_tokens :completion SET #user = :user, #day = :day',
        ExpressionAttributeNames: { '#user': 'user', '#day': 'day' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':cost': usage.cost,
          ':prompt': usage.prompt_tokens,
          ':completion': usage.completion_tokens,
          ':user': user,
          ':day': day,
        },
      }),
    );
  }

  /** Every user-day counter of a workspace between two days (inclusive, `yyyy-mm-dd`). */
  async listUserUsage(
    organisationId: string,
    workspace: string,
    fromDay: string,
    toDay: string,
  ): Promise<UserDayUsage[]> {
    const rows: UserDayUsage[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: TABLE(),
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
          ExpressionAttributeValues: {
            ':pk': usersKey(organisationId, workspace),
            ':low': `${fromDay}#`,
            // The highest code point sorts after any user id, which closes the last day.
            ':high': `${toDay}#\u{10ffff}`,
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of out.Items ?? []) {
        rows.push({
          user: String(item.user),
          day: String(item.day),
          requests: Number(item.requests ?? 0),
          cost: Number(item.cost ?? 0),
          prompt_tokens: Number(item.prompt_tokens ?? 0),
          completion_tokens: Number(item.completion_tokens ?? 0),
        });
      }
      startKey = out.LastEvaluatedKey;
    } while (startKey);
    return rows;
  }
}

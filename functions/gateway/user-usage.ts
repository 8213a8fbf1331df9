import type { LogEntry } from '../core/log-entry';
import { CounterStore, type UserDayUsage } from '../store/counter-store';

export interface UserUsageRow {
  user: string;
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export type UserUsageOrder = 'cost' | 'requests';

const round = (usd: number) => Math.round(usd * 1e12) / 1e12;

/** The UTC day of a moment, which is the counters' granularity. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Per end-user daily counters, kept beside the log so that analytics never scan the logs. */
export class UserUsage {
  constructor(private readonly counters = new CounterStore()) {}

  /** Adds a logged request to its user's day; requests without a user are not tracked. */
  async record(entry: LogEntry): Promise<void> {
    if (!entry.user) return;
    await this.counters.addUserUsage(
      entry.organisation_id,
      entry.workspace,
      entry.timestamp.slice(0, 10),
      entry.user,
      {
        cost: entry.cost ?? 0,
        prompt_tokens: entry.usage?.prompt_tokens ?? 0,
        completion_tokens: entry.usage?.completion_tokens ?? 0,
      },
    );
  }

  /** One row per user over the days from..to of the given workspaces, largest first. */
  async report(
    organisationId: string,
    workspaces: string[],
    fromMs: number,
    toMs: number,
    order: UserUsageOrder,
  ): Promise<UserUsageRow[]> {
    const days = await Promise.all(
      workspaces.map((ws) => this.counters.listUserUsage(organisationId, ws, dayOf(fromMs), dayOf(toMs))),
    );
    return summarise(days.flat(), order);
  }
}

export function summarise(days: UserDayUsage[], order: UserUsageOrder): UserUsageRow[] {
  const rows = new Map<string, UserUsageRow>();
  for (const d of days) {
    const row = rows.get(d.user) ?? {
      user: d.user,
      requests: 0,
      cost: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
    };
    row.requests += d.requests;
    row.cost = round(row.cost + d.cost);
    row.prompt_tokens += d.prompt_tokens;
    row.completion_tokens += d.completion_tokens;
    rows.set(d.user, row);
  }
  return [...rows.values()].sort((a, b) => b[order] - a[order] || a.user.localeCompare(b.user));
}

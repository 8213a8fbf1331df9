import { type GatewayError, rateLimited } from '../core/errors';
import { CounterStore } from '../store/counter-store';
import type { LimitHolder } from './budget';

const counters = new CounterStore();

interface WindowHold {
  pk: string;
  sk: string;
  amount: number;
}

/** The 429 of a limit that a request would pass, with the headers OpenAI's clients read. */
function limitRefusal(
  holder: LimitHolder,
  unit: 'requests' | 'tokens',
  limit: number,
  used: number,
  retryAfter: number,
): GatewayError {
  return rateLimited(
    `The ${holder.kind.replace('_', ' ')} "${holder.name}" allows ${limit} ${unit} per minute; try again in ${retryAfter} s.`,
    holder.kind,
    {
      'retry-after': String(retryAfter),
      [`x-ratelimit-limit-${unit}`]: String(limit),
      [`x-ratelimit-remaining-${unit}`]: String(Math.max(0, limit - used)),
    },
  );
}

/**
 * A request's place in every per-minute window of its hierarchy: requests per minute count one,
 * tokens per minute reserve the estimated tokens and are settled to the actual count afterwards.
 */
export class RateReservation {
  private constructor(
    private readonly holds: WindowHold[],
    private readonly tokens: WindowHold[],
    private readonly store: CounterStore,
  ) {}

  static async take(
    holders: LimitHolder[],
    estimatedTokens: number,
    now = Date.now(),
    store = counters,
  ): Promise<RateReservation> {
    const seconds = Math.floor(now / 1000);
    const window = seconds - (seconds % 60);
    // Never 0: a client retrying at once would be refused again.
    const retryAfter = Math.max(1, Math.ceil(((window + 60) * 1000 - now) / 1000));
    const wanted: Array<{
      holder: LimitHolder;
      unit: 'requests' | 'tokens';
      limit: number;
      hold: WindowHold;
    }> = [];
    for (const holder of holders) {
      const { requests_per_minute: rpm, tokens_per_minute: tpm } = holder.limits;
      if (rpm !== null) {
        wanted.push({
          holder,
          unit: 'requests',
          limit: rpm,
          hold: { pk: holder.pk, sk: `RATE#${window}`, amount: 1 },
        });
      }
      if (tpm !== null) {
        wanted.push({
          holder,
          unit: 'tokens',
          limit: tpm,
          hold: { pk: holder.pk, sk: `TOK#${window}`, amount: Math.max(1, Math.ceil(estimatedTokens)) },
        });
      }
    }
    if (wanted.length === 0) return new RateReservation([], [], store);
    const results = await Promise.all(
      wanted.map((w) => store.takeWindow(w.hold.pk, w.hold.sk, w.hold.amount, w.limit, window + 120)),
    );
    const refused = wanted.findIndex((_, i) => results[i] === undefined);
    if (refused >= 0) {
      await Promise.all(
        wanted
          .filter((_, i) => results[i] !== undefined)
          .map((w) => store.adjustWindow(w.hold.pk, w.hold.sk, -w.hold.amount)),
      );
      const w = wanted[refused] as (typeof wanted)[number];
      const current = await store.readWindow(w.hold.pk, w.hold.sk);
      throw limitRefusal(w.holder, w.unit, w.limit, current, retryAfter);
    }
    return new RateReservation(
      wanted.map((w) => w.hold),
      wanted.filter((w) => w.unit === 'tokens').map((w) => w.hold),
      store,
    );
  }

  /** Gives every count back: the request was refused further on and never reached a provider. */
  async release(): Promise<void> {
    await Promise.all(this.holds.map((h) => this.store.adjustWindow(h.pk, h.sk, -h.amount)));
  }

  /** Settles the token windows to the tokens actually used. */
  async settle(actualTokens: number): Promise<void> {
    await Promise.all(
      this.tokens.map((h) => this.store.adjustWindow(h.pk, h.sk, Math.round(actualTokens) - h.amount)),
    );
  }
}

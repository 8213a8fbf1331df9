import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallerState } from '../../functions/core/http';
import { policies } from '../../functions/gateway/policy';
import type { UserUsage } from '../../functions/gateway/user-usage';
import { usageLog } from '../../functions/middleware/usage-log';
import type { AnalyticsStore } from '../../functions/store/analytics-store';
import type { LogStore } from '../../functions/store/log-store';

// The usage log's after-send work waits for its writes (locally, for the log batch's, which can take
// over 100 ms under load). While it waits it must hold the finished entry only, not the request: the
// request's state (and through it the draft, the headers, the handlers' closures) is freed at once.

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the usage log while its writes wait', () => {
  it('holds the entry it writes, not the request state it was made from', async () => {
    const forRequest = vi.spyOn(policies, 'forRequest').mockImplementation(async () => ({}) as never);
    let release!: () => void;
    const written = new Promise<void>((r) => {
      release = r;
    });
    const entries: unknown[] = [];
    const store = {
      write: async (entry: unknown) => {
        entries.push(entry);
        await written;
      },
    } as unknown as LogStore;
    const noop = { record: async () => undefined };
    const middleware = usageLog(store, noop as unknown as UserUsage, noop as unknown as AnalyticsStore);

    let held: WeakRef<object> | undefined;
    let work: Promise<void> | undefined;
    // In a function of its own, so that nothing of this frame keeps the state.
    (() => {
      const state = {
        requestId: '01JHOLDTESTREQUEST00000000',
        traceId: '',
        startedAt: performance.now(),
        startedAtMs: Date.now(),
        headers: {},
        params: {},
        afterSend: [],
        replyHeaders: {},
        upstreamWaitMs: 0,
        operation: { name: 'chat.completions', logged: true },
        principal: {
          type: 'api_key',
          organisationId: 'org_1',
          workspace: 'default',
          isOrganisationAdmin: true,
          scopes: new Set(),
        },
        // What a request carries that an entry need not: a large body, say.
        body: 'x'.repeat(1_000_000),
      } as unknown as CallerState;
      middleware.before?.({ context: { gateway: state } } as never);
      work = state.afterSend[0]?.({ statusCode: 200, clientDisconnected: false });
      held = new WeakRef(state);
    })();
    await vi.waitFor(() => expect(entries).toHaveLength(1));
    forRequest.mockClear();

    gc();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(held?.deref()).toBeUndefined();
    expect(entries[0]).toMatchObject({ id: '01JHOLDTESTREQUEST00000000', status: 200 });

    release();
    await work;
  });
});

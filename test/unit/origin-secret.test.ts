import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { GatewayContext, HttpEvent, RequestState } from '../../functions/core/http';
import { parseSettings } from '../../functions/core/settings';
import { originSecretFrom, requestContext } from '../../functions/middleware/request-context';
import type { GatewayRequest } from '../../functions/middleware/types';

function request(headers: Record<string, string>): GatewayRequest {
  const state = { requestId: 'r1', replyHeaders: {}, headers: {}, params: {} } as unknown as RequestState;
  return {
    event: { headers } as unknown as HttpEvent,
    context: { gateway: state } as unknown as GatewayContext & Context,
    response: undefined,
    error: undefined,
    internal: {},
  } as unknown as GatewayRequest;
}

const run = async (secret: string | undefined, headers: Record<string, string>) => {
  const req = request(headers);
  const before = requestContext(async () => secret).before as (r: GatewayRequest) => Promise<void>;
  await before(req);
  return req.context.gateway;
};

describe('origin secret', () => {
  it('lets everything through when no secret is configured (the local server)', async () => {
    await expect(run(undefined, {})).resolves.toBeDefined();
    expect(await originSecretFrom(parseSettings({}))()).toBeUndefined();
  });

  it('refuses a request without the header, or with a wrong one, with an OpenAI-shaped 403', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'x-gateway-origin-secret': 'nope' },
      { 'X-Gateway-Origin-Secret': 's3cre' },
    ];
    for (const headers of cases) {
      const failure = await run('s3cret', headers).catch((e: unknown) => e);
      expect(failure).toMatchObject({ status: 403, code: 'origin_not_allowed', type: 'permission_error' });
    }
  });

  it('accepts the right header in any case, and hides it from everything after', async () => {
    const state = await run('s3cret', { 'X-Gateway-Origin-Secret': 's3cret', 'x-other': '1' });
    expect(state.headers).toEqual({ 'x-other': '1' });
  });

  it('takes the secret from GATEWAY_ORIGIN_SECRET, and the previous one during a rotation', async () => {
    expect(await originSecretFrom(parseSettings({ GATEWAY_ORIGIN_SECRET: 'v' }))()).toEqual(['v']);
    expect(
      await originSecretFrom(
        parseSettings({ GATEWAY_ORIGIN_SECRET: 'new', GATEWAY_ORIGIN_SECRET_PREVIOUS: 'old' }),
      )(),
    ).toEqual(['new', 'old']);
  });

  it('accepts the current and the previous value, so a rotation fails no request', async () => {
    const both = async () => ['new-value', 'old-value'];
    for (const value of ['new-value', 'old-value']) {
      const req = request({ 'x-gateway-origin-secret': value });
      await (requestContext(both).before as (r: GatewayRequest) => Promise<void>)(req);
    }
    const req = request({ 'x-gateway-origin-secret': 'older-value' });
    const failure = await (requestContext(both).before as (r: GatewayRequest) => Promise<void>)(req).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ status: 403, code: 'origin_not_allowed' });
  });

  it('reads the secret again before refusing a value it does not know yet', async () => {
    let reads = 0;
    const rotating = async (refresh?: boolean) => {
      if (refresh) reads++;
      return reads > 0 ? ['rotated', 'first'] : ['first'];
    };
    const req = request({ 'x-gateway-origin-secret': 'rotated' });
    await (requestContext(rotating).before as (r: GatewayRequest) => Promise<void>)(req);
    expect(reads).toBe(1);
  });
});

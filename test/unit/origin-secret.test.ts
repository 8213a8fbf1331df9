import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { GatewayContext, HttpEvent, RequestState } from '../../functions/gateway/http';
import { originSecretFromEnv, requestContext } from '../../functions/middleware/request-context';
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
    expect(await originSecretFromEnv({})()).toBeUndefined();
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

  it('takes the secret from GATEWAY_ORIGIN_SECRET', async () => {
    expect(await originSecretFromEnv({ GATEWAY_ORIGIN_SECRET: 'v' })()).toBe('v');
  });
});

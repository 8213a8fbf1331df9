import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/fixture';

// The first mistakes a newcomer makes get an answer that says what to change.

const { gw } = useGateway();

describe('a provider key where the gateway key belongs', () => {
  it('in Authorization, with no gateway key: says the gateway key goes in x-gateway-api-key', async () => {
    const client = new OpenAI({ baseURL: gw.url, apiKey: 'sk-proj-abc123def456', maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    const message = (error as InstanceType<typeof OpenAI.AuthenticationError>).message;
    expect(message).toContain('looks like a provider key');
    expect(message).toContain('x-gateway-api-key');
    expect(message).toContain('virtual key');
  });

  it('in x-gateway-api-key: says that header takes the gateway key', async () => {
    const res = await gw.api('GET', '/logs', undefined, 'sk-ant-api03-abcdef');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toContain('x-gateway-api-key takes the gateway key');
  });

  it('an unknown gateway key names the header it came in', async () => {
    const res = await gw.api('GET', '/logs', undefined, 'gwk_not_a_real_key_0000000000');
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('Invalid API key provided in x-gateway-api-key.');
  });
});

import { describe, expect, it } from 'vitest';
import {
  exceedsMessageLimit,
  keyInQuery,
  MAX_MESSAGE_BYTES,
  parseSubprotocols,
  splitForClient,
  withSubprotocolHeaders,
} from '../../functions/gateway/realtime/protocol';
import { realtimeUpstream } from '../../functions/gateway/realtime/upstream-endpoint';

describe('realtime subprotocols', () => {
  it('reads the gateway key, provider, virtual key and config, and selects only "realtime"', () => {
    const offer = parseSubprotocols(
      'realtime, gateway-key.gwk_abc, gateway-provider.openai, gateway-virtual-key.vk-1, gateway-config.cfg_1',
    );
    expect(offer.selected).toBe('realtime');
    expect(offer.headers).toEqual({
      'x-gateway-api-key': 'gwk_abc',
      'x-gateway-provider': 'openai',
      'x-gateway-virtual-key': 'vk-1',
      'x-gateway-config': 'cfg_1',
    });
  });

  it("reads OpenAI's browser key as Authorization: Bearer, and its beta flag", () => {
    const offer = parseSubprotocols('realtime,openai-insecure-api-key.sk-123,openai-beta.realtime-v1');
    expect(offer.headers).toEqual({ authorization: 'Bearer sk-123', 'openai-beta': 'realtime=v1' });
  });

  it('selects nothing without "realtime", and never a protocol that carries a value', () => {
    expect(parseSubprotocols('gateway-key.gwk_abc').selected).toBeUndefined();
    expect(parseSubprotocols(undefined)).toEqual({ headers: {}, selected: undefined });
  });

  it('lets real headers win over subprotocols, and drops the protocol header itself', () => {
    const { headers, selected } = withSubprotocolHeaders({
      'x-gateway-api-key': 'from-header',
      'sec-websocket-protocol': 'realtime, gateway-key.from-protocol, gateway-provider.openai',
    });
    expect(selected).toBe('realtime');
    expect(headers).toEqual({ 'x-gateway-api-key': 'from-header', 'x-gateway-provider': 'openai' });
  });

  it('spots keys put in the query string', () => {
    expect(keyInQuery({ model: 'gpt-realtime', api_key: 'x' })).toBe('api_key');
    expect(keyInQuery({ model: 'gpt-realtime' })).toBeUndefined();
  });
});

describe('realtime message sizes', () => {
  it('measures bytes, not characters', () => {
    expect(exceedsMessageLimit('a'.repeat(MAX_MESSAGE_BYTES))).toBe(false);
    expect(exceedsMessageLimit('é'.repeat(MAX_MESSAGE_BYTES / 2 + 1))).toBe(true);
  });

  it('passes events that fit, and splits a large audio delta losslessly into whole base64 quanta', () => {
    expect(splitForClient('{"type":"x"}')).toEqual(['{"type":"x"}']);
    const audio = Buffer.alloc(300_000, 7).toString('base64');
    const event = { type: 'response.output_audio.delta', response_id: 'r', item_id: 'i', delta: audio };
    const pieces = splitForClient(JSON.stringify(event)) as string[];
    expect(pieces.length).toBeGreaterThan(1);
    const parsed = pieces.map((p) => JSON.parse(p) as typeof event);
    for (const p of pieces) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    for (const p of parsed) {
      expect(p).toMatchObject({ type: event.type, item_id: 'i' });
      expect(p.delta.length % 4).toBe(0);
    }
    expect(Buffer.concat(parsed.map((p) => Buffer.from(p.delta, 'base64')))).toEqual(
      Buffer.alloc(300_000, 7),
    );
  });

  it('cannot split other large events', () => {
    expect(
      splitForClient(JSON.stringify({ type: 'response.done', text: 'x'.repeat(200_000) })),
    ).toBeUndefined();
  });
});

describe('realtime upstream endpoints', () => {
  it('maps an OpenAI base URL to wss with the model and bearer key', () => {
    const up = realtimeUpstream(
      { providerName: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-1', project: 'p' },
      'gpt-realtime',
      { 'openai-beta': 'realtime=v1' },
    );
    expect(up.url).toBe('wss://api.openai.com/v1/realtime?model=gpt-realtime');
    expect(up.headers).toEqual({
      authorization: 'Bearer sk-1',
      'openai-project': 'p',
      'openai-beta': 'realtime=v1',
    });
  });

  it('maps a plain http custom host to ws', () => {
    const up = realtimeUpstream({ providerName: 'openai', baseUrl: 'http://127.0.0.1:9000/v1/' }, 'm', {});
    expect(up.url).toBe('ws://127.0.0.1:9000/v1/realtime?model=m');
  });

  it('builds the Azure OpenAI deployment URL with api-key', () => {
    const up = realtimeUpstream(
      {
        providerName: 'azure-openai',
        baseUrl: 'https://res.openai.azure.com',
        apiKey: 'az',
        deploymentId: 'rt',
      },
      'gpt-realtime',
      {},
    );
    expect(up.url).toBe(
      'wss://res.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=rt',
    );
    expect(up.headers).toEqual({ 'api-key': 'az' });
  });

  it('refuses providers without a realtime API', () => {
    expect(() => realtimeUpstream({ providerName: 'anthropic', baseUrl: 'https://x' }, 'm', {})).toThrow(
      /no realtime API/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../functions/core/errors';
import { OPERATIONS } from '../../functions/core/operations';
import { parseMetadata } from '../../functions/core/request-body';
import { parseConfig } from '../../functions/gateway/config';
import { compileRoutes, matchRoute } from '../../functions/middleware/route';

describe('gateway config validation', () => {
  it('accepts a full config with nested targets', () => {
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [429, 500] },
      retry: { attempts: 3, on_status_codes: [503] },
      request_timeout: 10_000,
      targets: [
        { provider: 'openai', api_key: 'k', weight: 2, override_params: { model: 'gpt-4o' } },
        { custom_host: 'http://h/v1' },
      ],
    };
    expect(parseConfig(config)).toBe(config);
  });

  it('lists every bad field at once, nested ones with their path', () => {
    try {
      parseConfig({
        provider: '',
        foo: 1,
        request_timeout: -1,
        targets: [{ weight: -1, custom_host: 'ftp://x' }],
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayError);
      const message = (error as GatewayError).message;
      for (const part of [
        'config.provider',
        'config.foo',
        'config.request_timeout',
        'config.targets[0].weight',
        'config.targets[0].custom_host',
      ]) {
        expect(message).toContain(part);
      }
      expect((error as GatewayError).status).toBe(400);
    }
  });

  it('rejects non-objects', () => {
    expect(() => parseConfig([])).toThrow(GatewayError);
    expect(() => parseConfig('x')).toThrow(GatewayError);
  });
});

describe('metadata header', () => {
  it('parses string values and rejects anything else', () => {
    expect(parseMetadata('{"a":"b"}')).toEqual({ a: 'b' });
    expect(parseMetadata(undefined)).toEqual({});
    for (const bad of ['nope', '[]', '{"a":1}', '{"a":null}', JSON.stringify({ a: 'x'.repeat(2000) })]) {
      expect(() => parseMetadata(bad), bad).toThrow(GatewayError);
    }
  });
});

describe('routes from operations.ts', () => {
  const routes = compileRoutes(OPERATIONS);
  it('matches every operation path, with parameters', () => {
    for (const op of OPERATIONS) {
      const path = op.path.replace(/\{(\w+)\}/g, 'abc');
      expect(matchRoute(routes, op.method, path)?.operation.name, op.name).toBe(op.name);
    }
    expect(matchRoute(routes, 'DELETE', '/v1/api-keys/key_1')?.params).toEqual({ id: 'key_1' });
    expect(matchRoute(routes, 'GET', '/v1/logs/')?.operation.name).toBe('logs.list');
  });

  it('does not match other methods or deeper paths', () => {
    expect(matchRoute(routes, 'PUT', '/v1/chat/completions')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/v1/logs/a/b')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/v1/chat/completions.json')).toBeUndefined();
  });

  it('names each operation once', () => {
    const names = OPERATIONS.map((o) => o.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('takes each method and path from its route, one space between', () => {
    for (const op of OPERATIONS) {
      expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], op.name).toContain(op.method);
      expect(op.path, op.name).toMatch(/^\/[^\s]*$/);
    }
  });

  // A model call that wrote no entry would go unlogged and uncharged.
  it('writes a usage log entry for exactly the operations that take completions.write', () => {
    for (const op of OPERATIONS) {
      const modelCall = op.access.kind === 'scope' && op.access.scope === 'completions.write';
      expect(op.logged, op.name).toBe(modelCall);
    }
  });
});

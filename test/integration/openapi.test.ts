import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OPERATIONS, REALTIME_OPERATION } from '../../functions/core/operations';
import { useGateway } from '../support/fixture';

// The gateway's OpenAPI document: valid, the same as the checked-in docs/openapi.json, listing every
// operation of operations.ts, and listing only routes the server really serves.

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const { gw } = useGateway();
let doc: Json & { paths: Record<string, Record<string, Json>> };
beforeAll(async () => {
  const res = await fetch(`${gw.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
});

/** Every `[method, path, operation]` the document lists. */
const listed = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => [method.toUpperCase(), path, op] as const),
  );

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without a key, and docs/openapi.json is up to date', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const checkedIn = JSON.parse(readFileSync(join(process.cwd(), 'docs', 'openapi.json'), 'utf8'));
    expect(checkedIn, 'docs/openapi.json is stale: run npm run openapi').toEqual(doc);
  });

  it('lists every operation of operations.ts, once, with who may call it', () => {
    const all = [...OPERATIONS, REALTIME_OPERATION];
    expect(listed()).toHaveLength(all.length);
    for (const op of all) {
      const entry = doc.paths[op.path]?.[op.method.toLowerCase()];
      expect(entry?.operationId, `${op.method} ${op.path}`).toBe(op.name);
      expect(entry?.['x-gateway-access']).toEqual(op.access);
      expect((entry?.security as unknown[] | undefined)?.length === 0).toBe(op.access.kind === 'public');
    }
  });

  it('describes control-plane bodies field by field and points model operations to their reference', () => {
    const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
    const virtualKey = schemas.VirtualKey as { properties: Record<string, Json>; required: string[] };
    expect(virtualKey.required).toEqual(['name', 'provider', 'key']);
    expect(virtualKey.properties.budget_limit?.description).toContain('412');
    const chat = doc.paths['/v1/chat/completions']?.post as { externalDocs: { url: string } };
    expect(chat.externalDocs.url).toBe('https://platform.openai.com/docs/api-reference/chat');
    const messages = doc.paths['/v1/messages']?.post as { externalDocs: { url: string }; responses: Json };
    expect(messages.externalDocs.url).toContain('docs.anthropic.com');
    expect(messages.responses['4XX']).toEqual({ $ref: '#/components/responses/AnthropicError' });
    const params = doc.paths['/v1/chat/completions']?.post?.parameters as Json[];
    expect(params).toContainEqual({ $ref: '#/components/parameters/x-gateway-config' });
  });

  it('lists only routes the local server serves: none of them is an unknown route', async () => {
    const root = gw.url.replace(/\/v1$/, '');
    const checked = listed().filter(([, path]) => path !== REALTIME_OPERATION.path);
    for (const [method, template, op] of checked) {
      const path = template.replace(/\{\w+\}/g, 'x');
      // Without a key: routing comes before authentication, so a served route answers 401, not 404.
      const res = await fetch(`${root}${path}`, {
        method,
        ...(method === 'GET' || method === 'DELETE'
          ? {}
          : { body: '{}', headers: { 'content-type': 'application/json' } }),
      });
      const text = await res.text();
      expect(text, `${method} ${path}`).not.toContain('Unknown route');
      if ((op.security as unknown[]).length > 0) expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it('lists the realtime WebSocket, which the server upgrades (401 without a key, not 404)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${gw.url.replace(/^http/, 'ws')}/realtime?model=gpt-realtime`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('opened without a key')));
      ws.on('error', reject);
    });
    expect(status).toBe(401);
  });
});

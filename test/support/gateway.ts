import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { type RunningGateway, startGateway } from '../../local/server';

export const ADMIN_KEY = 'gwk_test_admin_key_0123456789';

export interface TestGateway extends RunningGateway {
  dataDir: string;
  /** An `openai` client pointed at the gateway; gateway headers as default headers. */
  client(options?: {
    apiKey?: string;
    gatewayKey?: string;
    headers?: Record<string, string>;
    maxRetries?: number;
  }): OpenAI;
  /** A control-plane call with the admin key (or the key given). */
  api(
    method: string,
    path: string,
    body?: unknown,
    key?: string,
    // biome-ignore lint/suspicious/noExplicitAny: replies of many shapes, asserted field by field in tests
  ): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/** Starts the real local server on a free port with an in-memory DynamoDB. One per test file. */
export async function startTestGateway(): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  const gateway = await startGateway({ port: 0, dataDir, inMemory: true, adminKey: ADMIN_KEY });
  return {
    ...gateway,
    dataDir,
    client(options = {}) {
      return new OpenAI({
        baseURL: gateway.url,
        apiKey: options.apiKey ?? 'sk-provider-key',
        maxRetries: options.maxRetries ?? 0,
        defaultHeaders: { 'x-gateway-api-key': options.gatewayKey ?? ADMIN_KEY, ...options.headers },
      });
    },
    async api(method, path, body, key = ADMIN_KEY) {
      const res = await fetch(`${gateway.url}${path}`, {
        method,
        headers: {
          'x-gateway-api-key': key,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async stop() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits for the log entry of a request id (it is written just after the reply's last byte). */
// biome-ignore lint/suspicious/noExplicitAny: a log entry, asserted field by field in tests
export async function waitForLog(gw: TestGateway, id: string, key = ADMIN_KEY): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const res = await gw.api('GET', `/logs/${id}`, undefined, key);
    if (res.status === 200) return res.body;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no log entry ${id}`);
}

/** Polls a virtual key's spend until it stops changing: settlements land just after each reply's last byte. */
export async function settledSpend(gw: TestGateway, slug: string): Promise<number> {
  const read = async () => Number((await gw.api('GET', `/virtual-keys/${slug}`)).body.spent);
  let last = await read();
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 30));
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  return last;
}

/**
 * Creates virtual key `slug` for OpenAI at `baseUrl` (a fake upstream), in `workspace` when given, with
 * `body`'s fields (budget, rate limit) on top; fails the test unless it is created.
 */
export async function createVirtualKey(
  gw: TestGateway,
  baseUrl: string,
  slug: string,
  body: Record<string, unknown> = {},
  workspace?: string,
): Promise<void> {
  const res = await gw.api('POST', `/virtual-keys${workspace ? `?workspace=${workspace}` : ''}`, {
    name: slug,
    slug,
    provider: 'openai',
    key: 'sk-budget',
    custom_host: baseUrl,
    ...(workspace ? { workspace } : {}),
    ...body,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeRealtime, startFakeRealtime } from '../support/fake-realtime';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/gateway';

// The relay reads its limit when the local server loads it, which is after this line.
process.env.GATEWAY_REALTIME_SESSION_LIMIT_MS = '1500';

let gw: TestGateway;
let fake: FakeRealtime;

beforeAll(async () => {
  [gw, fake] = await Promise.all([startTestGateway(), startFakeRealtime()]);
});
afterAll(async () => {
  await Promise.all([gw.stop(), fake.close()]);
});

it('ends a session at the limit with session_limit_reached and close code 4000', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${gw.port}/v1/realtime?model=gpt-realtime`, {
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-custom-host': fake.url },
  });
  const events: Array<{ type: string; error?: { code: string } }> = [];
  ws.on('message', (data) => events.push(JSON.parse(data.toString())));
  const closed = await new Promise<number>((r) => ws.once('close', (code) => r(code)));
  expect(closed).toBe(4000);
  expect(events[0]?.type).toBe('session.created');
  expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'session_limit_reached' } });
  expect((await fake.sessions[0]?.closed)?.code).toBe(1000);
});

import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { startFakeRealtime } from '../support/fake-realtime';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY } from '../support/gateway';

// The relay reads its limit when the local server loads it, which is after this line.
process.env.GATEWAY_REALTIME_SESSION_LIMIT_MS = '1500';

const { gw, fake } = useGateway({ fake: startFakeRealtime });

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

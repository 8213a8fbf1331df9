import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_EXPORT_COLUMNS } from '../../functions/store/log-export';
import { exportLocalLogs } from '../../scripts/logs-export';
import { completion, type FakeOpenAI, sendJson, startFakeOpenAI } from '../support/fake-openai';
import { startTestGateway, type TestGateway, waitForLog } from '../support/gateway';

let gw: TestGateway;
let fake: FakeOpenAI;

beforeAll(async () => {
  [gw, fake] = await Promise.all([startTestGateway(), startFakeOpenAI()]);
  fake.use((req, res) =>
    sendJson(
      res,
      200,
      completion(String(req.body.model), 'the private answer', { prompt_tokens: 7, completion_tokens: 3 }),
    ),
  );
});
afterAll(async () => {
  await Promise.all([gw.stop(), fake.close()]);
});

describe('npm run logs:export', () => {
  it('writes every log entry as one NDJSON record of the Athena table, without bodies', async () => {
    const ids: string[] = [];
    for (const user of ['alice', 'bob', 'alice']) {
      const { response } = await gw
        .client({ headers: { 'x-gateway-custom-host': fake.url } })
        .chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'the secret prompt' }],
          user,
        })
        .withResponse();
      ids.push(response.headers.get('x-gateway-request-id') as string);
    }
    const entries = await Promise.all(ids.map((id) => waitForLog(gw, id)));

    // The test gateway runs in this process: the script's stores reach its embedded DynamoDB.
    const lines: string[] = [];
    const count = await exportLocalLogs((line) => lines.push(line));
    expect(count).toBe(lines.length);
    const records = lines.map((line) => {
      expect(line.endsWith('\n')).toBe(true);
      return JSON.parse(line) as Record<string, unknown>;
    });
    for (const entry of entries) {
      const record = records.find((r) => r.id === entry.id);
      expect(record).toMatchObject({
        trace_id: entry.trace_id,
        workspace: entry.workspace,
        user: entry.user,
        model: entry.model,
        status: 200,
        prompt_tokens: 7,
        completion_tokens: 3,
        cost: entry.cost,
      });
      expect(Object.keys(record ?? {})).toEqual(LOG_EXPORT_COLUMNS.map(([name]) => name));
    }
    expect(lines.join('')).not.toMatch(/secret prompt|private answer/);
  });
});

import { describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-openai';
import { useGateway } from '../support/fixture';
import { ADMIN_KEY, waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeOpenAI });

const chat = (gatewayKey: string) =>
  gw
    .client({ gatewayKey, headers: { 'x-gateway-custom-host': fake.url } })
    .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();

describe('organisation, workspaces and API keys', () => {
  it('describes the organisation with its default workspace', async () => {
    const res = await gw.api('GET', '/organisation');
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(gw.organisationId);
    expect(res.body.workspaces.map((w: { slug: string }) => w.slug)).toContain('default');
  });

  it('creates a workspace key that is returned once, stored hashed, and listed without secrets', async () => {
    const created = await gw.api('POST', '/api-keys', {
      name: 'ci',
      type: 'workspace',
      workspace: 'default',
      scopes: ['completions.write'],
    });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^gwk_/);
    expect(created.body).toMatchObject({
      name: 'ci',
      type: 'workspace',
      workspace: 'default',
      scopes: ['completions.write'],
    });

    const listed = await gw.api('GET', '/api-keys');
    expect(listed.body.object).toBe('list');
    const mine = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(mine).toBeTruthy();
    expect(mine.key).toBeUndefined();
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
    expect(JSON.stringify(listed.body)).not.toMatch(/key_hash|[0-9a-f]{64}/);
    expect(mine.last_four).toBe(created.body.key.slice(-4));

    const { data } = await chat(created.body.key);
    expect(data.choices[0]?.message.content).toBe('Echo: hi');
  });

  it('enforces scopes: chat needs completions.write, logs need logs.view, admin operations need the admin key', async () => {
    const logsOnly = await gw.api('POST', '/api-keys', { name: 'reader', scopes: ['logs.view'] });
    const failure = await chat(logsOnly.body.key).catch(
      (e: { status: number; message: string; headers: Headers }) => e,
    );
    expect((failure as { status: number }).status).toBe(403);
    expect((failure as { message: string }).message).toContain('completions.write');

    const chatOnly = await gw.api('POST', '/api-keys', { name: 'writer', scopes: ['completions.write'] });
    expect((await gw.api('GET', '/logs', undefined, chatOnly.body.key)).status).toBe(403);
    expect((await gw.api('GET', '/logs', undefined, logsOnly.body.key)).status).toBe(200);
    expect((await gw.api('POST', '/workspaces', { name: 'Nope' }, logsOnly.body.key)).status).toBe(403);
    expect((await gw.api('GET', '/api-keys', undefined, chatOnly.body.key)).status).toBe(403);
  });

  it('logs a request refused for a missing scope', async () => {
    const logsOnly = await gw.api('POST', '/api-keys', { name: 'reader2', scopes: ['logs.view'] });
    const failure = (await chat(logsOnly.body.key).catch((e: unknown) => e)) as { headers: Headers };
    const log = await waitForLog(gw, failure.headers.get('x-gateway-request-id') as string);
    expect(log.status).toBe(403);
    expect(log.auth.key_id).toBe(logsOnly.body.id);
  });

  it('a key cannot grant scopes it lacks, nor create organisation keys', async () => {
    const manager = await gw.api('POST', '/api-keys', {
      name: 'mgr',
      scopes: ['api_keys.write', 'completions.write'],
    });
    const escalate = await gw.api(
      'POST',
      '/api-keys',
      { name: 'x', scopes: ['logs.view'] },
      manager.body.key,
    );
    expect(escalate.status).toBe(403);
    const org = await gw.api('POST', '/api-keys', { name: 'x', type: 'organisation' }, manager.body.key);
    expect(org.status).toBe(403);
    const ok = await gw.api(
      'POST',
      '/api-keys',
      { name: 'x', scopes: ['completions.write'] },
      manager.body.key,
    );
    expect(ok.status).toBe(201);
  });

  it('validates key requests', async () => {
    expect((await gw.api('POST', '/api-keys', { scopes: [] })).status).toBe(400);
    expect((await gw.api('POST', '/api-keys', { name: 'x', scopes: ['everything'] })).status).toBe(400);
    expect((await gw.api('POST', '/api-keys', { name: 'x', workspace: 'missing' })).status).toBe(400);
    expect((await gw.api('POST', '/api-keys', 'not json')).status).toBe(400);
  });

  it('a deleted key stops working within the cache time', async () => {
    const created = await gw.api('POST', '/api-keys', { name: 'temp', scopes: ['completions.write'] });
    await chat(created.body.key);
    const deleted = await gw.api('DELETE', `/api-keys/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.body.id, deleted: true });
    await new Promise((r) => setTimeout(r, 400)); // GATEWAY_AUTH_CACHE_TTL_MS is 300 in tests
    const failure = (await chat(created.body.key).catch((e: unknown) => e)) as { status: number };
    expect(failure.status).toBe(401);
    expect((await gw.api('DELETE', `/api-keys/${created.body.id}`)).status).toBe(404);
  });

  it('scopes logs to the workspace of a workspace key; the admin sees every workspace', async () => {
    const ws = await gw.api('POST', '/workspaces', { name: 'Team Blue' });
    expect(ws.status).toBe(201);
    expect(ws.body.slug).toBe('team-blue');
    expect((await gw.api('POST', '/workspaces', { name: 'Team Blue' })).status).toBe(409);
    const blue = await gw.api('POST', '/api-keys', {
      name: 'blue',
      workspace: 'team-blue',
      scopes: ['completions.write', 'logs.view'],
    });
    const red = await gw.api('POST', '/api-keys', {
      name: 'red',
      workspace: 'default',
      scopes: ['completions.write', 'logs.view'],
    });

    const { response: blueReply } = await chat(blue.body.key);
    const { response: redReply } = await chat(red.body.key);
    const blueId = blueReply.headers.get('x-gateway-request-id') as string;
    const redId = redReply.headers.get('x-gateway-request-id') as string;
    const blueLog = await waitForLog(gw, blueId);
    expect(blueLog.workspace).toBe('team-blue');

    const blueSees = await gw.api('GET', '/logs?limit=100', undefined, blue.body.key);
    const blueIds = blueSees.body.data.map((l: { id: string }) => l.id);
    expect(blueIds).toContain(blueId);
    expect(blueIds).not.toContain(redId);
    expect((await gw.api('GET', `/logs/${redId}`, undefined, blue.body.key)).status).toBe(404);
    expect((await gw.api('GET', `/logs/${blueId}`, undefined, blue.body.key)).status).toBe(200);

    const adminSees = await gw.api('GET', '/logs?limit=100', undefined, ADMIN_KEY);
    const adminIds = adminSees.body.data.map((l: { id: string }) => l.id);
    expect(adminIds).toEqual(expect.arrayContaining([blueId, redId]));
    const adminBlue = await gw.api('GET', '/logs?workspace=team-blue&limit=100');
    expect(adminBlue.body.data.every((l: { workspace: string }) => l.workspace === 'team-blue')).toBe(true);
  });

  it('filters logs by status, model and time, and rejects bad filters', async () => {
    const before = Date.now() - 1;
    const { response } = await gw
      .client({ headers: { 'x-gateway-custom-host': fake.url } })
      .chat.completions.create({ model: 'gpt-4.1-nano', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const id = response.headers.get('x-gateway-request-id') as string;
    await waitForLog(gw, id);
    const byModel = await gw.api('GET', '/logs?model=gpt-4.1-nano&status=200');
    expect(byModel.body.data.map((l: { id: string }) => l.id)).toEqual([id]);
    const inRange = await gw.api(
      'GET',
      `/logs?model=gpt-4.1-nano&from=${new Date(before).toISOString()}&to=${Date.now() + 1000}`,
    );
    expect(inRange.body.data).toHaveLength(1);
    const tooEarly = await gw.api('GET', `/logs?model=gpt-4.1-nano&to=${before - 60_000}`);
    expect(tooEarly.body.data).toHaveLength(0);
    expect((await gw.api('GET', '/logs?limit=0')).status).toBe(400);
    expect((await gw.api('GET', '/logs?from=yesterday')).status).toBe(400);
    expect((await gw.api('GET', '/logs?cursor=garbage!')).status).toBe(400);
  });
});

import { APIError, toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/fake-openai';
import { formFields, startFakeApi } from '../support/fake-openai-api';
import { useGateway } from '../support/fixture';
import { waitForLog } from '../support/gateway';

const { gw, fake } = useGateway({ fake: startFakeApi });

const client = () => gw.client({ headers: { 'x-gateway-custom-host': fake.url } });
const requestId = (response: Response) => response.headers.get('x-gateway-request-id') as string;
const upstreamCalls = () => fake.requests.map((r) => `${r.method} ${r.url}`);

describe('files', () => {
  it('uploads a file as multipart, byte for byte with the client boundary, and logs it', async () => {
    const bytes = Buffer.concat([Buffer.from('{"prompt":"a"}\n'), Buffer.from([0xff, 0x00, 0xfe])]);
    const { data, response } = await client()
      .files.create({ file: await toFile(bytes, 'train.jsonl'), purpose: 'fine-tune' })
      .withResponse();
    expect(data).toMatchObject({
      id: 'file-fake1',
      object: 'file',
      filename: 'train.jsonl',
      purpose: 'fine-tune',
    });
    const upstream = fake.requests[0];
    expect(upstream?.raw.includes(bytes)).toBe(true);
    const clientBoundary = /boundary=(.+)$/.exec(String(upstream?.headers['content-type']))?.[1];
    expect(upstream?.raw.toString('latin1')).toContain(`--${clientBoundary}`);
    expect(formFields(upstream as never).purpose).toBe('fine-tune');
    expect(upstream?.headers.authorization).toBe('Bearer sk-provider-key');
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({
      operation: 'files.create',
      status: 200,
      request: {
        fields: { purpose: 'fine-tune' },
        files: [{ filename: 'train.jsonl', bytes: bytes.length }],
      },
      response: { id: 'file-fake1' },
    });
  });

  it('lists, retrieves and deletes files, passing the query string through', async () => {
    const c = client();
    const page = await c.files.list({ purpose: 'assistants', limit: 5 });
    expect(page.data[0]?.id).toBe('file-fake1');
    expect((await c.files.retrieve('file-xyz')).id).toBe('file-xyz');
    expect((await c.files.delete('file-xyz')).deleted).toBe(true);
    expect(upstreamCalls()).toEqual([
      'GET /v1/files?purpose=assistants&limit=5',
      'GET /v1/files/file-xyz',
      'DELETE /v1/files/file-xyz',
    ]);
  });

  it('streams file content to the client before the provider has sent all of it', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let winner = '';
    fake.on('GET /v1/files/{id}/content', async (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="x.bin"',
      });
      res.write(Buffer.from([1, 2, 3]));
      winner = await Promise.race([released.then(() => 'client'), sleep(3000).then(() => 'timeout')]);
      res.end(Buffer.from([4, 5]));
    });
    const res = await client().files.content('file-abc');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="x.bin"');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const parts: number[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(...value);
      release();
    }
    expect(winner).toBe('client');
    expect(parts).toEqual([1, 2, 3, 4, 5]);
    const log = await waitForLog(gw, requestId(res));
    expect(log).toMatchObject({ operation: 'files.content', response: { bytes: 5 } });
  });

  it('keeps a provider 404 as it is', async () => {
    fake.on('GET /v1/files/{id}', (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: 'No such File object: file-no',
            type: 'invalid_request_error',
            param: 'id',
            code: null,
          },
        }),
      );
    });
    const failure = (await client()
      .files.retrieve('file-no')
      .catch((e: unknown) => e)) as APIError;
    expect(failure).toBeInstanceOf(APIError);
    expect(failure.status).toBe(404);
    expect(failure.message).toContain('No such File object');
  });
});

describe('vector stores', () => {
  it('creates, reads, updates, searches and deletes stores and their files', async () => {
    const c = client();
    const store = await c.vectorStores.create({ name: 'docs', file_ids: ['file-fake1'] });
    expect(store).toMatchObject({ id: 'vs_fake1', object: 'vector_store', name: 'docs' });
    expect((await c.vectorStores.list()).data).toHaveLength(1);
    expect((await c.vectorStores.retrieve('vs_fake1')).id).toBe('vs_fake1');
    expect((await c.vectorStores.update('vs_fake1', { name: 'renamed' })).name).toBe('renamed');
    const file = await c.vectorStores.files.create('vs_fake1', { file_id: 'file-fake1' });
    expect(file).toMatchObject({ id: 'file-fake1', vector_store_id: 'vs_fake1', status: 'completed' });
    expect((await c.vectorStores.files.list('vs_fake1')).data[0]?.id).toBe('file-fake1');
    expect((await c.vectorStores.files.retrieve('file-fake1', { vector_store_id: 'vs_fake1' })).id).toBe(
      'file-fake1',
    );
    const results = await c.vectorStores.search('vs_fake1', { query: 'hello', max_num_results: 3 });
    expect(results.data[0]?.content[0]?.text).toBe('hello world');
    expect((await c.vectorStores.files.delete('file-fake1', { vector_store_id: 'vs_fake1' })).deleted).toBe(
      true,
    );
    expect((await c.vectorStores.delete('vs_fake1')).deleted).toBe(true);
    expect(upstreamCalls()).toEqual([
      'POST /v1/vector_stores',
      'GET /v1/vector_stores',
      'GET /v1/vector_stores/vs_fake1',
      'POST /v1/vector_stores/vs_fake1',
      'POST /v1/vector_stores/vs_fake1/files',
      'GET /v1/vector_stores/vs_fake1/files',
      'GET /v1/vector_stores/vs_fake1/files/file-fake1',
      'POST /v1/vector_stores/vs_fake1/search',
      'DELETE /v1/vector_stores/vs_fake1/files/file-fake1',
      'DELETE /v1/vector_stores/vs_fake1',
    ]);
    expect(fake.requests[7]?.json).toEqual({ query: 'hello', max_num_results: 3 });
  });

  it('refuses a search without a query', async () => {
    const failure = (await client()
      .vectorStores.search('vs_fake1', {} as never)
      .catch((e: unknown) => e)) as APIError;
    expect(failure.status).toBe(400);
    expect(failure.param).toBe('query');
  });
});

describe('fine-tuning', () => {
  it('creates, lists, retrieves and cancels jobs, and reads their events and checkpoints', async () => {
    const c = client();
    const { data: job, response } = await c.fineTuning.jobs
      .create({ model: 'gpt-4o-mini', training_file: 'file-train' })
      .withResponse();
    expect(job).toMatchObject({ id: 'ftjob-fake1', status: 'queued' });
    expect((await c.fineTuning.jobs.list({ limit: 2 })).data[0]?.id).toBe('ftjob-fake1');
    expect((await c.fineTuning.jobs.retrieve('ftjob-fake1')).status).toBe('running');
    expect((await c.fineTuning.jobs.cancel('ftjob-fake1')).status).toBe('cancelled');
    expect((await c.fineTuning.jobs.listEvents('ftjob-fake1')).data[0]?.message).toBe('Job started');
    expect((await c.fineTuning.jobs.checkpoints.list('ftjob-fake1')).data[0]?.step_number).toBe(10);
    expect(upstreamCalls()).toEqual([
      'POST /v1/fine_tuning/jobs',
      'GET /v1/fine_tuning/jobs?limit=2',
      'GET /v1/fine_tuning/jobs/ftjob-fake1',
      'POST /v1/fine_tuning/jobs/ftjob-fake1/cancel',
      'GET /v1/fine_tuning/jobs/ftjob-fake1/events',
      'GET /v1/fine_tuning/jobs/ftjob-fake1/checkpoints',
    ]);
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({ operation: 'fine_tuning.jobs.create', model: 'gpt-4o-mini', status: 200 });
  });

  it('refuses a job without a training file', async () => {
    const failure = (await client()
      .fineTuning.jobs.create({ model: 'gpt-4o-mini' } as never)
      .catch((e: unknown) => e)) as APIError;
    expect(failure.status).toBe(400);
    expect(failure.param).toBe('training_file');
  });
});

describe('models and embeddings', () => {
  it('lists and retrieves models', async () => {
    const c = client();
    const ids = [];
    for await (const m of c.models.list()) ids.push(m.id);
    expect(ids).toEqual(['gpt-4o-mini', 'text-embedding-3-small']);
    const { data, response } = await c.models.retrieve('gpt-4o-mini').withResponse();
    expect(data).toMatchObject({ id: 'gpt-4o-mini', object: 'model' });
    expect(fake.requests[1]?.pathname).toBe('/v1/models/gpt-4o-mini');
    expect((await waitForLog(gw, requestId(response))).operation).toBe('models.get');
  });

  it('creates embeddings and logs tokens and cost', async () => {
    const { data, response } = await client()
      .embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' })
      .withResponse();
    expect(data.data).toHaveLength(2);
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({
      operation: 'embeddings.create',
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 16, completion_tokens: 0, total_tokens: 16 },
    });
    expect(log.cost).toBeCloseTo((16 * 0.02) / 1e6, 12);
  });

  it('routes `@slug/model` through a virtual key and sends only the model upstream', async () => {
    await gw.api('POST', '/virtual-keys', {
      name: 'emb',
      slug: 'emb-key',
      provider: 'openai',
      key: 'sk-emb',
      custom_host: fake.url,
    });
    const { response } = await gw
      .client()
      .embeddings.create({ model: '@emb-key/text-embedding-3-large', input: 'hello' })
      .withResponse();
    expect(fake.requests[0]?.json.model).toBe('text-embedding-3-large');
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-emb');
    const log = await waitForLog(gw, requestId(response));
    expect(log).toMatchObject({ virtual_key: 'emb-key', model: 'text-embedding-3-large' });
    expect(log.cost).toBeCloseTo((8 * 0.13) / 1e6, 12);
  });

  it('needs completions.write like every model operation', async () => {
    const key = await gw.api('POST', '/api-keys', {
      name: 'reader',
      type: 'workspace',
      workspace: 'default',
      scopes: ['logs.view'],
    });
    const failure = (await gw
      .client({ gatewayKey: key.body.key, headers: { 'x-gateway-custom-host': fake.url } })
      .models.list()
      .catch((e: unknown) => e)) as APIError;
    expect(failure.status).toBe(403);
    expect(fake.requests).toHaveLength(0);
  });
});

import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSse, sendJson } from './fake-openai';

// A fake of the rest of the OpenAI API on 127.0.0.1: Responses, images, videos, audio, files, vector
// stores, fine-tuning, models and embeddings, in their wire format (shapes from the API reference).
// Routes are `METHOD /v1/path/{param}`; a test replaces one with `on`, `reset` restores the defaults.

export interface ApiRequest {
  method: string;
  /** Path with its query string, as received. */
  url: string;
  pathname: string;
  query: URLSearchParams;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: Buffer;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body of any operation, read field by field in tests
  json: any;
}

export type ApiRoute = (req: ApiRequest, res: ServerResponse) => Promise<void> | void;

export interface FakeApi {
  url: string;
  requests: ApiRequest[];
  on(route: string, handler: ApiRoute): void;
  reset(): void;
  close(): Promise<void>;
}

const CREATED = 1_732_000_000;

export function responseObject(model: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_fake123',
    object: 'response',
    created_at: CREATED,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model,
    output: [
      {
        type: 'message',
        id: 'msg_fake123',
        status: 'completed',
        role: 'assistant',
        content: [
          {
            type: 'output_text',
            text,
            annotations: [
              {
                type: 'url_citation',
                start_index: 0,
                end_index: 4,
                url: 'https://example.com',
                title: 'Example',
              },
            ],
          },
        ],
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 30,
    },
    user: null,
    metadata: {},
    ...extra,
  };
}

export const sseEvent = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** The events of a streamed response, in the order the Responses API sends them. */
export function responseEvents(model: string, words: string[]): string[] {
  const text = words.join('');
  const base = responseObject(model, text);
  const pending = { ...base, status: 'in_progress', output: [], usage: null };
  let seq = 0;
  const ev = (type: string, fields: Record<string, unknown>) =>
    sseEvent({ type, sequence_number: seq++, ...fields });
  const item = { id: 'msg_fake123', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  return [
    ev('response.created', { response: pending }),
    ev('response.in_progress', { response: pending }),
    ev('response.output_item.added', { output_index: 0, item }),
    ev('response.content_part.added', {
      item_id: 'msg_fake123',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    }),
    ...words.map((delta) =>
      ev('response.output_text.delta', { item_id: 'msg_fake123', output_index: 0, content_index: 0, delta }),
    ),
    ev('response.output_text.done', { item_id: 'msg_fake123', output_index: 0, content_index: 0, text }),
    ev('response.output_item.done', { output_index: 0, item: base.output[0] }),
    ev('response.completed', { response: base }),
  ];
}

const list = (data: unknown[]) => ({
  object: 'list',
  data,
  first_id: null,
  last_id: null,
  has_more: false,
});

export const fileObject = (id: string, filename: string, bytes: number, purpose: string) => ({
  id,
  object: 'file',
  bytes,
  created_at: CREATED,
  filename,
  purpose,
  status: 'processed',
  expires_at: null,
  status_details: null,
});

const vectorStore = (id: string, name: string) => ({
  id,
  object: 'vector_store',
  created_at: CREATED,
  name,
  usage_bytes: 0,
  file_counts: { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 },
  status: 'completed',
  expires_after: null,
  expires_at: null,
  last_active_at: CREATED,
  metadata: {},
});

const vectorStoreFile = (vs: string, id: string) => ({
  id,
  object: 'vector_store.file',
  usage_bytes: 1234,
  created_at: CREATED,
  vector_store_id: vs,
  status: 'completed',
  last_error: null,
  chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
  attributes: {},
});

const fineTuningJob = (id: string, model: string, status = 'queued') => ({
  id,
  object: 'fine_tuning.job',
  created_at: CREATED,
  error: null,
  fine_tuned_model: null,
  finished_at: null,
  hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' },
  model,
  organization_id: 'org-fake',
  result_files: [],
  seed: 42,
  status,
  trained_tokens: null,
  training_file: 'file-train',
  validation_file: null,
  estimated_finish: null,
  integrations: [],
  metadata: null,
  method: { type: 'supervised' },
});

export const video = (id: string, model: string, status: string, extra: Record<string, unknown> = {}) => ({
  id,
  object: 'video',
  model,
  status,
  progress: status === 'completed' ? 100 : 0,
  created_at: CREATED,
  completed_at: status === 'completed' ? CREATED + 60 : null,
  expires_at: null,
  size: '720x1280',
  seconds: '8',
  quality: 'standard',
  remixed_from_video_id: null,
  error: null,
  prompt: 'A cat on a skateboard',
  ...extra,
});

/** Text fields of a multipart body (the test side's own reading, independent of the gateway's). */
export function formFields(req: ApiRequest): Record<string, string> {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/.exec(String(req.headers['content-type']));
  const boundary = m?.[1] ?? m?.[2];
  const fields: Record<string, string> = {};
  if (!boundary) return fields;
  for (const part of req.raw.toString('latin1').split(`--${boundary}`)) {
    const cut = part.indexOf('\r\n\r\n');
    if (cut === -1) continue;
    const head = part.slice(0, cut);
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (!name || /filename=/.test(head)) continue;
    fields[name] = Buffer.from(part.slice(cut + 4).replace(/\r\n$/, ''), 'latin1').toString('utf8');
  }
  return fields;
}

function defaults(): Record<string, ApiRoute> {
  return {
    'POST /v1/responses': async (req, res) => {
      const model = String(req.json.model);
      if (req.json.stream) {
        openSse(res);
        for (const e of responseEvents(model, ['Hel', 'lo'])) res.write(e);
        res.end();
        return;
      }
      sendJson(res, 200, responseObject(model, 'Hello'));
    },
    'GET /v1/responses/{id}': (req, res) =>
      sendJson(res, 200, responseObject('gpt-4o-mini', 'Hello', { id: req.params.id })),
    'DELETE /v1/responses/{id}': (req, res) =>
      sendJson(res, 200, { id: req.params.id, object: 'response', deleted: true }),
    'GET /v1/responses/{id}/input_items': (_req, res) =>
      sendJson(
        res,
        200,
        list([
          {
            id: 'msg_in1',
            type: 'message',
            role: 'user',
            status: 'completed',
            content: [{ type: 'input_text', text: 'Hi' }],
          },
        ]),
      ),
    'POST /v1/responses/{id}/cancel': (req, res) =>
      sendJson(res, 200, responseObject('gpt-4o-mini', '', { id: req.params.id, status: 'cancelled' })),

    'POST /v1/images/generations': (req, res) => {
      const model = String(req.json.model ?? 'dall-e-2');
      const n = Number(req.json.n ?? 1);
      const data = Array.from({ length: n }, () =>
        model.startsWith('gpt-image')
          ? { b64_json: 'aW1hZ2U=' }
          : { url: 'https://example.com/i.png', revised_prompt: 'x' },
      );
      sendJson(res, 200, {
        created: CREATED,
        data,
        ...(model.startsWith('gpt-image')
          ? {
              usage: {
                total_tokens: 1100,
                input_tokens: 50,
                output_tokens: 1050,
                input_tokens_details: { text_tokens: 50, image_tokens: 0 },
              },
            }
          : {}),
      });
    },
    'POST /v1/images/edits': (_req, res) =>
      sendJson(res, 200, {
        created: CREATED,
        data: [{ b64_json: 'ZWRpdGVk' }],
        usage: {
          total_tokens: 1400,
          input_tokens: 350,
          output_tokens: 1050,
          input_tokens_details: { text_tokens: 30, image_tokens: 320 },
        },
      }),
    'POST /v1/images/variations': (_req, res) =>
      sendJson(res, 200, { created: CREATED, data: [{ url: 'https://example.com/v.png' }] }),

    'POST /v1/videos': (req, res) => {
      const fields = req.json ?? formFields(req);
      sendJson(res, 200, video('video_fake1', String(fields.model ?? 'sora-2'), 'queued'));
    },
    'GET /v1/videos/{id}': (req, res) =>
      sendJson(res, 200, video(req.params.id ?? '', 'sora-2', 'completed')),
    'GET /v1/videos/{id}/content': (_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(Buffer.from([0, 0, 0, 24, 102, 116, 121, 112]));
    },

    'POST /v1/audio/transcriptions': (req, res) => {
      const model = formFields(req).model;
      sendJson(
        res,
        200,
        model === 'whisper-1'
          ? { text: 'Hello from the audio.', usage: { type: 'duration', seconds: 90 } }
          : {
              text: 'Hello from the audio.',
              usage: {
                type: 'tokens',
                input_tokens: 100,
                input_token_details: { text_tokens: 10, audio_tokens: 90 },
                output_tokens: 20,
                total_tokens: 120,
              },
            },
      );
    },
    // As OpenAI answers: only verbose_json says how long the audio was.
    'POST /v1/audio/translations': (req, res) => {
      const format = formFields(req).response_format ?? 'json';
      if (format === 'text') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('Hello in English.\n');
        return;
      }
      if (format !== 'verbose_json') return sendJson(res, 200, { text: 'Hello in English.' });
      sendJson(res, 200, {
        task: 'translate',
        language: 'english',
        duration: 30,
        text: 'Hello in English.',
        segments: [
          { id: 0, seek: 0, start: 0, end: 1.5, text: ' Hello', tokens: [], temperature: 0 },
          { id: 1, seek: 0, start: 1.5, end: 3.25, text: ' in English.', tokens: [], temperature: 0 },
        ],
      });
    },
    'POST /v1/audio/speech': (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.end(Buffer.from('ID3-fake-mp3-bytes'));
    },

    'POST /v1/files': (req, res) => {
      const fields = formFields(req);
      const filename = /filename="([^"]+)"/.exec(req.raw.toString('latin1'))?.[1] ?? 'upload';
      sendJson(res, 200, fileObject('file-fake1', filename, req.raw.length, fields.purpose ?? 'assistants'));
    },
    'GET /v1/files': (_req, res) =>
      sendJson(res, 200, list([fileObject('file-fake1', 'notes.txt', 11, 'assistants')])),
    'GET /v1/files/{id}': (req, res) =>
      sendJson(res, 200, fileObject(req.params.id ?? '', 'notes.txt', 11, 'assistants')),
    'DELETE /v1/files/{id}': (req, res) =>
      sendJson(res, 200, { id: req.params.id, object: 'file', deleted: true }),
    'GET /v1/files/{id}/content': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from('hello world'));
    },

    'POST /v1/vector_stores': (req, res) =>
      sendJson(res, 200, vectorStore('vs_fake1', String(req.json.name ?? ''))),
    'GET /v1/vector_stores': (_req, res) => sendJson(res, 200, list([vectorStore('vs_fake1', 'docs')])),
    'GET /v1/vector_stores/{id}': (req, res) => sendJson(res, 200, vectorStore(req.params.id ?? '', 'docs')),
    'POST /v1/vector_stores/{id}': (req, res) =>
      sendJson(res, 200, vectorStore(req.params.id ?? '', String(req.json.name))),
    'DELETE /v1/vector_stores/{id}': (req, res) =>
      sendJson(res, 200, { id: req.params.id, object: 'vector_store.deleted', deleted: true }),
    'POST /v1/vector_stores/{id}/search': (req, res) =>
      sendJson(res, 200, {
        object: 'vector_store.search_results.page',
        search_query: [req.json.query],
        data: [
          {
            file_id: 'file-fake1',
            filename: 'notes.txt',
            score: 0.9,
            attributes: {},
            content: [{ type: 'text', text: 'hello world' }],
          },
        ],
        has_more: false,
        next_page: null,
      }),
    'POST /v1/vector_stores/{id}/files': (req, res) =>
      sendJson(res, 200, vectorStoreFile(req.params.id ?? '', String(req.json.file_id))),
    'GET /v1/vector_stores/{id}/files': (req, res) =>
      sendJson(res, 200, list([vectorStoreFile(req.params.id ?? '', 'file-fake1')])),
    'GET /v1/vector_stores/{id}/files/{file}': (req, res) =>
      sendJson(res, 200, vectorStoreFile(req.params.id ?? '', req.params.file ?? '')),
    'DELETE /v1/vector_stores/{id}/files/{file}': (req, res) =>
      sendJson(res, 200, { id: req.params.file, object: 'vector_store.file.deleted', deleted: true }),

    'POST /v1/fine_tuning/jobs': (req, res) =>
      sendJson(res, 200, fineTuningJob('ftjob-fake1', String(req.json.model))),
    'GET /v1/fine_tuning/jobs': (_req, res) =>
      sendJson(res, 200, list([fineTuningJob('ftjob-fake1', 'gpt-4o-mini')])),
    'GET /v1/fine_tuning/jobs/{id}': (req, res) =>
      sendJson(res, 200, fineTuningJob(req.params.id ?? '', 'gpt-4o-mini', 'running')),
    'POST /v1/fine_tuning/jobs/{id}/cancel': (req, res) =>
      sendJson(res, 200, fineTuningJob(req.params.id ?? '', 'gpt-4o-mini', 'cancelled')),
    'GET /v1/fine_tuning/jobs/{id}/events': (_req, res) =>
      sendJson(
        res,
        200,
        list([
          {
            id: 'ftevent-1',
            object: 'fine_tuning.job.event',
            created_at: CREATED,
            level: 'info',
            message: 'Job started',
            data: null,
            type: 'message',
          },
        ]),
      ),
    'GET /v1/fine_tuning/jobs/{id}/checkpoints': (req, res) =>
      sendJson(
        res,
        200,
        list([
          {
            id: 'ftckpt-1',
            object: 'fine_tuning.job.checkpoint',
            created_at: CREATED,
            fine_tuned_model_checkpoint: 'ft:gpt-4o-mini:org:ckpt-1',
            fine_tuning_job_id: req.params.id,
            metrics: { step: 10, train_loss: 0.5 },
            step_number: 10,
          },
        ]),
      ),

    'GET /v1/models': (_req, res) =>
      sendJson(
        res,
        200,
        list([
          { id: 'gpt-4o-mini', object: 'model', created: CREATED, owned_by: 'system' },
          { id: 'text-embedding-3-small', object: 'model', created: CREATED, owned_by: 'system' },
        ]),
      ),
    'GET /v1/models/{model}': (req, res) =>
      sendJson(res, 200, { id: req.params.model, object: 'model', created: CREATED, owned_by: 'system' }),
    'POST /v1/embeddings': (req, res) => {
      const inputs = Array.isArray(req.json.input) ? req.json.input : [req.json.input];
      sendJson(res, 200, {
        object: 'list',
        data: inputs.map((_: unknown, index: number) => ({
          object: 'embedding',
          index,
          embedding: [0.1, -0.2, 0.3],
        })),
        model: req.json.model,
        usage: { prompt_tokens: 8 * inputs.length, total_tokens: 8 * inputs.length },
      });
    },
  };
}

function compile(route: string): { method: string; pattern: RegExp; names: string[] } {
  const [method, path] = route.split(' ') as [string, string];
  const names: string[] = [];
  const source = path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { method, pattern: new RegExp(`^${source}$`), names };
}

export async function startFakeApi(): Promise<FakeApi> {
  let routes = defaults();
  const requests: ApiRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    let json: unknown;
    if (/json/.test(String(req.headers['content-type'])) && raw.length > 0) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    for (const [key, handler] of Object.entries(routes)) {
      const { method, pattern, names } = compile(key);
      const m = method === req.method ? pattern.exec(url.pathname) : null;
      if (!m) continue;
      const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? '')]));
      const recorded: ApiRequest = {
        method,
        url: req.url ?? '',
        pathname: url.pathname,
        query: url.searchParams,
        params,
        headers: req.headers,
        raw,
        json,
      };
      requests.push(recorded);
      try {
        await handler(recorded, res);
      } catch {
        res.destroy();
      }
      return;
    }
    sendJson(res, 404, {
      error: { message: `fake: no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' },
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    on(route, handler) {
      routes[route] = handler;
    },
    reset() {
      routes = defaults();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

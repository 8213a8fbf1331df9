// `npx tsx bench/provider-translation.ts`: the cost of translating one provider stream chunk into an
// OpenAI chunk (decoding included: SSE for Anthropic, the binary event stream for Bedrock), the cost
// of one chat chunk turned into Anthropic's events on /v1/messages, and the bundle size each adapter
// adds to the chat function. Figures vary with the machine.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { anthropicWriter } from '../functions/gateway/messages';
import { anthropic } from '../functions/providers/anthropic/api';
import { bedrock } from '../functions/providers/bedrock/api';
import type { ChatContext, ProviderAdapter } from '../functions/providers/types';
import { esbuildOptions, startupBytes, startupOutputs } from '../lib/bundling';
import { sse } from '../test/support/fake-anthropic';
import { awsEvent } from '../test/support/fake-bedrock';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHUNKS = 2000;
const ROUNDS = 30;

function anthropicStream(): Buffer {
  const parts = [
    sse('message_start', {
      type: 'message_start',
      message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 10, output_tokens: 1 } },
    }),
  ];
  for (let i = 0; i < CHUNKS; i++) {
    parts.push(
      sse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'word ' },
      }),
    );
  }
  parts.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn' },
      usage: { output_tokens: CHUNKS },
    }),
  );
  parts.push(sse('message_stop', { type: 'message_stop' }));
  return Buffer.from(parts.join(''));
}

function bedrockStream(): Buffer {
  const parts = [awsEvent('messageStart', { role: 'assistant' })];
  for (let i = 0; i < CHUNKS; i++)
    parts.push(awsEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'word ' } }));
  parts.push(awsEvent('messageStop', { stopReason: 'end_turn' }));
  parts.push(awsEvent('metadata', { usage: { inputTokens: 10, outputTokens: CHUNKS } }));
  return Buffer.concat(parts);
}

/** Microseconds per upstream event: decode, translate, serialise as the gateway writes it. */
function perChunk(adapter: ProviderAdapter, bytes: Buffer): number {
  const chat = adapter.chat;
  if (!chat) throw new Error(`${adapter.name} has no translation`);
  const ctx: ChatContext = { model: 'm', stream: true, baseUrl: '', target: {} };
  // Network reads come in pieces: feed 4 KB at a time, as a socket would.
  const run = () => {
    const decoder = chat.decoder();
    const translator = chat.stream(ctx);
    let out = 0;
    for (let i = 0; i < bytes.length; i += 4096) {
      for (const ev of decoder.push(bytes.subarray(i, i + 4096))) {
        for (const c of translator.push(ev)) out += JSON.stringify(c).length;
      }
    }
    for (const c of translator.end()) out += JSON.stringify(c).length;
    return out;
  };
  for (let i = 0; i < 5; i++) run();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    run();
    times.push(((performance.now() - t0) * 1000) / (CHUNKS + 4));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

/** The chat stream the pipeline writes: text chunks, a tool call in pieces, finish, usage, [DONE]. */
function chatStream(): string[] {
  const data = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
  const c = (delta: unknown, finish: string | null = null) =>
    data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  const parts = [c({ role: 'assistant', content: '' })];
  for (let i = 0; i < CHUNKS - 4; i++) parts.push(c({ content: 'word ' }));
  parts.push(
    c({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
  );
  parts.push(c({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }));
  parts.push(c({}, 'tool_calls'));
  parts.push(
    data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: CHUNKS },
    }),
  );
  parts.push('data: [DONE]\n\n');
  // The pipeline writes a batch per upstream read: about 4 KB.
  const batches: string[] = [];
  let batch = '';
  for (const p of parts) {
    batch += p;
    if (batch.length >= 4096) {
      batches.push(batch);
      batch = '';
    }
  }
  if (batch) batches.push(batch);
  return batches;
}

/** Microseconds per chat chunk turned into Anthropic's events (/v1/messages on a translated route). */
async function perAnthropicEvent(batches: string[]): Promise<number> {
  // The relay hands the writer the chunks it translated, as objects.
  const chunks = batches
    .join('')
    .split('\n\n')
    .map((e) => e.replace(/^data: /, ''))
    .filter((d) => d !== '' && d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, unknown>);
  const run = async () => {
    const writer = anthropicWriter('m');
    let out = 0;
    for (const c of chunks) out += writer.chunk(c).length;
    return out + writer.end().length;
  };
  for (let i = 0; i < 5; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await run();
    times.push(((performance.now() - t0) * 1000) / (CHUNKS + 2));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

/** Bytes of the chat bundle's cold start that come from each provider folder, from esbuild's metafile. */
async function bundleShare(): Promise<Record<string, number>> {
  const opts = esbuildOptions(join(root, 'functions/handlers/chat.ts'), join(root, 'dist/bench-chat'), false);
  const result = await build({ ...opts, write: false });
  const meta = result.metafile as Metafile;
  const loaded = startupOutputs(meta).map((path) => meta.outputs[path]);
  const shares: Record<string, number> = { total: startupBytes(meta) };
  for (const [path, input] of loaded.flatMap((output) => Object.entries(output?.inputs ?? {}))) {
    const m = /functions\/providers\/([^/]+)\//.exec(path);
    const key = m
      ? m[1]
      : path.includes('@smithy/signature-v4')
        ? 'signing (@smithy/signature-v4, shared by Bedrock and DynamoDB)'
        : undefined;
    if (key) shares[key] = (shares[key] ?? 0) + input.bytesInOutput;
  }
  return shares;
}

async function main() {
  const a = perChunk(anthropic, anthropicStream());
  const b = perChunk(bedrock, bedrockStream());
  console.log(`per-chunk translation (median of ${ROUNDS} runs of ${CHUNKS} chunks, target < 20 µs)`);
  console.log(`  anthropic  ${a.toFixed(2)} µs/chunk`);
  console.log(`  bedrock    ${b.toFixed(2)} µs/chunk`);
  const m = await perAnthropicEvent(chatStream());
  console.log(`anthropic-format stream on /v1/messages (chat chunk -> Anthropic events, target < 20 µs)`);
  console.log(`  messages   ${m.toFixed(2)} µs/event`);
  const shares = await bundleShare();
  console.log('chat bundle bytes by provider folder (minified, in the output)');
  for (const [k, v] of Object.entries(shares)) console.log(`  ${k.padEnd(52)} ${(v / 1024).toFixed(1)} KB`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

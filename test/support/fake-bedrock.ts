import type { ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { type FakeUpstream, type Handler, type Recorded, sendJson, startFakeUpstream } from './fake-upstream';

// A fake Bedrock Runtime: Converse JSON at POST /model/{id}/converse, and ConverseStream at
// /model/{id}/converse-stream as `application/vnd.amazon.eventstream` binary messages with the
// `:event-type`, `:message-type` and `:content-type` headers AWS sends, each body padded with `p`.

const codec = new EventStreamCodec(
  (b) => new TextDecoder().decode(b),
  (s) => new TextEncoder().encode(s),
);

export const BEDROCK_USAGE = {
  inputTokens: 30,
  outputTokens: 9,
  totalTokens: 49,
  cacheReadInputTokens: 10,
  cacheWriteInputTokens: 0,
};

const str = (value: string) => ({ type: 'string' as const, value });

/** One event-stream message, encoded exactly as AWS frames it (prelude, headers, payload, CRCs). */
export function awsEvent(type: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': str(type),
      ':content-type': str('application/json'),
      ':message-type': str('event'),
    },
    body: new TextEncoder().encode(JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF' })),
  });
}

export function awsException(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': str(type),
      ':content-type': str('application/json'),
      ':message-type': str('exception'),
    },
    body: new TextEncoder().encode(JSON.stringify({ message })),
  });
}

type Block = Record<string, unknown>;

/** Usage as Converse reports it: a request with cache points writes the prefix to the cache. */
export function usageFor(req: Recorded) {
  return JSON.stringify(req.body).includes('"cachePoint"')
    ? { ...BEDROCK_USAGE, cacheWriteInputTokens: 6, totalTokens: BEDROCK_USAGE.totalTokens + 6 }
    : BEDROCK_USAGE;
}

export const THOUGHT = { text: 'Let me think.', signature: 'EqQBCgIYAhIMbedrock' };

export function plan(req: Recorded): Block[] {
  // Claude thinks first when asked to, and signs its reasoning.
  const thinking = req.body.additionalModelRequestFields?.thinking
    ? [{ reasoningContent: { reasoningText: THOUGHT } }]
    : [];
  return [...thinking, ...answer(req)];
}

function answer(req: Recorded): Block[] {
  const messages = req.body.messages as Array<{ content: Block[] }>;
  const last = messages[messages.length - 1]?.content ?? [];
  const result = last.find((b) => b.toolResult) as
    | { toolResult: { content: Array<{ text: string }> } }
    | undefined;
  if (req.body.toolConfig && !result) {
    return [
      { text: 'Checking.' },
      {
        toolUse: {
          toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
          name: 'get_weather',
          input: { city: 'Paris' },
        },
      },
    ];
  }
  if (result) return [{ text: `Tool said: ${result.toolResult.content[0]?.text}` }];
  const image = last.find((b) => b.image) as { image: { format: string } } | undefined;
  if (image) return [{ text: `I see a ${image.image.format} image.` }];
  return [{ text: `Echo: ${String(last.find((b) => typeof b.text === 'string')?.text)}` }];
}

export function converseReply(content: Block[], usage: object = BEDROCK_USAGE) {
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: content.some((b) => b.toolUse) ? 'tool_use' : 'end_turn',
    usage,
    metrics: { latencyMs: 120 },
  };
}

export function streamMessages(content: Block[], usage: object = BEDROCK_USAGE): Uint8Array[] {
  const out = [awsEvent('messageStart', { role: 'assistant' })];
  content.forEach((block, contentBlockIndex) => {
    const reasoning = block.reasoningContent as
      | { reasoningText?: { text: string; signature?: string }; redactedContent?: string }
      | undefined;
    if (reasoning?.reasoningText) {
      // Reasoning streams as text deltas, then its signature in a delta of its own.
      for (const word of reasoning.reasoningText.text.match(/\S+\s*/g) ?? []) {
        out.push(
          awsEvent('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { text: word } } }),
        );
      }
      const signature = reasoning.reasoningText.signature;
      if (signature) {
        out.push(
          awsEvent('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { signature } } }),
        );
      }
    } else if (reasoning?.redactedContent) {
      out.push(
        awsEvent('contentBlockDelta', {
          contentBlockIndex,
          delta: { reasoningContent: { redactedContent: reasoning.redactedContent } },
        }),
      );
    } else if (typeof block.text === 'string') {
      for (const word of block.text.match(/\S+\s*/g) ?? []) {
        out.push(awsEvent('contentBlockDelta', { contentBlockIndex, delta: { text: word } }));
      }
    } else if (block.toolUse) {
      const t = block.toolUse as { toolUseId: string; name: string; input: unknown };
      out.push(
        awsEvent('contentBlockStart', {
          contentBlockIndex,
          start: { toolUse: { toolUseId: t.toolUseId, name: t.name } },
        }),
      );
      const json = JSON.stringify(t.input);
      const cut = Math.floor(json.length / 2);
      for (const part of [json.slice(0, cut), json.slice(cut)]) {
        out.push(awsEvent('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: part } } }));
      }
    }
    out.push(awsEvent('contentBlockStop', { contentBlockIndex }));
  });
  out.push(awsEvent('messageStop', { stopReason: content.some((b) => b.toolUse) ? 'tool_use' : 'end_turn' }));
  out.push(awsEvent('metadata', { usage, metrics: { latencyMs: 120 } }));
  return out;
}

export function openEventStream(res: ServerResponse) {
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-requestid': 'bedrock-req-1',
  });
  res.flushHeaders();
}

export const bedrockDefault: Handler = async (req, res) => {
  const content = plan(req);
  if (!req.path.endsWith('/converse-stream')) {
    return sendJson(res, 200, converseReply(content, usageFor(req)), { 'x-amzn-requestid': 'bedrock-req-1' });
  }
  openEventStream(res);
  for (const m of streamMessages(content, usageFor(req))) {
    // Split each message in two writes: the decoder must join frames cut anywhere.
    const cut = Math.floor(m.length / 3);
    res.write(m.subarray(0, cut));
    res.write(m.subarray(cut));
    await new Promise((r) => setTimeout(r, 2));
  }
  res.end();
};

export function bedrockError(status: number, type: string, message: string): Handler {
  return (_req, res) =>
    sendJson(
      res,
      status,
      { message },
      { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    );
}

export const startFakeBedrock = (): Promise<FakeUpstream> => startFakeUpstream(bedrockDefault);

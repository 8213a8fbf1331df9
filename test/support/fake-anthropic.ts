import type { ServerResponse } from 'node:http';
import { type FakeUpstream, type Handler, type Recorded, sendJson, startFakeUpstream } from './fake-upstream';

// A fake Anthropic Messages API: JSON messages, `event:`/`data:` SSE streams with message_start ...
// message_stop, and `{"type":"error","error":{...}}` errors, as documented in Anthropic's API reference.

export const ANTHROPIC_USAGE = {
  input_tokens: 20,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 10,
  output_tokens: 7,
};

type Block = Record<string, unknown>;

/** What the fake answers: a tool call while tools are offered and no result came back, else text. */
export function plan(req: Recorded): Block[] {
  const messages = req.body.messages as Array<{ content: Block[] | string }>;
  const content = messages[messages.length - 1]?.content ?? [];
  // Anthropic takes a plain string as shorthand for one text block.
  const last = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const hasResult = last.some((b) => b.type === 'tool_result');
  if (req.body.tools && !hasResult) {
    return [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
    ];
  }
  if (hasResult)
    return [
      { type: 'text', text: `Tool said: ${String(last.find((b) => b.type === 'tool_result')?.content)}` },
    ];
  const image = last.find((b) => b.type === 'image') as { source?: { type: string } } | undefined;
  if (image) return [{ type: 'text', text: `I see a ${image.source?.type} image.` }];
  const text = last.find((b) => b.type === 'text')?.text;
  return [{ type: 'text', text: `Echo: ${String(text)}` }];
}

export function message(req: Recorded, content: Block[]) {
  const stop = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: String(req.body.model),
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: ANTHROPIC_USAGE,
  };
}

export const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** The events of a streamed message, text split into words and tool input into two JSON pieces. */
export function streamEvents(req: Recorded, content: Block[]): string[] {
  const m = message(req, content);
  const events = [
    sse('message_start', {
      type: 'message_start',
      message: { ...m, content: [], stop_reason: null, usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } },
    }),
    sse('ping', { type: 'ping' }),
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(
        sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        }),
      );
      for (const word of String(block.text).match(/\S+\s*/g) ?? []) {
        events.push(
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: word },
          }),
        );
      }
    } else if (block.type === 'thinking') {
      events.push(
        sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '' },
        }),
      );
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: block.thinking },
        }),
      );
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM' },
        }),
      );
    } else if (block.type === 'tool_use') {
      events.push(
        sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        }),
      );
      const json = JSON.stringify(block.input);
      const cut = Math.floor(json.length / 2);
      for (const part of [json.slice(0, cut), json.slice(cut)]) {
        events.push(
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: part },
          }),
        );
      }
    }
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  });
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: m.stop_reason, stop_sequence: null },
      usage: { output_tokens: ANTHROPIC_USAGE.output_tokens },
    }),
  );
  events.push(sse('message_stop', { type: 'message_stop' }));
  return events;
}

export function openSse(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_anthropic_1' });
  res.flushHeaders();
}

export const anthropicDefault: Handler = async (req, res) => {
  const content = plan(req);
  if (!req.body.stream) return sendJson(res, 200, message(req, content), { 'request-id': 'req_anthropic_1' });
  openSse(res);
  for (const e of streamEvents(req, content)) {
    res.write(e);
    await new Promise((r) => setTimeout(r, 2));
  }
  res.end();
};

export function anthropicError(status: number, type: string, message: string): Handler {
  return (_req, res) => sendJson(res, status, { type: 'error', error: { type, message } });
}

export const startFakeAnthropic = (): Promise<FakeUpstream> => startFakeUpstream(anthropicDefault);

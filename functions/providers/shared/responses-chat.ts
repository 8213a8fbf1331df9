import { badRequest } from '../../core/errors';
import { isObject, type Json, numberOr } from './openai-shapes';

// OpenAI's Responses API <-> the chat shape every provider translator takes, for providers without a
// Responses API of their own (Anthropic, Bedrock, Gemini). Nothing is stored: each request is whole.

const randomId = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 12)}`;

function contentParts(content: unknown, at: string, provider: string): Json[] | string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: Json[] = [];
  content.forEach((p, j) => {
    if (!isObject(p)) return;
    const where = `${at}.content[${j}]`;
    if (
      (p.type === 'input_text' || p.type === 'output_text' || p.type === 'text') &&
      typeof p.text === 'string'
    ) {
      parts.push({ type: 'text', text: p.text });
    } else if (p.type === 'refusal' && typeof p.refusal === 'string') {
      parts.push({ type: 'text', text: p.refusal });
    } else if (p.type === 'input_image' && typeof p.image_url === 'string') {
      parts.push({
        type: 'image_url',
        image_url: { url: p.image_url, ...(typeof p.detail === 'string' ? { detail: p.detail } : {}) },
      });
    } else {
      throw badRequest(
        `${where}: content of type "${String(p.type).slice(0, 40)}"${p.type === 'input_image' ? ' by file_id' : ''} needs OpenAI's Responses API; provider "${provider}" cannot take it.`,
        where,
        'unsupported_content',
      );
    }
  });
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('\n\n') : parts;
}

/** OpenAI-only tools, named in the 400 of a provider without them. */
function refuseTool(tool: Json, at: string, provider: string): never {
  const name = typeof tool.name === 'string' ? `${tool.type} "${tool.name}"` : String(tool.type);
  throw badRequest(
    `${at}: the ${name.slice(0, 80)} tool is OpenAI's; provider "${provider}" cannot run it.`,
    at,
    'unsupported_tool',
  );
}

/** A Responses request as an OpenAI chat request, for `provider`; a 400 for what it cannot take. */
export function responsesToChat(body: Json, provider: string): Json {
  if (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') {
    throw badRequest(
      `previous_response_id: provider "${provider}" has no stored responses; send the whole conversation in input.`,
      'previous_response_id',
      'unsupported_parameter',
    );
  }
  const messages: Json[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    messages.push({ role: 'system', content: body.instructions });
  }
  const items =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input as Json[]);
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) return;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role === 'developer' ? 'system' : String(item.role);
      messages.push({ role, content: contentParts(item.content, at, provider) });
    } else if (type === 'function_call') {
      const call = {
        id: String(item.call_id ?? ''),
        type: 'function',
        function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '{}') },
      };
      const last = messages[messages.length - 1];
      // Parallel calls are consecutive items; in chat they are one assistant message.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) last.tool_calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output ?? '');
      messages.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: output });
    } else if (type !== 'reasoning') {
      throw badRequest(
        `${at}: items of type "${String(type).slice(0, 40)}" need OpenAI's Responses API; provider "${provider}" cannot take them.`,
        at,
        'unsupported_content',
      );
    }
  });

  const out: Json = { model: body.model, messages };
  if (typeof body.max_output_tokens === 'number') out.max_tokens = body.max_output_tokens;
  for (const k of ['temperature', 'top_p', 'parallel_tool_calls', 'user']) {
    if (body[k] !== undefined && body[k] !== null) out[k] = body[k];
  }
  if (body.stream === true) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isObject);
  if (tools.length > 0) {
    out.tools = tools.map((t, i) => {
      if (t.type !== 'function') refuseTool(t, `tools[${i}]`, provider);
      return {
        type: 'function',
        function: {
          name: t.name,
          ...(typeof t.description === 'string' ? { description: t.description } : {}),
          parameters: isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} },
          ...(typeof t.strict === 'boolean' ? { strict: t.strict } : {}),
        },
      };
    });
  }
  const choice = body.tool_choice;
  if (typeof choice === 'string') out.tool_choice = choice;
  else if (isObject(choice) && choice.type === 'function') {
    out.tool_choice = { type: 'function', function: { name: choice.name } };
  }
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
  if (format?.type === 'json_object') out.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    out.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
      },
    };
  }
  return out;
}

/** Usage in the Responses shape, from chat's. */
export function responsesUsageOf(usage: unknown): Json | null {
  if (!isObject(usage)) return null;
  const input = numberOr(usage.prompt_tokens) ?? 0;
  const output = numberOr(usage.completion_tokens) ?? 0;
  const pd = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cd = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: numberOr(pd.cached_tokens) ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: numberOr(cd.reasoning_tokens) ?? 0 },
    total_tokens: input + output,
  };
}

/** The Response object around `output`: what the request asked for, the status its finish gives. */
export function responseObject(
  request: Json,
  id: string,
  createdAt: number,
  model: string,
  output: Json[],
  finish: string | null,
  usage: Json | null,
): Json {
  const incomplete =
    finish === 'length' ? 'max_output_tokens' : finish === 'content_filter' ? 'content_filter' : null;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: finish === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: request.temperature ?? null,
    text: isObject(request.text) ? request.text : { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    truncation: 'disabled',
    usage,
    user: request.user ?? null,
    metadata: isObject(request.metadata) ? request.metadata : {},
  };
}

const messageItem = (id: string, text: string, status: string): Json => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [] }],
});

const callItem = (id: string, callId: string, name: string, args: string, status: string): Json => ({
  id,
  type: 'function_call',
  status,
  call_id: callId,
  name,
  arguments: args,
});

/** A `chat.completion` as a Response. */
export function chatToResponse(completion: unknown, request: Json): Json {
  const c = isObject(completion) ? completion : {};
  const choice = Array.isArray(c.choices) && isObject(c.choices[0]) ? c.choices[0] : {};
  const msg = isObject(choice.message) ? choice.message : {};
  const output: Json[] = [];
  const text = typeof msg.content === 'string' ? msg.content : '';
  if (text !== '') output.push(messageItem(`msg_${randomId()}`, text, 'completed'));
  for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    output.push(
      callItem(
        `fc_${randomId()}`,
        String(call.id ?? ''),
        String(call.function.name ?? ''),
        String(call.function.arguments ?? ''),
        'completed',
      ),
    );
  }
  return responseObject(
    request,
    `resp_${randomId()}`,
    typeof c.created === 'number' ? c.created : Math.floor(Date.now() / 1000),
    typeof c.model === 'string' ? c.model : String(request.model),
    output,
    typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop',
    responsesUsageOf(c.usage),
  );
}

interface OpenItem {
  kind: 'message' | 'call';
  index: number;
  id: string;
  callId: string;
  name: string;
  text: string;
}

/**
 * OpenAI chat chunks -> the Responses stream events, as SSE with `event:` and `data:`, each numbered.
 * State: the open output item, the items done, the finish reason and usage (which chat sends last).
 */
export class ResponsesEventWriter {
  private sequence = 0;
  private started = false;
  private finished = false;
  private open: OpenItem | undefined;
  private readonly done: Json[] = [];
  private readonly calls = new Map<number, OpenItem>();
  private finish: string | null = null;
  private usage: Json | null = null;
  private readonly id = `resp_${randomId()}`;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private model: string;

  constructor(private readonly request: Json) {
    this.model = String(request.model ?? '');
  }

  /** The sequence number the next event gets. */
  get next(): number {
    return this.sequence;
  }

  private event(type: string, fields: Json): string {
    const data = { type, sequence_number: this.sequence++, ...fields };
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  private response(finish: string | null): Json {
    return responseObject(
      this.request,
      this.id,
      this.createdAt,
      this.model,
      [...this.done],
      finish,
      finish ? this.usage : null,
    );
  }

  chunk(c: Json): string {
    let out = '';
    if (!this.started) {
      this.started = true;
      if (typeof c.model === 'string') this.model = c.model;
      out += this.event('response.created', { response: this.response(null) });
      out += this.event('response.in_progress', { response: this.response(null) });
    }
    if (c.usage) this.usage = responsesUsageOf(c.usage);
    const choice = Array.isArray(c.choices) && isObject(c.choices[0]) ? c.choices[0] : undefined;
    if (!choice) return out;
    const d = isObject(choice.delta) ? choice.delta : {};
    if (typeof d.content === 'string' && d.content !== '') {
      if (this.open?.kind !== 'message') {
        out += this.close();
        out += this.openMessage();
      }
      const item = this.open as OpenItem;
      item.text += d.content;
      out += this.event('response.output_text.delta', {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        delta: d.content,
        logprobs: [],
      });
    }
    for (const call of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
      if (isObject(call)) out += this.toolCall(call);
    }
    if (typeof choice.finish_reason === 'string') {
      this.finish = choice.finish_reason;
      out += this.close();
    }
    return out;
  }

  /** The chat stream ended: the last item closes, then `response.completed` (or `.incomplete`). */
  end(): string {
    if (this.finished) return '';
    this.finished = true;
    let out = this.started ? '' : this.chunk({});
    out += this.close();
    const response = this.response(this.finish ?? 'stop');
    const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return out + this.event(type, { response });
  }

  /** An `error` event, numbered after the last one. */
  error(code: string | null, message: string): string {
    this.finished = true;
    return this.event('error', { code, message, param: null });
  }

  private openMessage(): string {
    const item: OpenItem = {
      kind: 'message',
      index: this.done.length,
      id: `msg_${randomId()}`,
      callId: '',
      name: '',
      text: '',
    };
    this.open = item;
    return (
      this.event('response.output_item.added', {
        output_index: item.index,
        item: messageItem(item.id, '', 'in_progress'),
      }) +
      this.event('response.content_part.added', {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      })
    );
  }

  private toolCall(call: Json): string {
    const position = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    let out = '';
    let item = this.calls.get(position);
    if (!item) {
      out += this.close();
      item = {
        kind: 'call',
        index: this.done.length,
        id: `fc_${randomId()}`,
        callId: typeof call.id === 'string' ? call.id : `call_${randomId()}`,
        name: String(fn.name ?? ''),
        text: '',
      };
      this.calls.set(position, item);
      this.open = item;
      out += this.event('response.output_item.added', {
        output_index: item.index,
        item: callItem(item.id, item.callId, item.name, '', 'in_progress'),
      });
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      item.text += fn.arguments;
      out += this.event('response.function_call_arguments.delta', {
        item_id: item.id,
        output_index: item.index,
        delta: fn.arguments,
      });
    }
    return out;
  }

  private close(): string {
    const item = this.open;
    if (!item) return '';
    this.open = undefined;
    if (item.kind === 'message') {
      const done = messageItem(item.id, item.text, 'completed');
      this.done.push(done);
      const part = { type: 'output_text', text: item.text, annotations: [] };
      return (
        this.event('response.output_text.done', {
          item_id: item.id,
          output_index: item.index,
          content_index: 0,
          text: item.text,
          logprobs: [],
        }) +
        this.event('response.content_part.done', {
          item_id: item.id,
          output_index: item.index,
          content_index: 0,
          part,
        }) +
        this.event('response.output_item.done', { output_index: item.index, item: done })
      );
    }
    const done = callItem(item.id, item.callId, item.name, item.text, 'completed');
    this.done.push(done);
    return (
      this.event('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: item.index,
        name: item.name,
        arguments: item.text,
      }) + this.event('response.output_item.done', { output_index: item.index, item: done })
    );
  }
}

import { badRequest, type GatewayError } from '../../core/errors';
import { tryJson } from '../../core/request-body';
import {
  type ChunkHeader,
  chunk,
  completionId,
  contentParts,
  functionTools,
  isObject,
  type Json,
  type Message,
  maxTokensOf,
  messageExtras,
  nowSeconds,
  numberOr,
  openAIUsage,
  parseArguments,
  providerFailure,
  requestExtras,
  stopSequencesOf,
  THINKING_BLOCKS,
  textOf,
  thinkingForEffort,
  toolCallsOf,
  toolChoiceOf,
  usageChunk,
} from '../shared/openai-shapes';
import type { ChatContext, ChatTranslation, ProviderEvent, StreamTranslator } from '../types';
import { AwsEventStreamDecoder } from './event-stream';
import { bedrockModelId } from './model-ids';
import { bedrockAuth, signedHeaders } from './signing';

// OpenAI Chat Completions <-> Bedrock Converse / ConverseStream.

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

const finishOf = (reason: unknown) => (typeof reason === 'string' ? (FINISH[reason] ?? 'stop') : null);

// HTTP status of each Bedrock exception, for exceptions reported inside a stream.
const STATUS_OF_EXCEPTION: Record<string, number> = {
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  modelTimeoutException: 408,
  modelNotReadyException: 429,
  throttlingException: 429,
  modelStreamErrorException: 424,
  modelErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
};

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

function userBlocks(content: unknown, at: string): Json[] {
  return contentParts(content, at).map((p, i) => {
    if (p.kind === 'text') return { text: p.text };
    // Converse takes image bytes only. The gateway does not fetch URLs for it: no server-side downloads
    // of caller-chosen URLs, no hidden latency. Callers send data URLs.
    const format = p.data ? IMAGE_FORMATS[p.data.mediaType.toLowerCase()] : undefined;
    if (!p.data || !format) {
      throw badRequest(
        `${at}.content[${i}]: Bedrock takes images as data URLs (data:image/png|jpeg|gif|webp;base64,...), not links.`,
        `${at}.content[${i}].image_url`,
        'unsupported_image_url',
      );
    }
    return { image: { format, source: { bytes: p.data.base64 } } };
  });
}

const CACHE_POINT: Json = { cachePoint: { type: 'default' } };

/** Anthropic's thinking blocks as Converse `reasoningContent` blocks, signatures kept. */
function reasoningBlocks(thinking: Json[] | undefined): Json[] {
  const out: Json[] = [];
  for (const b of thinking ?? []) {
    if (b.type === 'thinking' && typeof b.thinking === 'string') {
      out.push({
        reasoningContent: {
          reasoningText: {
            text: b.thinking,
            ...(typeof b.signature === 'string' && b.signature ? { signature: b.signature } : {}),
          },
        },
      });
    } else if (b.type === 'redacted_thinking' && typeof b.data === 'string') {
      out.push({ reasoningContent: { redactedContent: b.data } });
    }
  }
  return out;
}

/** Only Claude models on Bedrock take Anthropic's `thinking` in `additionalModelRequestFields`. */
const isClaude = (model: string) => model.includes('anthropic.claude');

/** Bedrock's default output limit for Claude when thinking comes from `reasoning_effort` without one. */
const DEFAULT_MAX_TOKENS = 4096;

export function toConverseRequest(body: Json, model = ''): Json {
  const system: Json[] = [];
  const messages: Array<{ role: string; content: Json[] }> = [];
  const push = (role: string, blocks: Json[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  (body.messages as Message[]).forEach((m, i) => {
    const at = `messages[${i}]`;
    // A `cache_control` the Messages ingress carried: a cache point after the message's content.
    const extras = messageExtras(m);
    const cache = extras?.cache ? [CACHE_POINT] : [];
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push({ text }, ...cache);
    } else if (m.role === 'user') {
      push('user', [...userBlocks(m.content, at), ...cache]);
    } else if (m.role === 'assistant') {
      const blocks: Json[] = reasoningBlocks(extras?.thinking);
      const text = textOf(m.content);
      if (text) blocks.push({ text });
      for (const call of toolCallsOf(m)) {
        blocks.push({
          toolUse: { toolUseId: call.id, name: call.name, input: parseArguments(call.arguments) },
        });
      }
      push('assistant', [...blocks, ...cache]);
    } else if (m.role === 'tool' || m.role === 'function') {
      push('user', [
        {
          toolResult: {
            toolUseId: typeof m.tool_call_id === 'string' ? m.tool_call_id : String(m.name ?? ''),
            content: [{ text: textOf(m.content) }],
          },
        },
        ...cache,
      ]);
    }
  });

  const out: Json = { messages };
  if (system.length > 0) out.system = system;
  const inference: Json = {};
  const maxTokens = maxTokensOf(body);
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (typeof body.temperature === 'number') inference.temperature = body.temperature;
  if (typeof body.top_p === 'number') inference.topP = body.top_p;
  const stop = stopSequencesOf(body);
  if (stop && stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;

  const extras = requestExtras(body);
  const tools = functionTools(body);
  if (tools.length > 0) {
    const toolConfig: Json = {
      tools: [
        ...tools.map((t) => ({
          toolSpec: {
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            inputSchema: { json: t.parameters },
          },
        })),
        ...(extras?.cacheTools ? [CACHE_POINT] : []),
      ],
    };
    // Converse has no "none": the tools stay declared (a history with tool use needs them) and unforced.
    const choice = toolChoiceOf(body);
    if (choice?.mode === 'auto') toolConfig.toolChoice = { auto: {} };
    else if (choice?.mode === 'required') toolConfig.toolChoice = { any: {} };
    else if (choice?.mode === 'function') toolConfig.toolChoice = { tool: { name: choice.name } };
    out.toolConfig = toolConfig;
  }
  // Model-specific fields (reasoning budgets and the like) pass through under Converse's own name.
  const fields: Json = isObject(body.additionalModelRequestFields)
    ? { ...body.additionalModelRequestFields }
    : {};
  if (isClaude(model) && fields.thinking === undefined) {
    // Anthropic's `thinking` as sent (chat, or the Messages ingress), else one for `reasoning_effort`.
    const thinking = isObject(body.thinking) ? body.thinking : extras?.thinking;
    const effort = thinking ? undefined : thinkingForEffort(body, DEFAULT_MAX_TOKENS);
    if (thinking) fields.thinking = thinking;
    else if (effort) {
      fields.thinking = effort.thinking;
      out.inferenceConfig = { ...(out.inferenceConfig as Json | undefined), maxTokens: effort.maxTokens };
    }
  }
  if (Object.keys(fields).length > 0) out.additionalModelRequestFields = fields;
  return out;
}

/** Converse's inputTokens leave out cache reads and writes; OpenAI's prompt_tokens include them. */
function usageOf(u: unknown): Json | undefined {
  if (!isObject(u)) return undefined;
  const read = numberOr(u.cacheReadInputTokens) ?? 0;
  const write = numberOr(u.cacheWriteInputTokens) ?? 0;
  return openAIUsage(
    (numberOr(u.inputTokens) ?? 0) + read + write,
    numberOr(u.outputTokens) ?? 0,
    read,
    0,
    write,
  );
}

export function fromConverseResponse(reply: unknown, model: string): Json {
  const r = isObject(reply) ? reply : {};
  const output = isObject(r.output) && isObject(r.output.message) ? r.output.message : {};
  let text = '';
  let reasoning = '';
  // Anthropic's blocks with their signatures, for callers that carry them back (THINKING_BLOCKS).
  const thinking: Json[] = [];
  const toolCalls: Json[] = [];
  for (const block of Array.isArray(output.content) ? output.content : []) {
    if (!isObject(block)) continue;
    if (typeof block.text === 'string') text += block.text;
    else if (isObject(block.toolUse)) {
      const t = block.toolUse;
      toolCalls.push({
        id: t.toolUseId,
        type: 'function',
        function: { name: t.name, arguments: JSON.stringify(t.input ?? {}) },
      });
    } else if (isObject(block.reasoningContent)) {
      const r = block.reasoningContent;
      if (isObject(r.reasoningText) && typeof r.reasoningText.text === 'string') {
        reasoning += r.reasoningText.text;
        thinking.push({
          type: 'thinking',
          thinking: r.reasoningText.text,
          signature: typeof r.reasoningText.signature === 'string' ? r.reasoningText.signature : '',
        });
      } else if (typeof r.redactedContent === 'string') {
        thinking.push({ type: 'redacted_thinking', data: r.redactedContent });
      }
    }
  }
  const message: Json = {
    role: 'assistant',
    content: text || (toolCalls.length > 0 ? null : ''),
    refusal: null,
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (thinking.length > 0) message[THINKING_BLOCKS] = thinking;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(r.stopReason) ?? 'stop' }],
    usage: usageOf(r.usage) ?? null,
  };
}

export function bedrockError(
  status: number,
  body: unknown,
  text: string,
  headers: Record<string, unknown>,
): GatewayError {
  const b = isObject(body) ? body : {};
  const raw = b.message ?? b.Message;
  const message = typeof raw === 'string' ? raw : text.slice(0, 500) || `Bedrock answered ${status}.`;
  // `x-amzn-errortype: ValidationException:http://internal.amazon.com/...`: the name is the code.
  const errorType = headers['x-amzn-errortype'];
  const code = typeof errorType === 'string' ? (errorType.split(':')[0] ?? null) : null;
  return providerFailure(status, message, undefined, code);
}

/** ConverseStream events -> OpenAI chunks. State: block-to-tool-call indexes, finish reason, usage. */
export class ConverseStream implements StreamTranslator {
  complete = false;
  failure: GatewayError | undefined;
  private readonly header: ChunkHeader;
  private readonly toolIndex = new Map<number, number>();
  private usage: Json | undefined;

  constructor(model: string) {
    this.header = { id: completionId(), model, created: nowSeconds() };
  }

  push(ev: ProviderEvent): Json[] {
    const data = tryJson(ev.data);
    const d = isObject(data) ? data : {};
    if (ev.exception) {
      const name = ev.event ?? 'internalServerException';
      this.failure = providerFailure(
        // An exception Bedrock does not document has no status of its own: 502, as for any bad upstream.
        (Object.hasOwn(STATUS_OF_EXCEPTION, name) ? STATUS_OF_EXCEPTION[name] : undefined) ?? 502,
        typeof d.message === 'string' ? d.message : `Bedrock reported ${name} in the stream.`,
        undefined,
        name,
      );
      return [];
    }
    switch (ev.event) {
      case 'messageStart':
        return [chunk(this.header, { role: 'assistant', content: '' })];
      case 'contentBlockStart': {
        const start = isObject(d.start) ? d.start : {};
        if (!isObject(start.toolUse)) return [];
        const index = this.toolIndex.size;
        this.toolIndex.set(Number(d.contentBlockIndex), index);
        const t = start.toolUse;
        return [
          chunk(this.header, {
            tool_calls: [
              { index, id: t.toolUseId, type: 'function', function: { name: t.name, arguments: '' } },
            ],
          }),
        ];
      }
      case 'contentBlockDelta': {
        const delta = isObject(d.delta) ? d.delta : {};
        if (typeof delta.text === 'string') return [chunk(this.header, { content: delta.text })];
        if (isObject(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const index = this.toolIndex.get(Number(d.contentBlockIndex)) ?? 0;
          return [
            chunk(this.header, { tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] }),
          ];
        }
        const r = isObject(delta.reasoningContent) ? delta.reasoningContent : {};
        if (typeof r.text === 'string') return [chunk(this.header, { reasoning_content: r.text })];
        if (typeof r.signature === 'string') {
          return [
            chunk(this.header, {
              [THINKING_BLOCKS]: [{ type: 'thinking', thinking: '', signature: r.signature }],
            }),
          ];
        }
        if (typeof r.redactedContent === 'string') {
          return [
            chunk(this.header, {
              [THINKING_BLOCKS]: [{ type: 'redacted_thinking', data: r.redactedContent }],
            }),
          ];
        }
        return [];
      }
      case 'messageStop': {
        this.complete = true;
        return [chunk(this.header, {}, finishOf(d.stopReason) ?? 'stop')];
      }
      case 'metadata':
        this.usage = usageOf(d.usage);
        return [];
      default:
        // contentBlockStop and event types added later carry nothing to translate.
        return [];
    }
  }

  end(): Json[] {
    return this.complete && this.usage ? [usageChunk(this.header, this.usage)] : [];
  }
}

export const bedrockChat: ChatTranslation = {
  async buildCall(body, ctx: ChatContext) {
    const auth = await bedrockAuth(ctx.target);
    // The region is known only now: the context takes the id Bedrock runs, so reply, log and price name it.
    ctx.model = bedrockModelId(ctx.model, auth.region);
    const base = ctx.baseUrl || `https://bedrock-runtime.${auth.region}.amazonaws.com`;
    const url = new URL(
      `${base}/model/${encodeURIComponent(ctx.model)}/${ctx.stream ? 'converse-stream' : 'converse'}`,
    );
    const payload = JSON.stringify(toConverseRequest(body, ctx.model));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: ctx.stream ? 'application/vnd.amazon.eventstream' : 'application/json',
    };
    if (auth.kind === 'bearer') {
      return {
        url: url.toString(),
        headers: { ...headers, authorization: `Bearer ${auth.token}` },
        body: payload,
      };
    }
    return { url: url.toString(), headers: await signedHeaders(url, payload, headers, auth), body: payload };
  },
  response: (reply, ctx) => fromConverseResponse(reply, ctx.model),
  streamContentType: 'application/vnd.amazon.eventstream',
  decoder: () => new AwsEventStreamDecoder(),
  stream: (ctx) => new ConverseStream(ctx.model),
  error: (status, body, text, headers) => bedrockError(status, body, text, headers),
};

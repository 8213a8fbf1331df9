import type { GatewayError } from '../../core/errors';
import { tryJson } from '../../core/request-body';
import {
  type ChunkHeader,
  chunk,
  completionId,
  contentParts,
  functionTools,
  GATEWAY_FIELDS,
  isObject,
  type Json,
  type Message,
  maxTokensOf,
  nowSeconds,
  numberOr,
  openAIUsage,
  parseArguments,
  providerFailure,
  requestExtras,
  SseDecoder,
  stopSequencesOf,
  THINKING_BUDGET,
  textOf,
  toolCallsOf,
  toolChoiceOf,
  usageChunk,
} from '../shared/openai-shapes';
import type { ChatContext, ChatTranslation, ProviderEvent, StreamTranslator } from '../types';

// OpenAI Chat Completions <-> Gemini API generateContent / streamGenerateContent.

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

// Gemini validates thought signatures on replayed function calls of thinking models. A history that
// comes through OpenAI's shape has lost them; Google documents this value for exactly that case.
const REPLAYED_SIGNATURE = 'skip_thought_signature_validator';

// JSON Schema keywords Gemini's OpenAPI-style schemas refuse.
const UNSUPPORTED_SCHEMA_KEYS = new Set(['additionalProperties', '$schema', 'strict', '$id']);

export function geminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchema);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) if (!UNSUPPORTED_SCHEMA_KEYS.has(k)) out[k] = geminiSchema(v);
  return out;
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
};

function mimeOfUrl(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() ?? '';
  return IMAGE_TYPES[ext] ?? 'image/jpeg';
}

/** The model in the path: `models/x` and `x` name the same model. */
export const geminiModel = (model: string) => model.replace(/^models\//, '');

export function toGeminiRequest(body: Json): Json {
  const system: Json[] = [];
  const contents: Array<{ role: string; parts: Json[] }> = [];
  // Gemini has no tool call ids: a tool result names its function, found from the call's id.
  const nameOfCall = new Map<string, string>();
  const push = (role: string, parts: Json[]) => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  (body.messages as Message[]).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push({ text });
    } else if (m.role === 'user') {
      push(
        'user',
        contentParts(m.content, at).map((p) => {
          if (p.kind === 'text') return { text: p.text };
          return p.data
            ? { inlineData: { mimeType: p.data.mediaType, data: p.data.base64 } }
            : { fileData: { mimeType: mimeOfUrl(p.url), fileUri: p.url } };
        }),
      );
    } else if (m.role === 'assistant') {
      const parts: Json[] = [];
      const text = textOf(m.content);
      if (text) parts.push({ text });
      toolCallsOf(m).forEach((call, n) => {
        nameOfCall.set(call.id, call.name);
        parts.push({
          functionCall: { name: call.name, args: parseArguments(call.arguments) },
          ...(n === 0 ? { thoughtSignature: REPLAYED_SIGNATURE } : {}),
        });
      });
      push('model', parts);
    } else if (m.role === 'tool' || m.role === 'function') {
      const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : '';
      const name = nameOfCall.get(id) ?? (typeof m.name === 'string' ? m.name : id);
      const text = textOf(m.content);
      const parsed = tryJson(text);
      push('user', [
        { functionResponse: { name, response: isObject(parsed) ? parsed : { content: parsed ?? text } } },
      ]);
    }
  });

  const out: Json = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };
  const config: Json = {};
  const maxTokens = maxTokensOf(body);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.n === 'number') config.candidateCount = body.n;
  if (typeof body.seed === 'number') config.seed = body.seed;
  if (typeof body.presence_penalty === 'number') config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') config.frequencyPenalty = body.frequency_penalty;
  const stop = stopSequencesOf(body);
  if (stop && stop.length > 0) config.stopSequences = stop;
  const format = isObject(body.response_format) ? body.response_format : undefined;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const spec = isObject(format.json_schema) ? format.json_schema : {};
    if (isObject(spec.schema)) config.responseSchema = geminiSchema(spec.schema);
  }
  const budget = thinkingBudgetOf(body);
  if (budget !== undefined) config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
  if (Object.keys(config).length > 0) out.generationConfig = config;

  const tools = functionTools(body);
  if (tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parameters: geminiSchema(t.parameters),
        })),
      },
    ];
  }
  const choice = toolChoiceOf(body);
  if (choice) {
    out.toolConfig = {
      functionCallingConfig:
        choice.mode === 'function'
          ? { mode: 'ANY', allowedFunctionNames: [choice.name] }
          : { mode: choice.mode === 'required' ? 'ANY' : choice.mode === 'none' ? 'NONE' : 'AUTO' },
    };
  }
  return out;
}

/**
 * Gemini's thinking budget: Anthropic's `budget_tokens` from the Messages ingress, else the budget of
 * `reasoning_effort` (README), below an output limit the caller set (thoughts count in it). Thoughts
 * are asked back, as `reasoning_content`.
 */
function thinkingBudgetOf(body: Json): number | undefined {
  const thinking = requestExtras(body)?.thinking;
  if (typeof thinking?.budget_tokens === 'number') return thinking.budget_tokens;
  const effort = body.reasoning_effort;
  if (typeof effort !== 'string' || !Object.hasOwn(THINKING_BUDGET, effort)) return undefined;
  const limit = maxTokensOf(body);
  return Math.max(0, Math.min(THINKING_BUDGET[effort] as number, limit === undefined ? Infinity : limit - 1));
}

/** cachedContentTokenCount is part of promptTokenCount; thinking tokens are billed as output. */
function usageOf(u: unknown): Json | undefined {
  if (!isObject(u)) return undefined;
  const thoughts = numberOr(u.thoughtsTokenCount) ?? 0;
  return openAIUsage(
    numberOr(u.promptTokenCount) ?? 0,
    (numberOr(u.candidatesTokenCount) ?? 0) + thoughts,
    numberOr(u.cachedContentTokenCount) ?? 0,
    thoughts,
  );
}

const callId = (responseId: string, n: number) => `call_${responseId.slice(0, 24)}_${n}`;

interface CandidateParts {
  text: string;
  reasoning: string;
  calls: Json[];
}

function readParts(candidate: Json, responseId: string, firstCall: number): CandidateParts {
  const out: CandidateParts = { text: '', reasoning: '', calls: [] };
  const content = isObject(candidate.content) ? candidate.content : {};
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') {
      if (part.thought === true) out.reasoning += part.text;
      else out.text += part.text;
    } else if (isObject(part.functionCall)) {
      const fc = part.functionCall;
      out.calls.push({
        id: typeof fc.id === 'string' && fc.id ? fc.id : callId(responseId, firstCall + out.calls.length),
        type: 'function',
        function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
      });
    }
  }
  return out;
}

function finishOf(reason: unknown, hasCalls: boolean): string | null {
  if (typeof reason !== 'string') return null;
  if (reason === 'STOP' && hasCalls) return 'tool_calls';
  return FINISH[reason] ?? 'stop';
}

/** Gemini refused the prompt itself (`promptFeedback.blockReason`), so there is no candidate. */
const blockedPrompt = (r: Json): boolean =>
  isObject(r.promptFeedback) && typeof r.promptFeedback.blockReason === 'string';

export function fromGeminiResponse(reply: unknown, model: string): Json {
  const r = isObject(reply) ? reply : {};
  const responseId = typeof r.responseId === 'string' ? r.responseId : completionId().slice(9);
  const candidates = Array.isArray(r.candidates) ? r.candidates.filter(isObject) : [];
  const choices = candidates.map((c, i) => {
    const parts = readParts(c, responseId, 0);
    const message: Json = {
      role: 'assistant',
      content: parts.text || (parts.calls.length > 0 ? null : ''),
      refusal: null,
    };
    if (parts.reasoning) message.reasoning_content = parts.reasoning;
    if (parts.calls.length > 0) message.tool_calls = parts.calls;
    return {
      index: typeof c.index === 'number' ? c.index : i,
      message,
      logprobs: null,
      finish_reason: finishOf(c.finishReason, parts.calls.length > 0) ?? 'stop',
    };
  });
  // A prompt Gemini blocks comes back without candidates: OpenAI clients expect one filtered choice.
  if (choices.length === 0 && blockedPrompt(r)) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: 'content_filter',
    });
  }
  return {
    id: `chatcmpl-${responseId}`,
    object: 'chat.completion',
    created: nowSeconds(),
    model: typeof r.modelVersion === 'string' ? r.modelVersion : model,
    choices,
    usage: usageOf(r.usageMetadata) ?? null,
  };
}

export function geminiError(status: number, body: unknown, text: string): GatewayError {
  // Errors of a streamed call may come wrapped in an array.
  const b = Array.isArray(body) ? body[0] : body;
  const e = isObject(b) && isObject(b.error) ? b.error : undefined;
  const message =
    typeof e?.message === 'string' ? e.message : text.slice(0, 500) || `Gemini answered ${status}.`;
  return providerFailure(status, message, undefined, typeof e?.status === 'string' ? e.status : null);
}

/** Each Gemini SSE event is a whole GenerateContentResponse carrying the next piece of every part. */
export class GeminiStream implements StreamTranslator {
  complete = false;
  failure: GatewayError | undefined;
  private readonly header: ChunkHeader;
  private started = false;
  private calls = 0;
  private usage: Json | undefined;

  constructor(model: string) {
    this.header = { id: completionId(), model, created: nowSeconds() };
  }

  push(ev: ProviderEvent): Json[] {
    const data = tryJson(ev.data);
    if (!isObject(data)) return [];
    if (isObject(data.error)) {
      // A status Gemini gives is kept; without one the failure is the gateway's 502 for a bad upstream.
      const code = numberOr(data.error.code);
      const status = code !== undefined && code >= 400 && code <= 599 ? code : 502;
      this.failure = geminiError(status, data, ev.data);
      return [];
    }
    const out: Json[] = [];
    if (!this.started) {
      this.started = true;
      if (typeof data.responseId === 'string') this.header.id = `chatcmpl-${data.responseId}`;
      if (typeof data.modelVersion === 'string') this.header.model = data.modelVersion;
      const first = chunk(this.header, { role: 'assistant', content: '' });
      // Gemini counts the prompt in its first event already: Anthropic's `message_start` can say it.
      const early = usageOf(data.usageMetadata);
      if (early) first[GATEWAY_FIELDS] = { prompt_usage: early };
      out.push(first);
    }
    const usage = usageOf(data.usageMetadata);
    if (usage) this.usage = usage;
    const candidate =
      Array.isArray(data.candidates) && isObject(data.candidates[0]) ? data.candidates[0] : undefined;
    if (!candidate) {
      if (blockedPrompt(data)) {
        this.complete = true;
        out.push(chunk(this.header, {}, 'content_filter'));
      }
      return out;
    }
    const parts = readParts(candidate, this.header.id.replace(/^chatcmpl-/, ''), this.calls);
    if (parts.reasoning) out.push(chunk(this.header, { reasoning_content: parts.reasoning }));
    if (parts.text) out.push(chunk(this.header, { content: parts.text }));
    if (parts.calls.length > 0) {
      // Gemini sends each call whole, so one delta carries its id, name and full arguments.
      out.push(
        chunk(this.header, { tool_calls: parts.calls.map((c, n) => ({ index: this.calls + n, ...c })) }),
      );
      this.calls += parts.calls.length;
    }
    const finish = finishOf(candidate.finishReason, this.calls > 0);
    if (finish) {
      this.complete = true;
      out.push(chunk(this.header, {}, finish));
    }
    return out;
  }

  end(): Json[] {
    return this.complete && this.usage ? [usageChunk(this.header, this.usage)] : [];
  }
}

export const googleChat: ChatTranslation = {
  buildCall(body, ctx: ChatContext) {
    const model = encodeURIComponent(geminiModel(ctx.model));
    const url = ctx.stream
      ? `${ctx.baseUrl}/v1beta/models/${model}:streamGenerateContent?alt=sse`
      : `${ctx.baseUrl}/v1beta/models/${model}:generateContent`;
    return { url, headers: {}, body: JSON.stringify(toGeminiRequest(body)) };
  },
  response: (reply, ctx) => fromGeminiResponse(reply, ctx.model),
  streamContentType: 'text/event-stream',
  decoder: () => new SseDecoder(),
  stream: (ctx) => new GeminiStream(ctx.model),
  error: (status, body, text) => geminiError(status, body, text),
};

// Reassembles a chat completion from its stream chunks, for the log: content, refusal, tool calls
// (by index, arguments concatenated), finish reasons, and the usage chunk.

interface ToolCallParts {
  id?: string;
  type?: string;
  name: string;
  arguments: string;
}

interface ChoiceParts {
  role: string;
  content: string | null;
  refusal: string | null;
  reasoning: string | null;
  toolCalls: Map<number, ToolCallParts>;
  finishReason: string | null;
}

type Json = Record<string, unknown>;

export class ChatStreamAccumulator {
  private id: string | undefined;
  private model: string | undefined;
  private created: number | undefined;
  private systemFingerprint: string | undefined;
  private readonly choices = new Map<number, ChoiceParts>();
  usage: unknown;
  chunks = 0;

  add(chunk: Json): void {
    this.chunks++;
    if (typeof chunk.id === 'string') this.id ??= chunk.id;
    if (typeof chunk.model === 'string') this.model ??= chunk.model;
    if (typeof chunk.created === 'number') this.created ??= chunk.created;
    if (typeof chunk.system_fingerprint === 'string') this.systemFingerprint = chunk.system_fingerprint;
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const raw of chunk.choices) {
      if (!raw || typeof raw !== 'object') continue;
      const c = raw as Json;
      const index = typeof c.index === 'number' ? c.index : 0;
      let parts = this.choices.get(index);
      if (!parts) {
        parts = {
          role: 'assistant',
          content: null,
          refusal: null,
          reasoning: null,
          toolCalls: new Map(),
          finishReason: null,
        };
        this.choices.set(index, parts);
      }
      if (typeof c.finish_reason === 'string') parts.finishReason = c.finish_reason;
      const delta = c.delta as Json | undefined;
      if (!delta || typeof delta !== 'object') continue;
      if (typeof delta.role === 'string') parts.role = delta.role;
      if (typeof delta.content === 'string') parts.content = (parts.content ?? '') + delta.content;
      if (typeof delta.refusal === 'string') parts.refusal = (parts.refusal ?? '') + delta.refusal;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string') parts.reasoning = (parts.reasoning ?? '') + reasoning;
      if (Array.isArray(delta.tool_calls)) {
        for (const rawCall of delta.tool_calls) {
          if (!rawCall || typeof rawCall !== 'object') continue;
          const call = rawCall as Json;
          const i = typeof call.index === 'number' ? call.index : parts.toolCalls.size;
          let t = parts.toolCalls.get(i);
          if (!t) {
            t = { name: '', arguments: '' };
            parts.toolCalls.set(i, t);
          }
          if (typeof call.id === 'string') t.id = call.id;
          if (typeof call.type === 'string') t.type = call.type;
          const fn = call.function as Json | undefined;
          if (fn && typeof fn.name === 'string') t.name += fn.name;
          if (fn && typeof fn.arguments === 'string') t.arguments += fn.arguments;
        }
      }
    }
  }

  /** The text streamed so far, every choice's content joined: what output guardrails read. */
  text(): string {
    let out = '';
    for (const parts of this.choices.values())
      if (parts.content) out += out ? `\n${parts.content}` : parts.content;
    return out;
  }

  /** What output guardrails read: every choice's content and the arguments of its tool calls. */
  checkedText(): string {
    let out = this.text();
    for (const parts of this.choices.values()) {
      for (const t of parts.toolCalls.values())
        if (t.arguments) out += out ? `\n${t.arguments}` : t.arguments;
    }
    return out;
  }

  /** Everything the model generated so far (content, refusal, reasoning, tool calls), for an estimate. */
  generated(): string {
    let out = '';
    for (const p of this.choices.values()) {
      out += (p.content ?? '') + (p.refusal ?? '') + (p.reasoning ?? '');
      for (const t of p.toolCalls.values()) out += t.name + t.arguments;
    }
    return out;
  }

  /** The stream as one `chat.completion` object. */
  result(): Json {
    const choices = [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, p]) => {
        const message: Json = { role: p.role, content: p.content };
        if (p.refusal !== null) message.refusal = p.refusal;
        if (p.reasoning !== null) message.reasoning_content = p.reasoning;
        if (p.toolCalls.size > 0) {
          message.tool_calls = [...p.toolCalls.entries()]
            .sort(([a], [b]) => a - b)
            .map(([, t]) => ({
              id: t.id,
              type: t.type ?? 'function',
              function: { name: t.name, arguments: t.arguments },
            }));
        }
        return { index, message, finish_reason: p.finishReason };
      });
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      ...(this.systemFingerprint ? { system_fingerprint: this.systemFingerprint } : {}),
      choices,
      usage: this.usage ?? null,
    };
  }
}

import { type GatewayError, guardrailDenied } from '../core/errors';
import type { ModelCallState } from '../core/http';
import type { GuardrailOutcomeLog } from '../core/log-entry';
import {
  type CheckOutcome,
  type CompiledCheck,
  denialMessage,
  type GuardrailReport,
  runChecks,
} from '../guardrails/engine';
import { guardrailResolver } from '../guardrails/resolve';
import type { CheckContext, Direction, ModerationResult } from '../guardrails/types';
import { firstTarget, planFor, requestConfig } from './plan-request';
import { policies } from './policy';
import { readAll, sendUpstream } from './upstream';

// Streamed output is checked as it accumulates: after every upstream read while short, then each time
// it has grown by this much, and once more at the end. Moderation calls run at the end only.
const STREAM_EAGER_CHARS = 16_384;
const STREAM_STEP_CHARS = 1_024;

/** A place in a request or reply body that holds text: read to check it, written to redact it. */
export interface TextSlot {
  get(): string;
  set(text: string): void;
}

const toLog = (outcomes: CheckOutcome[]): GuardrailOutcomeLog[] => outcomes.map((o) => ({ ...o }));

/** The 446 a `deny` check ends a request with, naming every check that failed. */
export function denied(direction: Direction, report: GuardrailReport): GatewayError {
  return guardrailDenied(denialMessage(direction, report));
}

/**
 * The guardrails of one request: the config's input checks before the provider call, its output checks
 * on what comes back, and their results in the log and in the `x-gateway-guardrails` reply header.
 */
export class RequestGuard {
  private readonly summary: string[] = [];

  private constructor(
    private readonly state: ModelCallState,
    private readonly input: CompiledCheck[],
    private readonly output: CompiledCheck[],
    private readonly model: string | undefined,
    private readonly rawModel: string | undefined,
  ) {}

  /**
   * The request's guard: the workspace's and API key's policy guardrails, then the config's, which can
   * add checks but never remove them. Undefined when none applies (the common case: no cost).
   */
  static async forRequest(
    state: ModelCallState,
    rawModel: string | undefined,
  ): Promise<RequestGuard | undefined> {
    const [config, policy] = await Promise.all([requestConfig(state), policies.forRequest(state)]);
    const wanted = {
      input_guardrails: [...policy.guardrails.input_guardrails, ...(config?.input_guardrails ?? [])],
      output_guardrails: [...policy.guardrails.output_guardrails, ...(config?.output_guardrails ?? [])],
    };
    if (wanted.input_guardrails.length === 0 && wanted.output_guardrails.length === 0) return undefined;
    const principal = state.principal;
    const lists = await guardrailResolver.resolve(wanted, principal.organisationId, principal.workspace);
    if (lists.input.length === 0 && lists.output.length === 0) return undefined;
    const model = rawModel?.startsWith('@') ? rawModel.slice(rawModel.indexOf('/') + 1) : rawModel;
    return new RequestGuard(state, lists.input, lists.output, model, rawModel);
  }

  get checksOutput(): boolean {
    return this.output.length > 0;
  }

  /** Runs the input checks over the slots; redacts them in place; throws the 446 of a `deny`. */
  async checkInput(slots: TextSlot[]): Promise<void> {
    if (this.input.length === 0) return;
    const report = await runChecks(
      this.input,
      slots.map((s) => s.get()),
      this.context('input'),
    );
    if (report.redacted) redactSlots(slots, report);
    this.record('input', report);
    if (!report.passed) throw denied('input', report);
  }

  /**
   * Runs the output checks over a whole reply; redacts in place (true when it did); throws the 446 of a
   * `deny`.
   */
  async checkOutput(slots: TextSlot[]): Promise<boolean> {
    if (this.output.length === 0) return false;
    const report = await runChecks(
      this.output,
      slots.map((s) => s.get()),
      this.context('output'),
    );
    if (report.redacted) redactSlots(slots, report);
    this.record('output', report);
    if (!report.passed) throw denied('output', report);
    return report.redacted;
  }

  /**
   * A watcher for streamed output. Chunks already sent cannot be recalled, so `redact` checks report
   * what they find (as `log` would) instead of replacing it; `deny` ends the stream.
   */
  watchStream(): StreamWatch {
    const streamed = this.output.map((c) => (c.action === 'redact' ? { ...c, action: 'log' as const } : c));
    const eager = streamed.filter((c) => c.type !== 'moderation');
    let checkedAt = -1;
    return {
      check: async (text: string, final: boolean): Promise<GatewayError | undefined> => {
        const grown = text.length - checkedAt;
        const due = final || (grown > 0 && (text.length <= STREAM_EAGER_CHARS || grown >= STREAM_STEP_CHARS));
        if (!due || this.output.length === 0) return undefined;
        checkedAt = text.length;
        const report = await runChecks(final ? streamed : eager, [text], this.context('output'));
        if (final || !report.passed) this.record('output', report);
        return report.passed ? undefined : denied('output', report);
      },
    };
  }

  private context(direction: Direction): CheckContext {
    return { direction, model: this.model, moderate: (text) => this.moderate(text) };
  }

  private record(direction: Direction, report: GuardrailReport): void {
    const log = this.state.log;
    if (log) log.guardrails = { ...log.guardrails, [direction]: toLog(report.outcomes) };
    this.summary.push(
      ...report.outcomes.map(
        (o) => `${direction}:${o.id}=${o.passed ? 'pass' : o.action === 'redact' ? 'redacted' : 'fail'}`,
      ),
    );
    // Ids are restricted to header-safe characters when the checks are compiled.
    this.state.replyHeaders['x-gateway-guardrails'] = this.summary.join(',');
  }

  /** The provider's moderation endpoint (OpenAI's wire format), reached with the request's own route. */
  private async moderate(text: string): Promise<ModerationResult> {
    const { plan } = await planFor(this.state, this.rawModel);
    const target = await firstTarget(this.state, plan);
    if (target.provider.chat) throw new Error(`provider ${target.provider.name} has no moderation endpoint`);
    const reply = await sendUpstream({
      url: new URL(`${target.baseUrl}/moderations`),
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'accept-encoding': 'identity',
        ...target.provider.headers(target),
      },
      body: JSON.stringify({ model: 'omni-moderation-latest', input: text }),
      signal: this.state.clientSignal,
      timeoutMs: 10_000,
    });
    const body = JSON.parse(await readAll(reply.body, 1_000_000)) as {
      results?: Array<{ flagged?: boolean; categories?: Record<string, boolean> }>;
    };
    if (reply.status >= 400 || !Array.isArray(body.results))
      throw new Error(`moderation answered ${reply.status}`);
    const categories = new Set<string>();
    let flagged = false;
    for (const r of body.results) {
      flagged ||= r.flagged === true;
      for (const [name, hit] of Object.entries(r.categories ?? {})) if (hit) categories.add(name);
    }
    return { flagged, categories: [...categories] };
  }
}

export interface StreamWatch {
  /** Checks the output so far; returns the error to end the stream with when a `deny` check fails. */
  check(text: string, final: boolean): Promise<GatewayError | undefined>;
}

function redactSlots(slots: TextSlot[], report: GuardrailReport): void {
  for (const [i, slot] of slots.entries()) slot.set(report.segments[i] ?? '');
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** The arguments (and the legacy `function_call`) of an assistant message's tool calls. */
function toolCallSlots(message: Json, slots: TextSlot[]): void {
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const fn = isJson(call) ? call.function : undefined;
    if (isJson(fn) && typeof fn.arguments === 'string') slots.push(textSlot(fn, 'arguments'));
  }
  if (isJson(message.function_call) && typeof message.function_call.arguments === 'string') {
    slots.push(textSlot(message.function_call, 'arguments'));
  }
}

/**
 * A tool definition's description and its JSON schema: the schema is read as its JSON text and, when
 * redacted, written back only if it still parses.
 */
function toolDefinitionSlots(tools: unknown, slots: TextSlot[]): void {
  for (const tool of Array.isArray(tools) ? tools : []) {
    if (!isJson(tool)) continue;
    const holder = isJson(tool.function) ? tool.function : tool;
    if (typeof holder.description === 'string') slots.push(textSlot(holder, 'description'));
    for (const key of ['parameters', 'input_schema'] as const) {
      if (!isJson(holder[key])) continue;
      slots.push({
        get: () => JSON.stringify(holder[key]),
        set: (text) => {
          try {
            holder[key] = JSON.parse(text);
          } catch {
            holder[key] = {};
          }
        },
      });
    }
  }
}

/**
 * The text slots of a chat request: every message's string content and text parts (tool results
 * included), assistant tool-call arguments, and the tool definitions.
 */
export function chatMessageSlots(body: Record<string, unknown>): TextSlot[] {
  const slots: TextSlot[] = [];
  if (!Array.isArray(body.messages)) return slots;
  for (const message of body.messages as Array<Record<string, unknown>>) {
    if (typeof message.content === 'string') slots.push(textSlot(message, 'content'));
    else if (Array.isArray(message.content)) {
      for (const part of message.content as Array<Record<string, unknown>>) {
        if (part?.type === 'text' && typeof part.text === 'string') slots.push(textSlot(part, 'text'));
      }
    }
    toolCallSlots(message, slots);
  }
  toolDefinitionSlots(body.tools, slots);
  toolDefinitionSlots(body.functions, slots);
  return slots;
}

/** The text slots of a chat completion reply: each choice's message content and tool-call arguments. */
export function chatReplySlots(reply: unknown): TextSlot[] {
  const choices = (reply as { choices?: Array<{ message?: Record<string, unknown> }> } | null)?.choices;
  if (!Array.isArray(choices)) return [];
  const slots: TextSlot[] = [];
  for (const choice of choices) {
    const m = choice?.message;
    if (!isJson(m)) continue;
    if (typeof m.content === 'string') slots.push(textSlot(m, 'content'));
    toolCallSlots(m, slots);
  }
  return slots;
}

const textSlot = (holder: Record<string, unknown>, key: string): TextSlot => ({
  get: () => holder[key] as string,
  set: (t) => {
    holder[key] = t;
  },
});

/**
 * The text slots of a Responses request: `instructions`, a string `input`, and every input item's text:
 * message parts of any kind that carry text, function call arguments, function and tool call outputs,
 * and the tool definitions.
 */
export function responsesInputSlots(body: Record<string, unknown>): TextSlot[] {
  const slots: TextSlot[] = [];
  if (typeof body.instructions === 'string') slots.push(textSlot(body, 'instructions'));
  if (typeof body.input === 'string') slots.push(textSlot(body, 'input'));
  else if (Array.isArray(body.input)) {
    for (const item of body.input as Array<Record<string, unknown>>) {
      if (!isJson(item)) continue;
      if (typeof item.content === 'string') slots.push(textSlot(item, 'content'));
      else if (Array.isArray(item.content)) {
        for (const part of item.content as Array<Record<string, unknown>>) {
          if (isJson(part) && typeof part.text === 'string') slots.push(textSlot(part, 'text'));
        }
      }
      for (const key of ['arguments', 'output', 'input'] as const) {
        if (typeof item[key] === 'string') slots.push(textSlot(item, key));
      }
    }
  }
  toolDefinitionSlots(body.tools, slots);
  return slots;
}

/** The text slots of a Responses reply: the output text parts of its messages, and tool-call arguments. */
export function responsesOutputSlots(reply: unknown): TextSlot[] {
  const output = (reply as { output?: unknown } | null)?.output;
  if (!Array.isArray(output)) return [];
  const slots: TextSlot[] = [];
  for (const item of output as Array<Record<string, unknown>>) {
    if (isJson(item) && typeof item.arguments === 'string') slots.push(textSlot(item, 'arguments'));
    if (item?.type !== 'message' || !Array.isArray(item.content)) continue;
    for (const part of item.content as Array<Record<string, unknown>>) {
      if (part?.type === 'output_text' && typeof part.text === 'string') slots.push(textSlot(part, 'text'));
    }
  }
  return slots;
}

import type { GuardrailLog, GuardrailOutcomeLog } from '../core/log-entry';
import {
  type CheckOutcome,
  type CompiledCheck,
  compileChecks,
  denialMessage,
  type GuardrailReport,
  runChecks,
} from './engine';
import type { CheckContext, Direction, ModerationResult } from './types';

// Realtime sessions run the same checks as HTTP requests: input checks on the client's text items and on
// the provider's transcripts of the client's audio, output checks on response text and audio transcripts.

/** The guardrail lists of a session, expanded at `$connect` (saved ids replaced by their checks). */
export interface SessionGuardrails {
  input: unknown[];
  output: unknown[];
}

/** What the relay does with one event after the checks. */
export type Verdict =
  | { kind: 'pass'; event?: string }
  | { kind: 'drop' }
  | { kind: 'deny'; direction: Direction; message: string };

const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.text.delta',
  'response.output_audio_transcript.delta',
  'response.audio_transcript.delta',
]);
const INPUT_TRANSCRIPT = 'conversation.item.input_audio_transcription.completed';
// Output is checked as it accumulates: on every delta while short, then each time it grew this much.
const EAGER_CHARS = 16_384;
const STEP_CHARS = 1_024;

/** One entry per check for the whole session: passed only if every run passed. */
function merge(into: Map<string, GuardrailOutcomeLog>, outcomes: CheckOutcome[]): void {
  for (const o of outcomes) {
    const seen = into.get(o.id);
    if (!seen) {
      into.set(o.id, { ...o });
      continue;
    }
    seen.passed &&= o.passed;
    seen.findings += o.findings;
    seen.duration_ms = Math.round((seen.duration_ms + o.duration_ms) * 1000) / 1000;
    if (!o.passed && o.message) seen.message = o.message;
  }
}

export class RealtimeGuard {
  private readonly results = {
    input: new Map<string, GuardrailOutcomeLog>(),
    output: new Map<string, GuardrailOutcomeLog>(),
  };
  private responseText = '';
  private checkedAt = -1;
  // After an output denial the response is cancelled upstream; what it still sends is dropped.
  private cancelled = false;

  private constructor(
    private readonly input: CompiledCheck[],
    private readonly output: CompiledCheck[],
    private readonly model: string,
    private readonly moderate?: (text: string) => Promise<ModerationResult>,
  ) {}

  /** The session's guard, or undefined without guardrails. The lists were validated at `$connect`. */
  static create(
    lists: SessionGuardrails | undefined,
    model: string,
    moderate?: (text: string) => Promise<ModerationResult>,
  ): RealtimeGuard | undefined {
    if (!lists || (lists.input.length === 0 && lists.output.length === 0)) return undefined;
    const problems: string[] = [];
    const input = compileChecks(lists.input, 'input_guardrails', problems);
    // Text already delivered cannot be recalled: on a live session `redact` reports, as `log` does.
    const output = compileChecks(lists.output, 'output_guardrails', problems).map((c) =>
      c.action === 'redact' ? { ...c, action: 'log' as const } : c,
    );
    if (problems.length > 0) throw new Error(`invalid session guardrails: ${problems.join('; ')}`);
    return new RealtimeGuard(input, output, model, moderate);
  }

  /** For the session's log entry. */
  log(): GuardrailLog | null {
    const input = [...this.results.input.values()];
    const output = [...this.results.output.values()];
    if (input.length === 0 && output.length === 0) return null;
    return { ...(input.length ? { input } : {}), ...(output.length ? { output } : {}) };
  }

  /**
   * A client event: the text parts of a `conversation.item.create` are input. Redaction rewrites the event
   * that goes on to the provider; a `deny` keeps it from the provider altogether.
   */
  async clientEvent(raw: string, event: Record<string, unknown> | undefined): Promise<Verdict> {
    if (this.input.length === 0 || event?.type !== 'conversation.item.create') return { kind: 'pass' };
    const content = (event.item as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return { kind: 'pass' };
    const parts = (content as Array<Record<string, unknown>>).filter(
      (p) => p && (p.type === 'input_text' || p.type === 'text') && typeof p.text === 'string',
    );
    if (parts.length === 0) return { kind: 'pass' };
    const report = await this.run(
      'input',
      this.input,
      parts.map((p) => p.text as string),
    );
    if (!report.passed) return this.denial('input', report);
    if (!report.redacted) return { kind: 'pass', event: raw };
    parts.forEach((p, i) => {
      p.text = report.segments[i] ?? '';
    });
    return { kind: 'pass', event: JSON.stringify(event) };
  }

  /**
   * A provider event: transcripts of the client's audio are input; response text and audio transcripts
   * are output, checked before the delta is delivered and once more when the response is done.
   */
  async upstreamEvent(event: Record<string, unknown> | undefined): Promise<Verdict> {
    if (!event) return { kind: 'pass' };
    const type = event.type;
    if (type === INPUT_TRANSCRIPT && this.input.length > 0 && typeof event.transcript === 'string') {
      const report = await this.run('input', this.input, [event.transcript]);
      return report.passed ? { kind: 'pass' } : this.denial('input', report);
    }
    if (this.output.length === 0) return { kind: 'pass' };
    if (type === 'response.created') {
      this.responseText = '';
      this.checkedAt = -1;
      this.cancelled = false;
      return { kind: 'pass' };
    }
    const final = type === 'response.done';
    if (this.cancelled && typeof type === 'string' && type.startsWith('response.')) {
      // The client hears that the response ended, and nothing more of what it said.
      if (final) this.cancelled = false;
      return final ? { kind: 'pass' } : { kind: 'drop' };
    }
    if (TEXT_DELTAS.has(type as string) && typeof event.delta === 'string') this.responseText += event.delta;
    else if (!final) return { kind: 'pass' };
    const grown = this.responseText.length - this.checkedAt;
    const due = final || (grown > 0 && (this.responseText.length <= EAGER_CHARS || grown >= STEP_CHARS));
    if (!due || this.responseText === '') return { kind: 'pass' };
    this.checkedAt = this.responseText.length;
    // Moderation is a network call: once per response, at its end.
    const checks = final ? this.output : this.output.filter((c) => c.type !== 'moderation');
    const report = await this.run('output', checks, [this.responseText]);
    if (report.passed) return { kind: 'pass' };
    this.cancelled = !final;
    return this.denial('output', report);
  }

  private async run(
    direction: Direction,
    checks: CompiledCheck[],
    segments: string[],
  ): Promise<GuardrailReport> {
    const context: CheckContext = { direction, model: this.model, moderate: this.moderate };
    const report = await runChecks(checks, segments, context);
    merge(this.results[direction], report.outcomes);
    return report;
  }

  private denial(direction: Direction, report: GuardrailReport): Verdict {
    return { kind: 'deny', direction, message: denialMessage(direction, report) };
  }
}

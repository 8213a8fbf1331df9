import { GatewayError, hasCode } from '../../core/errors';
import { BudgetReservation, chargeUnreserved, type LimitHolder } from '../budget';
import { maxOutputTokens, priceOf } from '../pricing';
import { errorEvent } from './protocol';
import { type RealtimeUsage, realtimeMaxCost } from './usage';

/** Input the provider adds to every response unseen by the gateway: its default instructions. */
const PROVIDER_INPUT_TOKENS = 512;

/**
 * Audio tokens per second of speech: OpenAI counts user audio at about 10 a second and its own at about
 * 20; the larger bounds both.
 */
const AUDIO_TOKENS_PER_SECOND = 20;

/** Bytes a second of input audio: 8 kHz 8-bit for G.711, else pcm16 at 24 kHz, OpenAI's default. */
function audioBytesPerSecond(format: unknown): number {
  if (format === undefined || format === 'pcm16' || format === 'audio/pcm') return 48_000;
  // Any other format is taken as the most compact one, so its duration is never underestimated.
  return 8_000;
}

const record = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A response's own output limit: a positive count; `inf` or nothing leaves it to the next level. */
const outputLimit = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;

/**
 * A realtime session's budget reservations, one per `response.create`: the most a response can cost is
 * the conversation so far (every byte the client sent as a token, audio by its duration, the outputs of
 * earlier responses) plus its output limit, at the model's realtime prices. Responses settle in the
 * order they were created; one the provider starts on its own (voice activity) is charged when done.
 */
export class ResponseBudgets {
  private textTokens = PROVIDER_INPUT_TOKENS;
  private audioTokens = 0;
  /** The last `session.update`: instructions and tools are input of every response. */
  private sessionBytes = 0;
  private bytesPerSecond = audioBytesPerSecond(undefined);
  private sessionOutputLimit: unknown;
  private readonly open: BudgetReservation[] = [];
  private taken = 0;

  constructor(
    private readonly holders: LimitHolder[],
    private readonly provider: string,
    private readonly model: () => string,
    private readonly sessionId: string,
  ) {}

  /** Adds a client event other than `response.create` to the conversation's bound. */
  observe(event: Record<string, unknown> | undefined, raw: string): void {
    if (event?.type === 'session.update') {
      const session = record(event.session);
      this.sessionBytes = Buffer.byteLength(raw, 'utf8');
      const format = session.input_audio_format ?? record(record(record(session.audio).input).format).type;
      if (format !== undefined) this.bytesPerSecond = audioBytesPerSecond(format);
      const limit = session.max_response_output_tokens ?? session.max_output_tokens;
      if (limit !== undefined) this.sessionOutputLimit = limit;
    } else if (event?.type === 'input_audio_buffer.append' && typeof event.audio === 'string') {
      const seconds = Math.ceil((event.audio.length * 3) / 4) / this.bytesPerSecond;
      this.audioTokens += Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND);
    } else if (event?.type === 'conversation.item.create') {
      this.textTokens += Buffer.byteLength(raw, 'utf8');
    }
  }

  /** Reserves a `response.create`'s maximum cost on every budget; the error event to send when refused. */
  async reserve(event: Record<string, unknown>, raw: string): Promise<string | undefined> {
    if (this.holders.length === 0) return undefined;
    const model = this.model();
    const price = priceOf(this.provider, model);
    // Without audio prices a spoken response's cost would be unknown, and so charged nothing.
    if (!price?.audio) {
      return errorEvent(
        'invalid_request_error',
        'model_not_priced',
        `The model "${model}" of provider "${this.provider}" has no realtime (text and audio) price, and a budget applies to this session.`,
        'model',
      );
    }
    const output =
      outputLimit(record(event.response).max_output_tokens) ??
      outputLimit(this.sessionOutputLimit) ??
      maxOutputTokens(this.provider, model);
    const usd = realtimeMaxCost(price, {
      // The response's own instructions and input items are input of this response only.
      textTokens: this.textTokens + this.sessionBytes + Buffer.byteLength(raw, 'utf8'),
      audioTokens: this.audioTokens,
      outputTokens: output,
    });
    try {
      this.open.push(await BudgetReservation.take(this.holders, usd, `${this.sessionId}_${++this.taken}`));
      return undefined;
    } catch (error) {
      if (!(error instanceof GatewayError) || !hasCode(error, 'budget_exceeded')) throw error;
      return errorEvent('invalid_request_error', 'budget_exceeded', error.message, error.param);
    }
  }

  /**
   * Settles the oldest open reservation with a finished response's cost (what was used, when cancelled or
   * failed); answers the first holder whose spend has reached its limit.
   */
  async settle(usage: RealtimeUsage | null, cost: number | null): Promise<LimitHolder | undefined> {
    // What the model said is input of every later response.
    if (usage) {
      this.textTokens += usage.output_token_details.text_tokens;
      this.audioTokens += usage.output_token_details.audio_tokens;
    }
    const held = this.open.shift();
    if (held) return held.settle(cost ?? 0);
    if (this.holders.length === 0 || !cost || cost <= 0) return undefined;
    return chargeUnreserved(this.holders, cost);
  }

  /** Gives back every reservation whose response never finished: the session is over. */
  async release(): Promise<void> {
    await Promise.all(this.open.splice(0).map((r) => r.release()));
  }
}

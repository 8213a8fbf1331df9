import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../functions/core/errors';
import { OPERATIONS } from '../../functions/core/operations';
import {
  jsonBody,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  parseClientJson,
  parseMetadata,
} from '../../functions/core/request-body';
import { SseParser } from '../../functions/core/sse';
import { parseConfig, parseSavedConfig } from '../../functions/gateway/config';
import { compileRoutes, decodePathParam, matchRoute } from '../../functions/middleware/route';
import { AnthropicStream } from '../../functions/providers/anthropic/chat-completions';
import { ConverseStream } from '../../functions/providers/bedrock/chat-completions';
import { AwsEventStreamDecoder } from '../../functions/providers/bedrock/event-stream';
import { GeminiStream } from '../../functions/providers/google/chat-completions';
import { SseDecoder } from '../../functions/providers/shared/openai-shapes';
import type { Json, ProviderEvent, StreamTranslator } from '../../functions/providers/types';
import { awsEvent, awsException } from '../support/fake-bedrock';

// Random and adversarial inputs for every parser that reads what a client or a provider sends: none may
// throw anything but a 4xx GatewayError, and none may answer with a 5xx. A fixed seed keeps runs
// repeatable; each property's run count is in RUNS, and their sum is reported by the last test.

const SEED = 14;
const RUNS = {
  jsonBody: 300,
  depth: 200,
  paths: 300,
  config: 300,
  configShaped: 200,
  metadata: 300,
  sse: 200,
  anthropic: 200,
  gemini: 200,
  bedrock: 200,
  bedrockFrames: 100,
};
const params = (numRuns: number) => ({ seed: SEED, numRuns });

/** Runs `fn`; anything thrown must be a GatewayError with a 4xx status. */
function onlyClientErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    const status = (error as GatewayError).status;
    expect(status >= 400 && status < 500, `status ${status}: ${(error as Error).message}`).toBe(true);
  }
}

const depthOf = (value: unknown): number => {
  // Iterative on purpose: the values are as deep as the generator makes them.
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v && typeof v === 'object') {
      max = Math.max(max, d + 1);
      for (const child of Object.values(v)) stack.push([child, d + 1]);
    }
  }
  return max;
};

/** JSON text that nests `depth` levels of arrays or objects around a value. */
const nestedText = fc
  .tuple(fc.integer({ min: 0, max: 200 }), fc.boolean(), fc.jsonValue({ maxDepth: 2 }))
  .map(([depth, arrays, inner]) => {
    const open = arrays ? '[' : '{"k":';
    const close = arrays ? ']' : '}';
    return {
      depth: depth + depthOf(inner),
      text: `${open.repeat(depth)}${JSON.stringify(inner)}${close.repeat(depth)}`,
    };
  });

const KEYS = [
  'type',
  'index',
  'delta',
  'message',
  'content_block',
  'usage',
  'error',
  'text',
  'partial_json',
  'stop_reason',
  'id',
  'name',
  'input',
  'candidates',
  'content',
  'parts',
  'functionCall',
  'finishReason',
  'usageMetadata',
  'contentBlockIndex',
  'start',
  'toolUse',
  'stopReason',
  'metrics',
  'role',
  'code',
  'status',
  'thought',
  'args',
  'input_tokens',
  'output_tokens',
  'promptTokenCount',
  'candidatesTokenCount',
  'toolUseId',
  'responseId',
  'modelVersion',
  'reasoningContent',
  'signature',
  'thinking',
  'targets',
  'strategy',
  'mode',
  'provider',
  'retry',
  'attempts',
  'weight',
  'override_params',
  'input_guardrails',
  'pattern',
  'kinds',
  'words',
  'checks',
];
const { node: shaped } = fc.letrec((tie) => ({
  node: fc.oneof(
    { maxDepth: 5 },
    fc.jsonValue({ maxDepth: 1 }),
    fc.constantFrom(
      'message_start',
      'content_block_start',
      'content_block_delta',
      'text_delta',
      'input_json_delta',
      'tool_use',
      'message_delta',
      'message_stop',
      'error',
      'STOP',
      'MAX_TOKENS',
      'tool_use',
      'end_turn',
      'fallback',
      'loadbalance',
      'openai',
      'regex',
      'pii',
      '(a+)+$',
      '(?=x)',
      '[',
      'email',
    ),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 6 }),
  ),
}));

function translatorProperty(make: () => StreamTranslator, names: string[], runs: number): void {
  const event = fc.record({
    event: fc.option(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), { nil: undefined }),
    data: fc.oneof(
      shaped.map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 40 }),
    ),
    exception: fc.option(fc.boolean(), { nil: undefined }),
  }) as fc.Arbitrary<ProviderEvent>;
  fc.assert(
    fc.property(fc.array(event, { maxLength: 12 }), (events) => {
      const translator = make();
      const chunks: Json[] = [];
      for (const ev of events) {
        chunks.push(...translator.push(ev));
        if (translator.failure) break;
      }
      if (!translator.failure) chunks.push(...translator.end());
      for (const c of chunks) expect(typeof c).toBe('object');
      expect(() => JSON.stringify(chunks)).not.toThrow();
      const failure = translator.failure;
      if (failure) {
        expect(failure).toBeInstanceOf(GatewayError);
        expect(Number.isInteger(failure.status) && failure.status >= 400 && failure.status <= 599).toBe(true);
      }
    }),
    params(runs),
  );
}

describe('property: the request reader', () => {
  it('any body text is an object or a 400, never another error', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      nestedText.map((n) => n.text),
      fc.constantFrom('{', '[', '"', '\\', '{"a":"\\', '\u0000', '{"__proto__":{"x":1}}', '1e999', '-'),
    );
    fc.assert(
      fc.property(text, (body) => onlyClientErrors(() => jsonBody(body))),
      params(RUNS.jsonBody),
    );
  });

  it('the depth scan agrees with the real depth, without recursion', () => {
    fc.assert(
      fc.property(nestedText, ({ depth, text }) => {
        expect(jsonTooDeep(text)).toBe(depth > MAX_JSON_DEPTH);
        if (depth <= MAX_JSON_DEPTH)
          expect(parseClientJson(text, 'x', null, 'invalid_json')).toEqual(JSON.parse(text));
        else expect(() => parseClientJson(text, 'x', null, 'invalid_json')).toThrow(GatewayError);
      }),
      params(RUNS.depth),
    );
  });

  it('any path matches a route or not, and decoding never throws', () => {
    const routes = compileRoutes(OPERATIONS);
    const segment = fc.oneof(
      fc.string({ maxLength: 20 }).map((s) => s.replace(/\//g, '')),
      fc.constantFrom('%', '%Z', '%ZZ', '%E0%A4%A', '%C0', '%25', '%2F', 'a'.repeat(300)),
    );
    const path = fc.tuple(
      fc.constantFrom('logs', 'virtual-keys', 'prompts', 'configs', 'guardrails', 'api-keys', 'chat'),
      fc.array(segment, { maxLength: 3 }),
    );
    fc.assert(
      fc.property(path, fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'), ([base, rest], method) => {
        const found = matchRoute(routes, method, `/v1/${base}/${rest.join('/')}`);
        for (const value of Object.values(found?.params ?? {})) expect(typeof value).toBe('string');
        for (const s of rest) decodePathParam(s);
      }),
      params(RUNS.paths),
    );
  });
});

describe('property: the config validator', () => {
  it('any JSON value is a config or a 400', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        onlyClientErrors(() => parseConfig(value));
        onlyClientErrors(() => parseSavedConfig(value));
      }),
      params(RUNS.config),
    );
  });

  it('config-shaped values (targets, strategies, guardrails with random patterns) are a config or a 400', () => {
    const config = fc.dictionary(fc.constantFrom(...KEYS), shaped, { maxKeys: 6 });
    fc.assert(
      fc.property(config, (value) => {
        onlyClientErrors(() => parseConfig(value));
        onlyClientErrors(() => parseSavedConfig(value));
      }),
      params(RUNS.configShaped),
    );
  });
});

describe('property: the metadata parser', () => {
  it('any header value is metadata or a 400', () => {
    const header = fc.oneof(
      fc.string({ maxLength: 100 }),
      fc
        .dictionary(
          fc.string({ maxLength: 10 }),
          fc.oneof(fc.string({ maxLength: 600 }), fc.jsonValue({ maxDepth: 2 })),
        )
        .map((v) => JSON.stringify(v)),
      nestedText.map((n) => n.text),
      fc.constantFrom('{"__proto__":"x"}', '{"constructor":"x"}', '{"":"x"}', 'null', '[]'),
    );
    fc.assert(
      fc.property(header, (value) =>
        onlyClientErrors(() => {
          const metadata = parseMetadata(value);
          for (const v of Object.values(metadata)) expect(typeof v).toBe('string');
        }),
      ),
      params(RUNS.metadata),
    );
  });
});

describe('property: the SSE parser', () => {
  it('never throws, and how the bytes are cut never changes the events', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom(
        'data: ',
        'event: error\n',
        '\n',
        '\r',
        '\r\n',
        '\n\n',
        ': ping\n\n',
        'data: {"a":1}\n\n',
        '€',
        '😀',
      ),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (pieces, cuts) => {
          const bytes = Buffer.from(pieces.join(''));
          const whole = new SseParser();
          const expected = [...whole.push(bytes), whole.flush()].filter(Boolean);
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const parser = new SseParser();
          const got = [];
          let from = 0;
          for (const cut of [...at, bytes.length]) {
            got.push(...parser.push(bytes.subarray(from, cut)));
            from = cut;
          }
          got.push(parser.flush());
          expect(got.filter(Boolean)).toEqual(expected);
        },
      ),
      params(RUNS.sse),
    );
  });
});

describe('property: each provider stream translator', () => {
  it('Anthropic: any event sequence gives chunks or a failure with a 4xx/5xx status, never a throw', () => {
    translatorProperty(
      () => new AnthropicStream('claude'),
      [
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
        'ping',
        'error',
      ],
      RUNS.anthropic,
    );
  });

  it('Gemini: any event sequence gives chunks or a failure, never a throw', () => {
    translatorProperty(() => new GeminiStream('gemini'), ['message'], RUNS.gemini);
  });

  it('Bedrock: any event sequence gives chunks or a failure, never a throw', () => {
    translatorProperty(
      () => new ConverseStream('nova'),
      [
        'messageStart',
        'contentBlockStart',
        'contentBlockDelta',
        'contentBlockStop',
        'messageStop',
        'metadata',
        'throttlingException',
        'validationException',
        'modelStreamErrorException',
        'internalServerException',
      ],
      RUNS.bedrock,
    );
  });

  it('Bedrock and SSE decoders: random frames and bytes give events or a plain error the relay turns into a 502', () => {
    const frame = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('messageStart', 'contentBlockDelta', 'messageStop', 'metadata'),
          fc.dictionary(fc.constantFrom(...KEYS), shaped, { maxKeys: 4 }),
        )
        .map(([type, payload]) => awsEvent(type, payload as Record<string, unknown>)),
      fc
        .tuple(fc.constantFrom('throttlingException', 'oddException'), fc.string({ maxLength: 30 }))
        .map(([t, m]) => awsException(t, m)),
      fc.uint8Array({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 6 }), fc.nat(), (frames, cut) => {
        const bytes = Buffer.concat(frames.map((f) => Buffer.from(f)));
        const at = cut % (bytes.length + 1);
        const translator = new ConverseStream('nova');
        const decoder = new AwsEventStreamDecoder();
        try {
          for (const part of [bytes.subarray(0, at), bytes.subarray(at)]) {
            for (const ev of decoder.push(part)) translator.push(ev);
          }
        } catch (error) {
          // A frame that is not an event stream ends the relay with its 502 `stream_failed`.
          expect(error).toBeInstanceOf(Error);
          expect(error).not.toBeInstanceOf(GatewayError);
        }
        const sse = new SseDecoder();
        for (const ev of [...sse.push(bytes), ...sse.flush()]) new AnthropicStream('c').push(ev);
      }),
      params(RUNS.bedrockFrames),
    );
  });
});

describe('property-based runs', () => {
  it('adds up to the reported total', () => {
    const total = Object.values(RUNS).reduce((a, b) => a + b, 0);
    expect(total).toBe(2_500);
  });
});

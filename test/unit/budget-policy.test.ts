import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { periodOf, periodStart } from '../../functions/gateway/budget';
import { signBody } from '../../functions/gateway/budget-alerts';
import { limitsOf, loosenings, modelAllowed } from '../../functions/gateway/policy';
import { maxCostOf, maxOutputTokens, priceOf, readUsage, tokenBound } from '../../functions/gateway/pricing';
import { chatMessageSlots, chatReplySlots, responsesInputSlots } from '../../functions/gateway/request-guard';

describe('maximum cost', () => {
  it('bounds input tokens by UTF-8 bytes, which no tokenizer exceeds', () => {
    expect(tokenBound('hello')).toBe(5);
    expect(tokenBound('héllo €')).toBe(10);
  });

  it("takes the model's max output tokens from the price table, an operator price, or the default", () => {
    expect(maxOutputTokens('openai', 'gpt-4o-mini')).toBe(16_384);
    expect(maxOutputTokens('openai', 'gpt-4o-mini-2024-07-18')).toBe(16_384);
    expect(
      maxOutputTokens('openai', 'o1-pro', [
        { 'o1-pro': { input: 150, output: 600, max_output_tokens: 100 } },
      ]),
    ).toBe(100);
    expect(maxOutputTokens('openai', 'some-new-model')).toBe(128_000);
  });

  it('prices every bound token: input at the input price, output at the output price', () => {
    expect(maxCostOf({ input: 0.15, output: 0.6 }, 1_000, 10_000)).toBeCloseTo(0.00615, 12);
  });

  it('lets operator prices win and price unpriced models', () => {
    expect(priceOf('openai', 'o1-pro')).toBeUndefined();
    expect(priceOf('openai', 'o1-pro', [undefined, { 'o1-pro': { input: 150, output: 600 } }])).toEqual({
      input: 150,
      output: 600,
    });
    expect(priceOf('openai', 'gpt-4o-mini', [{ 'gpt-4o-mini': { input: 1, output: 2 } }])?.input).toBe(1);
  });
});

describe('usage from providers', () => {
  it('clamps negative, non-finite and absurd counts and flags them', () => {
    expect(readUsage({ prompt_tokens: -5, completion_tokens: 10 })).toEqual({
      prompt_tokens: 0,
      completion_tokens: 10,
      total_tokens: 10,
      clamped: true,
    });
    expect(readUsage({ prompt_tokens: 1e15, completion_tokens: 1 })?.prompt_tokens).toBe(100_000_000);
    expect(readUsage({ prompt_tokens: 3, completion_tokens: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
  });
});

describe('budget periods', () => {
  it('names daily and monthly periods in UTC and says when they began', () => {
    const at = new Date('2030-02-03T23:59:59Z');
    expect(periodOf({ budget_period: 'daily' }, at)).toBe('2030-02-03');
    expect(periodOf({ budget_period: 'monthly' }, at)).toBe('2030-02');
    expect(periodStart('2030-02')).toBe('2030-02-01T00:00:00.000Z');
    expect(periodStart('2030-02-03')).toBe('2030-02-03T00:00:00.000Z');
    expect(periodStart('all')).toBeNull();
  });
});

describe('policies', () => {
  it('matches allowed models exactly or by a trailing *', () => {
    expect(modelAllowed(['gpt-4.1*'], 'gpt-4.1-mini')).toBe(true);
    expect(modelAllowed(['gpt-4.1*'], 'gpt-4o')).toBe(false);
    expect(modelAllowed(['gpt-4o'], 'gpt-4o-mini')).toBe(false);
  });

  it('finds what a key policy would loosen, and lets it narrow', () => {
    const ws = { allowed_models: ['gpt-4.1*'], allowed_providers: ['openai'], allow_custom_host: false };
    expect(loosenings(ws, { allowed_models: ['gpt-4.1-mini', 'gpt-4.1-nano*'] })).toEqual([]);
    expect(loosenings(ws, { allowed_models: ['gpt-4o', 'gpt-*'] })).toHaveLength(1);
    expect(loosenings(ws, { allowed_providers: ['anthropic'] })).toHaveLength(1);
    expect(loosenings(ws, { allow_custom_host: true })).toHaveLength(1);
    expect(loosenings(undefined, { allow_custom_host: true })).toEqual([]);
  });

  it('turns policy fields into enforced limits, none when nothing is limited', () => {
    expect(limitsOf({ allowed_models: ['x'] } as never)).toBeUndefined();
    expect(limitsOf({ rate_limit: { tokens_per_minute: 10 } })).toEqual({
      budget_limit: null,
      budget_period: 'none',
      budget_alert_threshold: null,
      requests_per_minute: null,
      tokens_per_minute: 10,
    });
  });
});

describe('guardrail slots', () => {
  it('cover tool definitions, tool results and tool-call arguments of a chat request and reply', () => {
    const body = {
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', content: 'result text' },
      ],
      tools: [
        { type: 'function', function: { name: 'f', description: 'desc', parameters: { type: 'object' } } },
      ],
    };
    expect(chatMessageSlots(body).map((s) => s.get())).toEqual([
      '{"a":1}',
      'result text',
      'desc',
      '{"type":"object"}',
    ]);
    const reply = {
      choices: [{ message: { content: 'hi', tool_calls: [{ function: { arguments: '{"b":2}' } }] } }],
    };
    expect(chatReplySlots(reply).map((s) => s.get())).toEqual(['hi', '{"b":2}']);
  });

  it('cover every Responses input item and the instructions', () => {
    const body = {
      instructions: 'be brief',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
        { type: 'function_call', arguments: '{"x":1}' },
        { type: 'function_call_output', output: 'tool said' },
      ],
    };
    expect(responsesInputSlots(body).map((s) => s.get())).toEqual(['be brief', 'q', '{"x":1}', 'tool said']);
  });
});

describe('webhook signatures', () => {
  it('are HMAC-SHA256 of the exact body', () => {
    const expected = createHmac('sha256', 'secret').update('{}').digest('hex');
    expect(signBody('secret', '{}')).toBe(`sha256=${expected}`);
    expect(signBody('secret', '{}')).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signBody('secret', '{}')).not.toBe(signBody('secret', '{ }'));
  });
});

// A streamed chat completion with a tool: the model asks for the tool in the stream, the script runs
// it and streams the final answer. Streams go through the gateway chunk by chunk, never buffered.
//
// Run it (with `npm start` running and a virtual key):
//   GATEWAY_API_KEY=gwk_... GATEWAY_VIRTUAL_KEY=my-openai npx tsx examples/streaming-tools.ts
// Settings: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY, GATEWAY_VIRTUAL_KEY (a slug),
// MODEL (default gpt-4o-mini).
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

const gatewayUrl = process.env.GATEWAY_URL ?? 'http://localhost:8787';
const apiKey = process.env.GATEWAY_API_KEY;
const virtualKey = process.env.GATEWAY_VIRTUAL_KEY;
if (!apiKey || !virtualKey) throw new Error('Set GATEWAY_API_KEY and GATEWAY_VIRTUAL_KEY.');

const client = new OpenAI({
  baseURL: `${gatewayUrl}/v1`,
  apiKey,
  defaultHeaders: { 'x-gateway-provider': `@${virtualKey}` },
});
const model = process.env.MODEL ?? 'gpt-4o-mini';

const tools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

const getWeather = (city: string) => ({ city, sky: 'sunny', celsius: 21 });

const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];

// First turn: the tool call arrives in pieces (id and name first, then the arguments); put them together.
const calls: Array<{ id: string; name: string; arguments: string }> = [];
for await (const chunk of await client.chat.completions.create({ model, messages, tools, stream: true })) {
  for (const part of chunk.choices[0]?.delta.tool_calls ?? []) {
    calls[part.index] ??= { id: '', name: '', arguments: '' };
    const call = calls[part.index] as (typeof calls)[number];
    call.id += part.id ?? '';
    call.name += part.function?.name ?? '';
    call.arguments += part.function?.arguments ?? '';
  }
}
messages.push({
  role: 'assistant',
  tool_calls: calls.map((c) => ({
    id: c.id,
    type: 'function' as const,
    function: { name: c.name, arguments: c.arguments },
  })),
});
for (const call of calls) {
  const args = JSON.parse(call.arguments) as { city: string };
  console.log(`tool call: ${call.name}(${call.arguments})`);
  messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(getWeather(args.city)) });
}

// Second turn: the answer, printed as it streams.
for await (const chunk of await client.chat.completions.create({ model, messages, tools, stream: true })) {
  process.stdout.write(chunk.choices[0]?.delta.content ?? '');
}
process.stdout.write('\n');

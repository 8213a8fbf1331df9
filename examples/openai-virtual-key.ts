// The official OpenAI client, pointed at the gateway, calling a provider through a virtual key: the
// provider credential stays in the gateway, the app only holds a gateway key.
//
// Run it (with `npm start` running, and a virtual key created as in the README's tutorial):
//   GATEWAY_API_KEY=gwk_... GATEWAY_VIRTUAL_KEY=my-openai npx tsx examples/openai-virtual-key.ts
// Settings: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY, GATEWAY_VIRTUAL_KEY (a slug),
// MODEL (default gpt-4o-mini).
import OpenAI from 'openai';

const gatewayUrl = process.env.GATEWAY_URL ?? 'http://localhost:8787';
const apiKey = process.env.GATEWAY_API_KEY;
const virtualKey = process.env.GATEWAY_VIRTUAL_KEY;
if (!apiKey || !virtualKey) throw new Error('Set GATEWAY_API_KEY and GATEWAY_VIRTUAL_KEY.');

// The gateway key goes in Authorization as any OpenAI key would; `@slug/` in front of the model names
// the virtual key (the header `x-gateway-provider: @slug` does the same).
const client = new OpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey });

const { data: completion, response } = await client.chat.completions
  .create({
    model: `@${virtualKey}/${process.env.MODEL ?? 'gpt-4o-mini'}`,
    messages: [{ role: 'user', content: 'Say hello in five words.' }],
  })
  .withResponse();

console.log(completion.choices[0]?.message.content);
// Every reply names its log entry: GET /v1/logs/{id} shows the request, reply, tokens and cost.
console.log(`log entry: ${response.headers.get('x-gateway-request-id')}`);
console.log(`cost: ${response.headers.get('x-gateway-cost')} USD`);

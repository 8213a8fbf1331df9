// The official Anthropic SDK against the gateway's `/v1/messages`: Anthropic's request, reply and
// stream formats, routed to whichever provider the virtual key names (Anthropic, Bedrock, OpenAI, ...).
//
// Run it (with `npm start` running and a virtual key):
//   GATEWAY_API_KEY=gwk_... GATEWAY_VIRTUAL_KEY=my-anthropic npx tsx examples/anthropic-messages.ts
// Settings: GATEWAY_URL (default http://localhost:8787; the gateway root, without /v1, as Anthropic
// clients expect), GATEWAY_API_KEY, GATEWAY_VIRTUAL_KEY (a slug), MODEL (default claude-haiku-4-5).
import Anthropic from '@anthropic-ai/sdk';

const gatewayUrl = process.env.GATEWAY_URL ?? 'http://localhost:8787';
const apiKey = process.env.GATEWAY_API_KEY;
const virtualKey = process.env.GATEWAY_VIRTUAL_KEY;
if (!apiKey || !virtualKey) throw new Error('Set GATEWAY_API_KEY and GATEWAY_VIRTUAL_KEY.');

// The gateway key as a bearer token (Claude Code: ANTHROPIC_AUTH_TOKEN); the virtual key in a header
// (Claude Code: ANTHROPIC_CUSTOM_HEADERS="x-gateway-provider: @my-anthropic").
const client = new Anthropic({
  baseURL: gatewayUrl,
  apiKey: null,
  authToken: apiKey,
  defaultHeaders: { 'x-gateway-provider': `@${virtualKey}` },
});
const model = process.env.MODEL ?? 'claude-haiku-4-5';

const message = await client.messages.create({
  model,
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Say hello' }],
});
for (const block of message.content) if (block.type === 'text') console.log(block.text);
console.log(`usage: ${message.usage.input_tokens} in, ${message.usage.output_tokens} out`);

// The same, streamed: text arrives as it is written.
const stream = client.messages.stream({
  model,
  max_tokens: 256,
  messages: [{ role: 'user', content: 'Count to three' }],
});
stream.on('text', (text) => process.stdout.write(text));
await stream.finalMessage();
process.stdout.write('\n');

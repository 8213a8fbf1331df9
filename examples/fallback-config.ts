// A gateway config with a fallback: the request goes to the first target, and when that provider fails
// (5xx, 429, timeout) to the next. Sent inline in `x-gateway-config`; saved configs work the same
// (POST /v1/configs, then `x-gateway-config: cfg_...`).
//
// Run it (with `npm start` running and two virtual keys):
//   GATEWAY_API_KEY=gwk_... GATEWAY_PRIMARY_KEY=main GATEWAY_FALLBACK_KEY=backup \
//     npx tsx examples/fallback-config.ts
// Settings: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY, GATEWAY_PRIMARY_KEY and
// GATEWAY_FALLBACK_KEY (virtual key slugs), MODEL (default gpt-4o-mini).
import OpenAI from 'openai';

const gatewayUrl = process.env.GATEWAY_URL ?? 'http://localhost:8787';
const apiKey = process.env.GATEWAY_API_KEY;
const primary = process.env.GATEWAY_PRIMARY_KEY;
const fallback = process.env.GATEWAY_FALLBACK_KEY;
if (!apiKey || !primary || !fallback) {
  throw new Error('Set GATEWAY_API_KEY, GATEWAY_PRIMARY_KEY and GATEWAY_FALLBACK_KEY.');
}

const config = {
  strategy: { mode: 'fallback' },
  targets: [{ virtual_key: primary }, { virtual_key: fallback }],
};
const client = new OpenAI({
  baseURL: `${gatewayUrl}/v1`,
  apiKey,
  defaultHeaders: { 'x-gateway-config': JSON.stringify(config) },
});

const { data: completion, response } = await client.chat.completions
  .create({
    model: process.env.MODEL ?? 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say hello' }],
  })
  .withResponse();
console.log(completion.choices[0]?.message.content);
// Which target answered (0 is the first), and the log entry that records every attempt.
console.log(`answered by target ${response.headers.get('x-gateway-target-index')}`);
console.log(`log entry: ${response.headers.get('x-gateway-request-id')}`);

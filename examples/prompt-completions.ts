// The prompt library: save a chat template with `{{variables}}`, a model and hyperparameters once, then
// run it by id with only the variables. Every update makes a new version; runs use the latest.
//
// Run it (with `npm start` running and a virtual key; the key needs prompts.write and completions.write):
//   GATEWAY_API_KEY=gwk_... GATEWAY_VIRTUAL_KEY=my-openai npx tsx examples/prompt-completions.ts
// Settings: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY, GATEWAY_VIRTUAL_KEY (a slug),
// MODEL (default gpt-4o-mini).
import { env } from 'node:process';

const gatewayUrl = env.GATEWAY_URL ?? 'http://localhost:8787';
const apiKey = env.GATEWAY_API_KEY;
const virtualKey = env.GATEWAY_VIRTUAL_KEY;
if (!apiKey || !virtualKey) throw new Error('Set GATEWAY_API_KEY and GATEWAY_VIRTUAL_KEY.');

async function call<T>(method: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${gatewayUrl}/v1${path}`, {
    method,
    headers: { 'x-gateway-api-key': apiKey as string, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const reply = await res.json();
  // Errors say what to change: `message`, and `param` names the field.
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(reply)}`);
  return reply as T;
}

const prompt = await call<{ id: string; version: number; variables: string[] }>('POST', '/prompts', {
  name: 'Greeting',
  model: env.MODEL ?? 'gpt-4o-mini',
  virtual_key: virtualKey,
  messages: [
    { role: 'system', content: 'You greet people warmly and briefly.' },
    { role: 'user', content: 'Greet {{name}} from {{city}}.' },
  ],
  hyperparameters: { max_tokens: 50, temperature: 0.7 },
});
console.log(`prompt ${prompt.id} version ${prompt.version}, variables: ${prompt.variables.join(', ')}`);

// A run sends only the variables (and, if wanted, hyperparameters that override the prompt's).
const completion = await call<{ choices: Array<{ message: { content: string } }> }>(
  'POST',
  `/prompts/${prompt.id}/completions`,
  { variables: { name: 'Ada', city: 'London' } },
);
console.log(completion.choices[0]?.message.content);

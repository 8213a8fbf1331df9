// Calling the gateway with a JWT from your identity provider instead of a gateway API key. An
// organisation admin first tells the gateway which key set signs the tokens (PUT /v1/organisation/jwt,
// see README, JWT authentication); the token's claims name the organisation, workspace, scopes and user.
//
// Run it (with `npm start` running, JWT settings in place, and a virtual key):
//   GATEWAY_JWT=eyJ... GATEWAY_VIRTUAL_KEY=my-openai npx tsx examples/jwt-auth.ts
// Settings: GATEWAY_URL (default http://localhost:8787), GATEWAY_JWT, GATEWAY_VIRTUAL_KEY (a slug),
// MODEL (default gpt-4o-mini).
import OpenAI from 'openai';

const gatewayUrl = process.env.GATEWAY_URL ?? 'http://localhost:8787';
const token = process.env.GATEWAY_JWT;
const virtualKey = process.env.GATEWAY_VIRTUAL_KEY;
if (!token || !virtualKey) throw new Error('Set GATEWAY_JWT and GATEWAY_VIRTUAL_KEY.');

// A JWT goes where a gateway key goes: `Authorization: Bearer` or `x-gateway-api-key`.
const client = new OpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey: token });

const { data: completion, response } = await client.chat.completions
  .create({
    model: `@${virtualKey}/${process.env.MODEL ?? 'gpt-4o-mini'}`,
    messages: [{ role: 'user', content: 'Who am I?' }],
  })
  .withResponse();
console.log(completion.choices[0]?.message.content);

// The log entry records who called: the token's subject, as `auth.subject` (needs the logs.view scope).
// It is written just after the reply's last byte, so it may take a moment to appear.
const requestId = response.headers.get('x-gateway-request-id');
for (let attempt = 0; attempt < 20; attempt++) {
  const entry = await fetch(`${gatewayUrl}/v1/logs/${requestId}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (entry.ok) {
    const log = (await entry.json()) as { auth: { type: string; subject?: string } };
    console.log(`logged as ${log.auth.type} ${log.auth.subject}`);
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}

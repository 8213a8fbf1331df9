import { afterEach, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway';

// Servers started one after another in one process (as tests do) each run on the environment they were
// started with: every start loads the settings again, and a stopped server puts back what it set.

const saved = process.env.GATEWAY_MAX_BODY_BYTES;
afterEach(() => {
  if (saved === undefined) delete process.env.GATEWAY_MAX_BODY_BYTES;
  else process.env.GATEWAY_MAX_BODY_BYTES = saved;
});

// Valid JSON for a new API key, made long by trailing whitespace.
const paddedKey = `${JSON.stringify({ name: 'padded', type: 'workspace', workspace: 'default' })}${' '.repeat(2_000)}`;

it('gives each local server started in one process its own settings and its own store', async () => {
  const endpointBefore = process.env.DYNAMODB_ENDPOINT;
  process.env.GATEWAY_MAX_BODY_BYTES = '1000';
  const small = await startTestGateway();
  try {
    const refused = await small.api('POST', '/api-keys', paddedKey);
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('body_too_large');
  } finally {
    await small.stop();
  }
  expect(process.env.DYNAMODB_ENDPOINT).toBe(endpointBefore);

  delete process.env.GATEWAY_MAX_BODY_BYTES;
  const large = await startTestGateway();
  try {
    const created = await large.api('POST', '/api-keys', paddedKey);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const listed = await large.api('GET', '/api-keys');
    expect(listed.body.data.map((k: { name: string }) => k.name)).toContain('padded');
  } finally {
    await large.stop();
  }
});

it('refuses to start on a variable that is not a number, naming it', async () => {
  process.env.GATEWAY_MAX_BODY_BYTES = 'five megabytes';
  await expect(startTestGateway()).rejects.toThrow(
    'Invalid configuration: GATEWAY_MAX_BODY_BYTES must be an integer >= 1, not "five megabytes"',
  );
});

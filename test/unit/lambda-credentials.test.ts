import { afterEach, describe, expect, it } from 'vitest';
import { defaultProvider } from '../../functions/store/lambda-credentials';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe('Lambda credential provider', () => {
  it('reads the role credentials Lambda puts in the environment', async () => {
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
    process.env.AWS_SESSION_TOKEN = 'token';
    const credentials = await defaultProvider()();
    expect(credentials).toMatchObject({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    });
  });

  it('fails clearly when the environment holds none', async () => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    await expect(defaultProvider()()).rejects.toThrow();
  });
});

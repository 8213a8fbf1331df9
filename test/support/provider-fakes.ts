import { startFakeAnthropic } from './fake-anthropic';
import { startFakeBedrock } from './fake-bedrock';
import { startFakeGoogle } from './fake-google';
import { startFakeOpenAI } from './fake-openai';

/** Bedrock credentials as a virtual key or config `api_key` holds them (the fake checks the signature shape). */
export const AWS_KEYS = JSON.stringify({
  access_key_id: 'AKIDEXAMPLE',
  secret_access_key: 'wJalrXUtnFEMI/K7MDENG',
});

/** A fake of each provider's own wire format, as `useGateway` starters. */
export const PROVIDER_FAKES = {
  anthropic: startFakeAnthropic,
  bedrock: startFakeBedrock,
  google: startFakeGoogle,
  openai: startFakeOpenAI,
};

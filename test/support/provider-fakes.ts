import { startFakeAnthropic } from './fake-anthropic';
import { startFakeBedrock } from './fake-bedrock';
import { startFakeGoogle } from './fake-google';
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai';
import type { FakeUpstream } from './fake-upstream';
import { startTestGateway, type TestGateway } from './gateway';

/** Bedrock credentials as a virtual key or config `api_key` holds them (the fake checks the signature shape). */
export const AWS_KEYS = JSON.stringify({
  access_key_id: 'AKIDEXAMPLE',
  secret_access_key: 'wJalrXUtnFEMI/K7MDENG',
});

export interface ProviderFakes {
  gw: TestGateway;
  anthropic: FakeUpstream;
  bedrock: FakeUpstream;
  google: FakeUpstream;
  openai: FakeOpenAI;
  /** Forgets what every fake received and restores its default behaviour. */
  reset(): void;
  stop(): Promise<void>;
}

/** The local gateway and a fake of each provider's own wire format, all on 127.0.0.1. */
export async function startProviderFakes(): Promise<ProviderFakes> {
  const [anthropic, bedrock, google, openai] = await Promise.all([
    startFakeAnthropic(),
    startFakeBedrock(),
    startFakeGoogle(),
    startFakeOpenAI(),
  ]);
  const gw = await startTestGateway();
  return {
    gw,
    anthropic,
    bedrock,
    google,
    openai,
    reset() {
      for (const f of [anthropic, bedrock, google, openai]) f.reset();
    },
    async stop() {
      await gw.stop();
      await Promise.all([anthropic.close(), bedrock.close(), google.close(), openai.close()]);
    },
  };
}

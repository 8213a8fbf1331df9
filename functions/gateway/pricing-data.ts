// Built-in prices, USD per million tokens (standard tier, short context). Data only: one block per
// provider, each with its source and the date it was read. Deployments can override with a pricing file.

export interface ModelPrice {
  input: number;
  output: number;
  /** Price of prompt tokens served from the provider's cache; `input` applies when absent. */
  cached_input?: number;
  /**
   * Audio token prices of models that hear and speak (realtime); the fields above are then text prices.
   * Audio tokens of a model without them have no price, so the cost is null rather than guessed.
   */
  audio?: { input: number; output: number; cached_input?: number };
}

export interface ProviderPrices {
  source: string;
  checked: string;
  models: Record<string, ModelPrice>;
}

export const PRICES: Record<string, ProviderPrices> = {
  openai: {
    source: 'https://openai.com/api/pricing (standard processing)',
    checked: '2026-11-20',
    models: {
      'gpt-5.5': { input: 5.0, cached_input: 0.5, output: 30.0 },
      'gpt-5.5-pro': { input: 30.0, output: 180.0 },
      'gpt-5.4': { input: 2.5, cached_input: 0.25, output: 15.0 },
      'gpt-5.4-mini': { input: 0.75, cached_input: 0.075, output: 4.5 },
      'gpt-5.4-nano': { input: 0.2, cached_input: 0.02, output: 1.25 },
      'gpt-5.4-pro': { input: 30.0, output: 180.0 },
      'gpt-5.2': { input: 1.75, cached_input: 0.175, output: 14.0 },
      'gpt-5.2-pro': { input: 21.0, output: 168.0 },
      'gpt-5.1': { input: 1.25, cached_input: 0.125, output: 10.0 },
      'gpt-5': { input: 1.25, cached_input: 0.125, output: 10.0 },
      'gpt-5-mini': { input: 0.25, cached_input: 0.025, output: 2.0 },
      'gpt-5-nano': { input: 0.05, cached_input: 0.005, output: 0.4 },
      'gpt-5-pro': { input: 15.0, output: 120.0 },
      'gpt-4.1': { input: 2.0, cached_input: 0.5, output: 8.0 },
      'gpt-4.1-mini': { input: 0.4, cached_input: 0.1, output: 1.6 },
      'gpt-4.1-nano': { input: 0.1, cached_input: 0.025, output: 0.4 },
      'gpt-4o': { input: 2.5, cached_input: 1.25, output: 10.0 },
      'gpt-4o-mini': { input: 0.15, cached_input: 0.075, output: 0.6 },
      o3: { input: 2.0, cached_input: 0.5, output: 8.0 },
      'o3-pro': { input: 20.0, output: 80.0 },
      'o3-mini': { input: 1.1, cached_input: 0.55, output: 4.4 },
      'o4-mini': { input: 1.1, cached_input: 0.275, output: 4.4 },
      o1: { input: 15.0, cached_input: 7.5, output: 60.0 },
      'gpt-4-turbo': { input: 10.0, output: 30.0 },
      'gpt-4': { input: 30.0, output: 60.0 },
      'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
      // Realtime models (developers.openai.com/api/docs/models/<model>, read 2026-11-20): text, then audio.
      'gpt-realtime': {
        input: 4.0,
        cached_input: 0.4,
        output: 16.0,
        audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
      },
      'gpt-realtime-1.5': {
        input: 4.0,
        cached_input: 0.4,
        output: 16.0,
        audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
      },
      'gpt-realtime-2': {
        input: 4.0,
        cached_input: 0.4,
        output: 24.0,
        audio: { input: 32.0, cached_input: 0.4, output: 64.0 },
      },
      'gpt-realtime-mini': {
        input: 0.6,
        cached_input: 0.06,
        output: 2.4,
        audio: { input: 10.0, cached_input: 0.3, output: 20.0 },
      },
      'gpt-4o-realtime-preview': {
        input: 5.0,
        cached_input: 2.5,
        output: 20.0,
        audio: { input: 40.0, cached_input: 2.5, output: 80.0 },
      },
      'gpt-4o-mini-realtime-preview': {
        input: 0.6,
        cached_input: 0.3,
        output: 2.4,
        audio: { input: 10.0, cached_input: 0.3, output: 20.0 },
      },
    },
  },
};

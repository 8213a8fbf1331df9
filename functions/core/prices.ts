/** USD per million tokens of one model. */
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
  /** The most tokens one reply can hold: what a budget reserves when a request sets no max_tokens. */
  max_output_tokens?: number;
}

/** USD rounded to 12 decimals: sums of float costs stay comparable with limits. */
export const round12 = (usd: number) => Math.round(usd * 1e12) / 1e12;

/** What the gateway knows of a caller's route to a provider for one request. */
export interface ProviderTarget {
  apiKey?: string;
  organization?: string;
  project?: string;
}

export type ModelOperation = 'chat.completions';

/** A provider: where it lives, how it authenticates, and where each operation is. */
export interface ProviderAdapter {
  name: string;
  /** Base URL when no custom host is given; undefined means a custom host is required. */
  baseUrl?: string;
  /** Auth and account headers for the upstream request. */
  headers(target: ProviderTarget): Record<string, string>;
  /** Path of each operation, relative to the base URL. */
  paths: Record<ModelOperation, string>;
}

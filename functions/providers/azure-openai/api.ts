import type { ProviderAdapter } from '../types';
import { azureModels } from './models';

/** A GA API version that has tools, vision, json_schema and `stream_options.include_usage`. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

// Azure OpenAI speaks the OpenAI wire format, so its replies and streams are forwarded untouched; only
// the URL (resource, deployment, api-version) and the auth header differ.
export const azureOpenAI: ProviderAdapter = {
  name: 'azure-openai',
  baseUrl: (target) => (target.resourceName ? `https://${target.resourceName}.openai.azure.com` : undefined),
  baseUrlHint: 'resource_name (on the virtual key or in the config) or a custom host',
  headers(target): Record<string, string> {
    return target.apiKey ? { 'api-key': target.apiKey } : {};
  },
  paths: { 'chat.completions': '/chat/completions' },
  endpoint(_operation, ctx) {
    // Without a deployment id, the model names the deployment: the usual Azure naming.
    const deployment = encodeURIComponent(ctx.target.deploymentId ?? ctx.model);
    const version = encodeURIComponent(ctx.target.apiVersion ?? DEFAULT_AZURE_API_VERSION);
    return `${ctx.baseUrl}/openai/deployments/${deployment}/chat/completions?api-version=${version}`;
  },
  requestIdHeader: 'apim-request-id',
  models: azureModels(DEFAULT_AZURE_API_VERSION),
};

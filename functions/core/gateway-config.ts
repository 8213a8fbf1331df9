/** A request's gateway config (the `x-gateway-config` header or a saved config), after validation. */
export interface GatewayConfig {
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  custom_host?: string;
  vendor_organization?: string;
  vendor_project?: string;
  /** AWS region of a Bedrock target. */
  region?: string;
  /** Azure OpenAI resource, deployment and API version. */
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  override_params?: Record<string, unknown>;
  request_timeout?: number;
  retry?: { attempts: number; on_status_codes?: number[] };
  strategy?: { mode: 'single' | 'fallback' | 'loadbalance'; on_status_codes?: number[] };
  targets?: GatewayConfig[];
  weight?: number;
  /** Checks on what goes to the provider and what comes back: inline, or ids of saved guardrails. */
  input_guardrails?: unknown[];
  output_guardrails?: unknown[];
}

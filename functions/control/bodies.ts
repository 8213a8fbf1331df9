import { SCOPES } from '../core/operations';
import { KNOWN as CONFIG_FIELDS } from '../gateway/config';
import { FIELDS as POLICY_FIELDS } from '../gateway/policy';
import { PROVIDER_NAMES } from '../providers';
import { MAX_INDEXED_METADATA } from '../store/tables';
import { nullable, slug, text, workspaceField } from './body-parts';
import type { BodySpec, JsonSchema } from './fields';

// The request bodies (and query strings) of the control plane, one description each: read by the
// validators and by the OpenAPI document (functions/openapi). The prompt bodies live in prompt-bodies.ts.

export { HYPERPARAMETERS, PROMPT, PROMPT_RUN } from './prompt-bodies';

/** A policy: its fields are those the policy validator knows (functions/gateway/policy.ts). */
const policyField = {
  schema: { type: ['object', 'null'], propertyNames: { enum: [...POLICY_FIELDS] } },
  description:
    'Rules for every model request: guardrails, allowed models and providers, a default config, budget and rate limits (see README, Policies). Replaced whole; null clears it.',
};

const pricesField = {
  schema: {
    type: ['object', 'null'],
    additionalProperties: {
      type: 'object',
      properties: {
        input: { type: 'number', minimum: 0 },
        output: { type: 'number', minimum: 0 },
        cached_input: { type: 'number', minimum: 0 },
        max_output_tokens: { type: 'integer', minimum: 1 },
      },
      required: ['input', 'output'],
      additionalProperties: false,
    },
  },
  description:
    'Prices of models the built-in table lacks: model name to USD per million tokens. Null clears.',
};

const limit = (what: string) => ({
  schema: { type: ['number', 'null'], exclusiveMinimum: 0 },
  description: what,
});

export const WORKSPACE_CREATE: BodySpec = {
  title: 'a workspace',
  description: 'A new workspace.',
  fields: {
    name: { schema: text(), description: 'Display name.', required: true },
    slug: {
      schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
      description: 'Identifier used in paths and bodies; derived from the name when absent.',
    },
  },
};

export const WORKSPACE_UPDATE: BodySpec = {
  title: 'a workspace update',
  description: 'The workspace’s policy, operator prices and indexed metadata keys, each replaced whole.',
  fields: {
    policy: policyField,
    prices: pricesField,
    indexed_metadata: {
      schema: {
        type: ['array', 'null'],
        items: { type: 'string', minLength: 1, maxLength: 128 },
        maxItems: MAX_INDEXED_METADATA,
        uniqueItems: true,
      },
      description:
        'Metadata keys GET /v1/logs can filter on alone, one index each (README, Log search); null or [] clears them.',
    },
  },
};

export const API_KEY_CREATE: BodySpec = {
  title: 'an API key',
  description: 'A new gateway API key; the reply holds the key itself, shown only this once.',
  fields: {
    name: { schema: text(), description: 'Display name.', required: true },
    type: {
      schema: { enum: ['workspace', 'organisation'] },
      description:
        'A workspace key acts in one workspace with its scopes; an organisation key is an admin key.',
    },
    workspace: workspaceField,
    scopes: {
      schema: { type: 'array', items: { enum: [...SCOPES] } },
      description: 'Scopes of a workspace key (default completions.write and logs.view).',
    },
    policy: policyField,
  },
};

export const API_KEY_UPDATE: BodySpec = {
  title: 'an API key update',
  description: 'A key’s new name or policy.',
  fields: { name: { schema: text(), description: 'Display name.' }, policy: policyField },
};

export const VIRTUAL_KEY: BodySpec = {
  title: 'a virtual key',
  description:
    'A provider credential held by the gateway, with its account settings, budget and rate limit. The credential is never returned.',
  fields: {
    name: { schema: text(), description: 'Display name.', required: true },
    slug: { schema: slug, description: 'Identifier (`@slug`); derived from the name when absent.' },
    workspace: workspaceField,
    provider: {
      schema: { type: 'string' },
      description: `Provider: ${PROVIDER_NAMES.join(', ')}.`,
      required: true,
    },
    key: {
      schema: text(16_384),
      description: 'The provider credential (for Bedrock, a JSON of AWS keys).',
      required: true,
    },
    custom_host: {
      schema: { type: ['string', 'null'], format: 'uri' },
      description: 'Base URL of the provider (self-hosted or OpenAI-compatible servers).',
    },
    vendor_organization: { schema: nullable(text(256)), description: 'Upstream organization id.' },
    vendor_project: { schema: nullable(text(256)), description: 'Upstream project id.' },
    region: { schema: { type: ['string', 'null'] }, description: 'AWS region of a Bedrock key.' },
    resource_name: { schema: { type: ['string', 'null'] }, description: 'Azure OpenAI resource name.' },
    deployment_id: { schema: { type: ['string', 'null'] }, description: 'Azure OpenAI deployment.' },
    api_version: { schema: { type: ['string', 'null'] }, description: 'Azure OpenAI API version.' },
    budget_limit: limit('Budget in USD; requests beyond it are refused with 412.'),
    budget_period: {
      schema: { enum: ['none', 'monthly'] },
      description: 'When the budget starts again.',
    },
    budget_alert_threshold: {
      schema: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1 },
      description: 'Fraction of budget_limit at which an alert is recorded.',
    },
    rate_limit: {
      schema: {
        type: ['object', 'null'],
        properties: { requests_per_minute: { type: 'integer', minimum: 1 } },
        required: ['requests_per_minute'],
        additionalProperties: false,
      },
      description: 'Requests per minute allowed through this key.',
    },
    prices: pricesField,
  },
};

/** A gateway config: its fields are those the config validator knows (functions/gateway/config.ts). */
export const GATEWAY_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'A gateway config (provider, virtual_key, retry, strategy, targets, ...), as the x-gateway-config header takes it; see README, Gateway configs. Credentials are not saved: use virtual_key.',
  propertyNames: { enum: [...CONFIG_FIELDS] },
};

export const SAVED_CONFIG: BodySpec = {
  title: 'a saved config',
  description: 'A gateway config saved under an id, which requests name in x-gateway-config.',
  fields: {
    name: { schema: nullable(text()), description: 'Display name.' },
    config: { schema: GATEWAY_CONFIG_SCHEMA, description: 'The gateway config.', required: true },
    workspace: workspaceField,
  },
};

export const GUARDRAIL: BodySpec = {
  title: 'a guardrail',
  description: 'A named list of checks, referenced by id from a config’s or policy’s guardrail lists.',
  fields: {
    name: { schema: text(), description: 'Display name.', required: true },
    checks: {
      schema: { type: 'array', minItems: 1, items: { type: 'object' } },
      description: 'The checks, each `{type, ...}` (see README, Guardrails).',
      required: true,
    },
  },
};

export const JWT_SETTINGS: BodySpec = {
  title: 'JWT settings',
  description: 'The organisation’s JWT key set: exactly one of jwks_url and jwks, and the token rules.',
  fields: {
    jwks_url: { schema: { type: 'string', format: 'uri' }, description: 'URL of the key set (https).' },
    jwks: {
      schema: { type: 'object', properties: { keys: { type: 'array', items: { type: 'object' } } } },
      description: 'A static key set: public RSA keys of 2048 bits or more, each with a kid.',
    },
    issuer: { schema: nullable(text(1024)), description: 'Required `iss` of tokens.' },
    audience: {
      schema: { type: ['string', 'array', 'null'], items: { type: 'string' } },
      description: 'Accepted `aud` values.',
    },
    max_token_lifetime_seconds: {
      schema: { type: ['integer', 'null'], minimum: 60 },
      description: 'Longest accepted token lifetime (default 86400).',
    },
  },
};

export const SSO_SETTINGS: BodySpec = {
  title: 'single sign-on settings',
  description:
    'OpenID Connect sign-in for the dashboard: an issuer and a public client; exactly one of workspace_claim and workspace, and one of scopes_claim and gateway_scopes.',
  fields: {
    issuer: { schema: { type: 'string', format: 'uri' }, description: 'Issuer URL (https).', required: true },
    client_id: { schema: text(1024), description: 'Public client id.', required: true },
    scopes: { schema: text(1024), description: 'Scopes asked for (default "openid email profile").' },
    audience: { schema: text(1024), description: 'Expected `aud` (default the client id).' },
    workspace_claim: { schema: text(128), description: 'Claim that names the workspace slug.' },
    workspace: { schema: text(128), description: 'Fixed workspace slug.' },
    scopes_claim: { schema: text(128), description: 'Claim that holds gateway scopes.' },
    gateway_scopes: {
      schema: { type: 'array', items: { enum: [...SCOPES] } },
      description: 'Fixed gateway scopes.',
    },
  },
};

export const EGRESS_SETTINGS: BodySpec = {
  title: 'egress settings',
  description: 'Which custom hosts requests may name.',
  fields: {
    allow_custom_hosts: {
      schema: { type: 'boolean' },
      description: 'Whether requests may name a custom host at all.',
      required: true,
    },
    allowed_hosts: {
      schema: { type: 'array', maxItems: 100, items: { type: 'string' } },
      description: 'When not empty, the only hosts allowed: `host`, `host:port` or `*.domain`.',
    },
  },
};

const timeBound = (what: string) => ({
  schema: { type: 'string' },
  description: `${what}: ISO 8601 time or epoch milliseconds.`,
});

/** Query parameters of `GET /v1/logs` (plus `metadata.<key>=<value>` filters). */
export const LOGS_QUERY: BodySpec = {
  title: 'a logs query',
  description: 'Filters of the usage log.',
  fields: {
    workspace: { schema: { type: 'string' }, description: 'Workspace slug (organisation admins only).' },
    user: { schema: { type: 'string' }, description: 'End user.' },
    virtual_key: { schema: { type: 'string' }, description: 'Virtual key slug.' },
    api_key: { schema: { type: 'string' }, description: 'API key id (auth.key_id).' },
    trace_id: { schema: { type: 'string' }, description: 'Trace id.' },
    model: { schema: { type: 'string' }, description: 'Model.' },
    status: { schema: { type: 'integer' }, description: 'HTTP status of the reply.' },
    from: timeBound('Earliest entry'),
    to: timeBound('Latest entry'),
    limit: { schema: { type: 'integer', minimum: 1, maximum: 100 }, description: 'Page size (default 20).' },
    cursor: { schema: { type: 'string' }, description: 'next_cursor of the previous page.' },
  },
};

/** Query parameters of `GET /v1/analytics/users`. */
export const ANALYTICS_QUERY: BodySpec = {
  title: 'an analytics query',
  description: 'The period and order of a report.',
  fields: {
    workspace: { schema: { type: 'string' }, description: 'Workspace slug (organisation admins only).' },
    from: timeBound('Start (default 30 days before to)'),
    to: timeBound('End (default now)'),
    order: { schema: { enum: ['cost', 'requests'] }, description: 'Sort order (default cost).' },
  },
};

/** Query parameters of `GET /v1/analytics/usage`. */
export const ANALYTICS_USAGE_QUERY: BodySpec = {
  title: 'a usage aggregates query',
  description: 'The range, bucket size and grouping of the usage aggregates.',
  fields: {
    workspace: { schema: { type: 'string' }, description: 'Workspace slug (organisation admins only).' },
    from: timeBound('Start (default one day, or 30 days for interval=day, before to)'),
    to: timeBound('End (default now)'),
    interval: { schema: { enum: ['hour', 'day'] }, description: 'Bucket size, UTC (default hour).' },
    group_by: {
      schema: { enum: ['user', 'model', 'provider', 'virtual_key', 'api_key', 'status_class'] },
      description: 'A row per bucket and value of this dimension; absent for totals.',
    },
  },
};

/** Query parameters of `GET /v1/analytics/budgets`. */
export const ANALYTICS_BUDGETS_QUERY: BodySpec = {
  title: 'a budgets query',
  description: 'Whose budgets to show.',
  fields: {
    workspace: { schema: { type: 'string' }, description: 'Workspace slug (organisation admins only).' },
  },
};

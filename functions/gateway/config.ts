import { badRequest } from '../core/errors';
import type { GatewayConfig } from '../core/gateway-config';
import { CONTROL_CHARACTER } from '../core/request-body';
import { compileChecks } from '../guardrails/engine';

/** A gateway config: from the `x-gateway-config` header (JSON) or saved and referenced by id. */

const STRING_FIELDS = [
  'provider',
  'api_key',
  'virtual_key',
  'custom_host',
  'vendor_organization',
  'vendor_project',
  'region',
  'resource_name',
  'deployment_id',
  'api_version',
];
export const KNOWN = new Set([
  ...STRING_FIELDS,
  'override_params',
  'request_timeout',
  'retry',
  'strategy',
  'targets',
  'weight',
  'input_guardrails',
  'output_guardrails',
]);
const MODES = new Set(['single', 'fallback', 'loadbalance']);
// Fields sent upstream as header values: a control character there would break every request that uses them.
const HEADER_FIELDS = ['api_key', 'vendor_organization', 'vendor_project'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);
const isStatusList = (v: unknown) =>
  Array.isArray(v) && v.every((s) => Number.isInteger(s) && (s as number) >= 100 && (s as number) <= 599);

/** Validates a config and every nested target; a 400 lists every bad field at once. */
export function parseConfig(value: unknown): GatewayConfig {
  const problems: string[] = [];
  check(value, 'config', problems, 0);
  if (problems.length > 0) {
    throw badRequest(`Invalid gateway config: ${problems.join('; ')}.`, 'x-gateway-config', 'invalid_config');
  }
  return value as GatewayConfig;
}

function check(value: unknown, at: string, problems: string[], depth: number): void {
  if (!isObject(value)) {
    problems.push(`${at} must be an object`);
    return;
  }
  if (depth > 5) {
    problems.push(`${at} nests targets too deeply (at most 5 levels)`);
    return;
  }
  const unknown = Object.keys(value).filter((key) => !KNOWN.has(key));
  for (const key of unknown) problems.push(`${at}.${key} is not a known field`);
  if (unknown.length > 0) problems.push(`${at} takes: ${[...KNOWN].join(', ')}`);
  for (const key of STRING_FIELDS) {
    if (value[key] !== undefined && (typeof value[key] !== 'string' || value[key] === '')) {
      problems.push(`${at}.${key} must be a non-empty string`);
    }
  }
  for (const key of HEADER_FIELDS) {
    const v = value[key];
    if (typeof v === 'string' && CONTROL_CHARACTER.test(v)) {
      problems.push(`${at}.${key} must not contain control characters`);
    }
  }
  if (typeof value.custom_host === 'string' && !/^https?:\/\/[^\s/]+/i.test(value.custom_host)) {
    problems.push(`${at}.custom_host must be an http or https URL`);
  }
  if (typeof value.region === 'string' && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(value.region)) {
    problems.push(`${at}.region must be an AWS region such as us-east-1`);
  }
  if (
    typeof value.resource_name === 'string' &&
    !/^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}$/.test(value.resource_name)
  ) {
    problems.push(`${at}.resource_name must be an Azure resource name (letters, digits, dashes)`);
  }
  for (const list of ['input_guardrails', 'output_guardrails'] as const) {
    if (value[list] === undefined) continue;
    if (depth > 0) {
      problems.push(`${at}.${list} applies to the whole request: set it at the root of the config`);
      continue;
    }
    checkGuardrails(value[list], `${at}.${list}`, problems);
  }
  if (value.override_params !== undefined && !isObject(value.override_params)) {
    problems.push(`${at}.override_params must be an object`);
  }
  const timeout = value.request_timeout;
  if (
    timeout !== undefined &&
    !(Number.isInteger(timeout) && (timeout as number) > 0 && (timeout as number) <= 900_000)
  ) {
    problems.push(`${at}.request_timeout must be a whole number of milliseconds from 1 to 900000`);
  }
  if (value.weight !== undefined && !(typeof value.weight === 'number' && value.weight >= 0)) {
    problems.push(`${at}.weight must be a number of 0 or more`);
  }
  if (value.retry !== undefined) {
    const r = value.retry;
    if (!isObject(r)) problems.push(`${at}.retry must be an object`);
    else {
      if (!(Number.isInteger(r.attempts) && (r.attempts as number) >= 0 && (r.attempts as number) <= 10)) {
        problems.push(`${at}.retry.attempts must be a whole number from 0 to 10`);
      }
      if (r.on_status_codes !== undefined && !isStatusList(r.on_status_codes)) {
        problems.push(`${at}.retry.on_status_codes must be an array of HTTP statuses`);
      }
      for (const k of Object.keys(r)) {
        if (k !== 'attempts' && k !== 'on_status_codes')
          problems.push(`${at}.retry.${k} is not a known field`);
      }
    }
  }
  if (value.strategy !== undefined) {
    const s = value.strategy;
    if (!isObject(s)) problems.push(`${at}.strategy must be an object`);
    else {
      if (typeof s.mode !== 'string' || !MODES.has(s.mode)) {
        problems.push(`${at}.strategy.mode must be "single", "fallback" or "loadbalance"`);
      }
      if (s.on_status_codes !== undefined && !isStatusList(s.on_status_codes)) {
        problems.push(`${at}.strategy.on_status_codes must be an array of HTTP statuses`);
      }
      for (const k of Object.keys(s)) {
        if (k !== 'mode' && k !== 'on_status_codes')
          problems.push(`${at}.strategy.${k} is not a known field`);
      }
    }
  }
  if (value.targets !== undefined) {
    if (!Array.isArray(value.targets) || value.targets.length === 0) {
      problems.push(`${at}.targets must be a non-empty array`);
    } else {
      value.targets.forEach((t, i) => {
        check(t, `${at}.targets[${i}]`, problems, depth + 1);
      });
    }
  }
  // Targets and a strategy come together: a list of targets means nothing without a way to pick one.
  const mode = isObject(value.strategy) ? value.strategy.mode : undefined;
  const hasTargets = Array.isArray(value.targets) && value.targets.length > 0;
  if (hasTargets && (mode === undefined || mode === 'single')) {
    problems.push(`${at}.targets needs strategy.mode "fallback" or "loadbalance"`);
  }
  if ((mode === 'fallback' || mode === 'loadbalance') && value.targets === undefined) {
    problems.push(`${at}.strategy.mode "${mode}" needs targets`);
  }
  if (mode === 'loadbalance' && Array.isArray(value.targets)) {
    const total = value.targets.reduce(
      (sum: number, t: unknown) =>
        sum +
        (isObject(t) && typeof t.weight === 'number' && t.weight >= 0
          ? t.weight
          : isObject(t) && t.weight === undefined
            ? 1
            : 0),
      0,
    );
    if (total <= 0) problems.push(`${at}.targets must have a total weight above 0 for loadbalance`);
  }
  if (
    typeof value.virtual_key === 'string' &&
    !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(value.virtual_key.replace(/^@/, ''))
  ) {
    problems.push(`${at}.virtual_key must be the slug of a virtual key`);
  }
}

/** Problems with a config that is to be saved: what any config must be, and no credential in plain text. */
export function parseSavedConfig(value: unknown): GatewayConfig {
  const problems: string[] = [];
  check(value, 'config', problems, 0);
  findApiKeys(value, 'config', problems, 0);
  if (problems.length > 0) {
    throw badRequest(`Invalid gateway config: ${problems.join('; ')}.`, 'config', 'invalid_config');
  }
  return value as GatewayConfig;
}

// Saved configs live in DynamoDB and are shown on reads: credentials belong in virtual keys instead.
function findApiKeys(value: unknown, at: string, problems: string[], depth: number): void {
  // Deeper targets are already a problem `check` reports; going on would only recurse for nothing.
  if (!isObject(value) || depth > 5) return;
  if (value.api_key !== undefined) {
    problems.push(`${at}.api_key cannot be saved; store the credential as a virtual key and use virtual_key`);
  }
  if (Array.isArray(value.targets)) {
    value.targets.forEach((t, i) => {
      findApiKeys(t, `${at}.targets[${i}]`, problems, depth + 1);
    });
  }
}

/** Each entry is an inline check or the id of a saved guardrail (`gr_...`). */
function checkGuardrails(list: unknown, at: string, problems: string[]): void {
  if (!Array.isArray(list)) {
    problems.push(`${at} must be an array of checks or saved guardrail ids`);
    return;
  }
  list.forEach((entry, i) => {
    if (typeof entry === 'string') {
      if (!/^gr_[0-9a-z]{26}$/.test(entry)) problems.push(`${at}[${i}] is not a guardrail id`);
    } else {
      // Compiled for its problems only; the request path compiles (and caches) its own.
      const one: string[] = [];
      compileChecks([entry], at, one);
      problems.push(...one.map((p) => p.replace(`${at}[0]`, `${at}[${i}]`)));
    }
  });
}

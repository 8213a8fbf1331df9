// The policy of a workspace or an API key as a form: what it becomes is the `policy` body of
// `PATCH /v1/workspaces/{slug}` or of `POST`/`PATCH /v1/api-keys`, validated by the API, whose
// `param` (`policy.budget_limit`, `input_guardrails`…) puts its message at the field.
import type { GatewayApi, ListReply } from './api';
import { FieldError, fieldError, useLoad } from './ui';

type Period = 'none' | 'daily' | 'monthly';

interface LimitFields {
  budget_limit?: number | null;
  budget_period?: Period;
  budget_alert_threshold?: number | null;
  rate_limit?: { requests_per_minute?: number; tokens_per_minute?: number } | null;
}

/** A policy as `GET` shows it: the webhook's secret is never shown, only that one is set. */
export interface PolicyView extends LimitFields {
  input_guardrails?: unknown[];
  output_guardrails?: unknown[];
  allowed_models?: string[];
  allowed_providers?: string[];
  allow_custom_host?: boolean;
  config?: string;
  user_limits?: LimitFields | null;
  budget_alert_webhook?: { url: string; secret_set: true } | null;
}

interface LimitDraft {
  budget_limit: string;
  budget_period: Period;
  alert_percent: string;
  rpm: string;
  tpm: string;
}

export interface PolicyDraft extends LimitDraft {
  input_guardrails: unknown[];
  output_guardrails: unknown[];
  allowed_models: string;
  allowed_providers: string;
  allow_custom_host: '' | 'true' | 'false';
  config: string;
  user_limits: LimitDraft;
  webhook_url: string;
  webhook_secret: string;
  /** The stored webhook's URL: sent without a secret, it keeps the stored secret. */
  webhook_stored: string | null;
}

const limitDraft = (l: LimitFields | null | undefined): LimitDraft => ({
  budget_limit: l?.budget_limit == null ? '' : String(l.budget_limit),
  budget_period: l?.budget_period ?? 'none',
  alert_percent: l?.budget_alert_threshold == null ? '' : String(Math.round(l.budget_alert_threshold * 100)),
  rpm: l?.rate_limit?.requests_per_minute === undefined ? '' : String(l.rate_limit.requests_per_minute),
  tpm: l?.rate_limit?.tokens_per_minute === undefined ? '' : String(l.rate_limit.tokens_per_minute),
});

export function policyDraft(p: PolicyView | null | undefined): PolicyDraft {
  return {
    ...limitDraft(p),
    input_guardrails: p?.input_guardrails ?? [],
    output_guardrails: p?.output_guardrails ?? [],
    allowed_models: (p?.allowed_models ?? []).join(', '),
    allowed_providers: (p?.allowed_providers ?? []).join(', '),
    allow_custom_host: p?.allow_custom_host === undefined ? '' : p.allow_custom_host ? 'true' : 'false',
    config: p?.config ?? '',
    user_limits: limitDraft(p?.user_limits),
    webhook_url: p?.budget_alert_webhook?.url ?? '',
    webhook_secret: '',
    webhook_stored: p?.budget_alert_webhook?.url ?? null,
  };
}

// Numbers are sent as typed (a wrong one is the API's to refuse, at its field); empty means unset.
const num = (s: string) => Number(s.trim());

function limitsOf(d: LimitDraft): LimitFields {
  const out: LimitFields = {};
  if (d.budget_limit.trim()) out.budget_limit = num(d.budget_limit);
  if (d.budget_period !== 'none') out.budget_period = d.budget_period;
  if (d.alert_percent.trim()) out.budget_alert_threshold = num(d.alert_percent) / 100;
  const rate: NonNullable<LimitFields['rate_limit']> = {};
  if (d.rpm.trim()) rate.requests_per_minute = num(d.rpm);
  if (d.tpm.trim()) rate.tokens_per_minute = num(d.tpm);
  if (Object.keys(rate).length > 0) out.rate_limit = rate;
  return out;
}

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The `policy` to send: only what is set, or null (no policy) when nothing is. */
export function policyOf(d: PolicyDraft, holder: 'workspace' | 'api_key'): Record<string, unknown> | null {
  const p: Record<string, unknown> = { ...limitsOf(d) };
  if (d.input_guardrails.length) p.input_guardrails = d.input_guardrails;
  if (d.output_guardrails.length) p.output_guardrails = d.output_guardrails;
  if (list(d.allowed_models).length) p.allowed_models = list(d.allowed_models);
  if (list(d.allowed_providers).length) p.allowed_providers = list(d.allowed_providers);
  if (d.allow_custom_host) p.allow_custom_host = d.allow_custom_host === 'true';
  if (d.config) p.config = d.config;
  if (holder === 'workspace') {
    const user = limitsOf(d.user_limits);
    if (Object.keys(user).length) p.user_limits = user;
    const url = d.webhook_url.trim();
    if (url) {
      p.budget_alert_webhook =
        d.webhook_secret || url !== d.webhook_stored ? { url, secret: d.webhook_secret } : { url };
    }
  }
  return Object.keys(p).length ? p : null;
}

const LIMIT_PARAMS = ['budget_limit', 'budget_period', 'budget_alert_threshold', 'rate_limit'];

/** Every `param` the policy fields show their message under; any other is the form's to show. */
export const POLICY_PARAMS = [
  'policy.allowed_models',
  'policy.allowed_providers',
  'policy.allow_custom_host',
  'policy.config',
  'policy.input_guardrails',
  'policy.output_guardrails',
  'input_guardrails',
  'output_guardrails',
  'policy.budget_alert_webhook',
  ...LIMIT_PARAMS.map((p) => `policy.${p}`),
  ...LIMIT_PARAMS.map((p) => `policy.user_limits.${p}`),
];

interface Saved {
  id: string;
  name: string;
  workspace: string;
}

function LimitInputs({
  prefix,
  value,
  onChange,
  error,
  label,
}: {
  prefix: string;
  value: LimitDraft;
  onChange: (v: LimitDraft) => void;
  error: unknown;
  label: string;
}) {
  const set = (k: keyof LimitDraft) => (e: { currentTarget: { value: string } }) =>
    onChange({ ...value, [k]: e.currentTarget.value });
  const field = (name: string) => `${prefix}${name}`;
  const invalid = (name: string) => (fieldError(error, field(name)) ? 'true' : undefined);
  return (
    <fieldset class="form-grid wide" data-limits={prefix}>
      <legend>{label}</legend>
      <label>
        Budget limit (USD)
        <input
          name={field('budget_limit')}
          type="number"
          step="any"
          value={value.budget_limit}
          onInput={set('budget_limit')}
          aria-invalid={invalid('budget_limit')}
        />
        <FieldError error={error} name={field('budget_limit')} />
      </label>
      <label>
        Budget period
        <select
          name={field('budget_period')}
          value={value.budget_period}
          onChange={set('budget_period')}
          aria-invalid={invalid('budget_period')}
        >
          <option value="none">No reset</option>
          <option value="daily">Daily (UTC)</option>
          <option value="monthly">Monthly (UTC)</option>
        </select>
        <FieldError error={error} name={field('budget_period')} />
      </label>
      <label>
        Alert at (% of budget)
        <input
          name={field('alert_percent')}
          type="number"
          step="any"
          value={value.alert_percent}
          onInput={set('alert_percent')}
          aria-invalid={invalid('budget_alert_threshold')}
        />
        <FieldError error={error} name={field('budget_alert_threshold')} />
      </label>
      <label>
        Requests / minute
        <input
          name={field('rpm')}
          type="number"
          step="1"
          value={value.rpm}
          onInput={set('rpm')}
          aria-invalid={invalid('rate_limit')}
        />
      </label>
      <label>
        Tokens / minute
        <input
          name={field('tpm')}
          type="number"
          step="1"
          value={value.tpm}
          onInput={set('tpm')}
          aria-invalid={invalid('rate_limit')}
        />
        <FieldError error={error} name={field('rate_limit')} />
      </label>
    </fieldset>
  );
}

function GuardrailPick({
  name,
  label,
  value,
  saved,
  onChange,
  error,
}: {
  name: 'input_guardrails' | 'output_guardrails';
  label: string;
  value: unknown[];
  saved: Saved[];
  onChange: (v: unknown[]) => void;
  error: unknown;
}) {
  const ids = value.filter((v): v is string => typeof v === 'string');
  const inline = value.length - ids.length;
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, id] : value.filter((v) => v !== id));
  // Ids the list does not show (another workspace's list, or refused to this key) stay editable as text.
  const others = ids.filter((id) => !saved.some((g) => g.id === id));
  return (
    <fieldset class="multi" data-guardrails={name}>
      <legend>{label}</legend>
      {saved.map((g) => (
        <label key={g.id} class="check">
          <input
            type="checkbox"
            name={name}
            value={g.id}
            checked={ids.includes(g.id)}
            onChange={(e) => toggle(g.id, e.currentTarget.checked)}
          />
          {g.name} <span class="muted small">{g.id}</span>
        </label>
      ))}
      <label class="grow">
        Other guardrail ids
        <input
          name={`${name}_ids`}
          value={others.join(', ')}
          placeholder={saved.length ? 'gr_…' : 'gr_… (comma separated)'}
          onChange={(e) =>
            onChange([
              ...value.filter((v) => typeof v !== 'string' || !others.includes(v)),
              ...list(e.currentTarget.value),
            ])
          }
        />
      </label>
      {inline > 0 && (
        <span class="muted small">
          and {inline} inline check{inline === 1 ? '' : 's'} (kept as they are)
        </span>
      )}
      <FieldError error={error} name={`policy.${name}`} />
      <FieldError error={error} name={name} />
    </fieldset>
  );
}

/**
 * The fields of a policy. The saved guardrails and configs of `workspace` are offered by name when the
 * key may read them; `user_limits` and the alert webhook exist only on a workspace's policy.
 */
export function PolicyFields({
  api,
  workspace,
  holder,
  value,
  onChange,
  error,
  canReadConfigs,
}: {
  api: GatewayApi;
  workspace: string;
  holder: 'workspace' | 'api_key';
  value: PolicyDraft;
  onChange: (v: PolicyDraft) => void;
  error: unknown;
  canReadConfigs: boolean;
}) {
  const guardrails = useLoad(
    () =>
      canReadConfigs
        ? api
            .get<ListReply<Saved>>('/guardrails')
            .then((r) => r.data.filter((g) => g.workspace === workspace))
        : Promise.resolve([]),
    [api, workspace, canReadConfigs],
  );
  const configs = useLoad(
    () =>
      canReadConfigs
        ? api.get<ListReply<Saved>>('/configs', { workspace }).then((r) => r.data)
        : Promise.resolve([]),
    [api, workspace, canReadConfigs],
  );
  const set = (k: keyof PolicyDraft) => (e: { currentTarget: { value: string } }) =>
    onChange({ ...value, [k]: e.currentTarget.value });
  const invalid = (name: string) => (fieldError(error, name) ? 'true' : undefined);
  const savedConfigs = configs.data ?? [];
  return (
    <div class="policy-fields" data-policy={holder}>
      <div class="form-grid">
        <label class="wide">
          <span>
            Allowed models (comma separated; <code>prefix*</code> matches a prefix; empty allows all)
          </span>
          <input
            name="allowed_models"
            value={value.allowed_models}
            onInput={set('allowed_models')}
            placeholder="gpt-4.1-mini, claude-sonnet-4*"
            aria-invalid={invalid('policy.allowed_models')}
          />
          <FieldError error={error} name="policy.allowed_models" />
        </label>
        <label class="wide">
          Allowed providers (comma separated; empty allows all)
          <input
            name="allowed_providers"
            value={value.allowed_providers}
            onInput={set('allowed_providers')}
            placeholder="openai, anthropic"
            aria-invalid={invalid('policy.allowed_providers')}
          />
          <FieldError error={error} name="policy.allowed_providers" />
        </label>
        <label>
          Custom hosts
          <select
            name="allow_custom_host"
            value={value.allow_custom_host}
            onChange={set('allow_custom_host')}
            aria-invalid={invalid('policy.allow_custom_host')}
          >
            <option value="">Not set</option>
            <option value="true">Allowed</option>
            <option value="false">Refused</option>
          </select>
          <FieldError error={error} name="policy.allow_custom_host" />
        </label>
        <label>
          Default config
          <select
            name="config"
            value={value.config}
            onChange={set('config')}
            aria-invalid={invalid('policy.config')}
          >
            <option value="">None</option>
            {/* A config the list does not show (not readable by this key) is kept as its id. */}
            {value.config && !savedConfigs.some((c) => c.id === value.config) && (
              <option value={value.config}>{value.config}</option>
            )}
            {savedConfigs.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.id})
              </option>
            ))}
          </select>
          <FieldError error={error} name="policy.config" />
        </label>
      </div>
      <GuardrailPick
        name="input_guardrails"
        label="Input guardrails (run on every request, before the config's)"
        value={value.input_guardrails}
        saved={guardrails.data ?? []}
        onChange={(v) => onChange({ ...value, input_guardrails: v })}
        error={error}
      />
      <GuardrailPick
        name="output_guardrails"
        label="Output guardrails"
        value={value.output_guardrails}
        saved={guardrails.data ?? []}
        onChange={(v) => onChange({ ...value, output_guardrails: v })}
        error={error}
      />
      <LimitInputs
        prefix="policy."
        label={holder === 'workspace' ? 'Workspace budget and rate limit' : 'Key budget and rate limit'}
        value={value}
        onChange={(v) => onChange({ ...value, ...v })}
        error={error}
      />
      {holder === 'workspace' && (
        <>
          <LimitInputs
            prefix="policy.user_limits."
            label="Per end user (each distinct user on its own)"
            value={value.user_limits}
            onChange={(v) => onChange({ ...value, user_limits: v })}
            error={error}
          />
          <fieldset class="form-grid wide">
            <legend>Budget alert webhook</legend>
            <label>
              URL
              <input
                name="webhook_url"
                type="url"
                placeholder="https://hooks.example.com/gateway"
                value={value.webhook_url}
                onInput={set('webhook_url')}
                aria-invalid={invalid('policy.budget_alert_webhook')}
              />
            </label>
            <label>
              {value.webhook_stored
                ? 'New secret (empty keeps the stored one)'
                : 'Signing secret (16+ characters)'}
              <input
                name="webhook_secret"
                type="password"
                autocomplete="off"
                value={value.webhook_secret}
                onInput={set('webhook_secret')}
                aria-invalid={invalid('policy.budget_alert_webhook')}
              />
              <FieldError error={error} name="policy.budget_alert_webhook" />
            </label>
          </fieldset>
        </>
      )}
    </div>
  );
}

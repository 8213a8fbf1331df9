import { useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import { BudgetMeter } from '../budget';
import { formatCost } from '../format';
import {
  DangerButton,
  FieldError,
  FormError,
  formatDate,
  ListTable,
  useConfirm,
  useLoad,
  useSubmit,
} from '../ui';

export interface VirtualKeyView {
  id: string;
  slug: string;
  name: string;
  workspace: string;
  provider: string;
  custom_host: string | null;
  vendor_organization: string | null;
  vendor_project: string | null;
  region: string | null;
  resource_name: string | null;
  deployment_id: string | null;
  api_version: string | null;
  budget_limit: number | null;
  budget_period: 'none' | 'monthly';
  budget_alert_threshold: number | null;
  rate_limit: { requests_per_minute: number } | null;
  spent: number;
  remaining: number | null;
  period: string;
  period_start: string | null;
  updated_at: string;
}

// The account fields some providers need, by provider: sent only for that provider, and null when empty.
const ACCOUNT_FIELDS: Record<string, [AccountField, string][]> = {
  openai: [
    ['vendor_organization', 'OpenAI organization (optional)'],
    ['vendor_project', 'OpenAI project (optional)'],
  ],
  'azure-openai': [
    ['resource_name', 'Azure resource name'],
    ['deployment_id', 'Deployment'],
    ['api_version', 'API version'],
  ],
  bedrock: [['region', 'AWS region']],
};
type AccountField =
  | 'vendor_organization'
  | 'vendor_project'
  | 'region'
  | 'resource_name'
  | 'deployment_id'
  | 'api_version';

// The providers most deployments use; the API's refusal lists every name it knows.
const PROVIDERS = [
  'openai',
  'azure-openai',
  'anthropic',
  'bedrock',
  'google',
  'groq',
  'mistral-ai',
  'ollama',
];

interface Draft {
  name: string;
  slug: string;
  provider: string;
  key: string;
  custom_host: string;
  budget_limit: string;
  budget_period: 'none' | 'monthly';
  alert_percent: string;
  rpm: string;
  account: Partial<Record<AccountField, string>>;
}

const blank: Draft = {
  name: '',
  slug: '',
  provider: 'openai',
  key: '',
  custom_host: '',
  budget_limit: '',
  budget_period: 'none',
  alert_percent: '',
  rpm: '',
  account: {},
};

function draftOf(vk: VirtualKeyView): Draft {
  return {
    name: vk.name,
    slug: vk.slug,
    provider: vk.provider,
    key: '',
    custom_host: vk.custom_host ?? '',
    budget_limit: vk.budget_limit === null ? '' : String(vk.budget_limit),
    budget_period: vk.budget_period,
    alert_percent:
      vk.budget_alert_threshold === null ? '' : String(Math.round(vk.budget_alert_threshold * 100)),
    rpm: vk.rate_limit ? String(vk.rate_limit.requests_per_minute) : '',
    account: Object.fromEntries((ACCOUNT_FIELDS[vk.provider] ?? []).map(([k]) => [k, vk[k] ?? ''])),
  };
}

/** The body of a create or a PATCH: empty fields are null (cleared), the credential only when typed. */
function bodyOf(d: Draft, creating: boolean, workspace: string): Record<string, unknown> {
  const num = (s: string) => (s.trim() === '' ? null : Number(s));
  const body: Record<string, unknown> = {
    name: d.name,
    provider: d.provider.trim(),
    custom_host: d.custom_host.trim() || null,
    budget_limit: num(d.budget_limit),
    budget_period: d.budget_period,
    budget_alert_threshold: d.alert_percent.trim() === '' ? null : Number(d.alert_percent) / 100,
    rate_limit: d.rpm.trim() === '' ? null : { requests_per_minute: Number(d.rpm) },
  };
  for (const [k] of ACCOUNT_FIELDS[d.provider.trim()] ?? []) body[k] = d.account[k]?.trim() || null;
  if (d.key.trim() || creating) body.key = d.key;
  if (creating && d.slug.trim()) body.slug = d.slug.trim();
  if (creating && workspace) body.workspace = workspace;
  return body;
}

function Budget({ vk }: { vk: VirtualKeyView }) {
  if (vk.budget_limit === null) return <span>{formatCost(vk.spent)} spent, no budget</span>;
  return (
    <BudgetMeter
      name={vk.slug}
      limit={vk.budget_limit}
      spent={vk.spent}
      remaining={vk.remaining}
      periodStart={vk.budget_period === 'monthly' ? vk.period_start : null}
      alertAt={vk.budget_alert_threshold}
    />
  );
}

function VirtualKeyForm({
  api,
  workspace,
  editing,
  onDone,
}: {
  api: GatewayApi;
  workspace: string;
  editing: VirtualKeyView | null;
  onDone: () => void;
}) {
  const [d, setD] = useState<Draft>(editing ? draftOf(editing) : blank);
  const set = (k: keyof Draft) => (e: { currentTarget: { value: string } }) =>
    setD({ ...d, [k]: e.currentTarget.value });
  const form = useSubmit(async () => {
    if (editing) {
      await api.send('PATCH', `/virtual-keys/${encodeURIComponent(editing.slug)}`, bodyOf(d, false, ''), {
        workspace: workspace || undefined,
      });
    } else {
      await api.send('POST', '/virtual-keys', bodyOf(d, true, workspace));
      setD(blank);
    }
    onDone();
  });
  const fields = ['name', 'slug', 'key', 'custom_host'];
  return (
    <form
      class="card"
      onSubmit={form.submit}
      aria-label={editing ? `Edit ${editing.slug}` : 'New virtual key'}
    >
      <h3>{editing ? `Edit ${editing.slug}` : 'New virtual key'}</h3>
      <div class="form-grid">
        <label>
          Name
          <input name="name" required value={d.name} onInput={set('name')} />
        </label>
        {!editing && (
          <label>
            Slug (optional)
            <input name="slug" placeholder="from the name" value={d.slug} onInput={set('slug')} />
          </label>
        )}
        <label>
          Provider
          <input name="provider" list="providers" required value={d.provider} onInput={set('provider')} />
          <datalist id="providers">
            {PROVIDERS.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
        </label>
        <label>
          {editing ? 'New credential (rotates it; empty keeps it)' : 'Provider credential'}
          <input
            name="key"
            type="password"
            autocomplete="off"
            required={!editing}
            value={d.key}
            onInput={set('key')}
          />
        </label>
        <label>
          Custom host (optional)
          <input
            name="custom_host"
            type="url"
            placeholder="https://…"
            value={d.custom_host}
            onInput={set('custom_host')}
          />
        </label>
        {(ACCOUNT_FIELDS[d.provider.trim()] ?? []).map(([k, label]) => (
          <label key={k}>
            {label}
            <input
              name={k}
              value={d.account[k] ?? ''}
              onInput={(e) => setD({ ...d, account: { ...d.account, [k]: e.currentTarget.value } })}
            />
          </label>
        ))}
        <label>
          Budget limit (USD)
          <input
            name="budget_limit"
            type="number"
            min="0"
            step="any"
            value={d.budget_limit}
            onInput={set('budget_limit')}
          />
        </label>
        <label>
          Budget period
          <select name="budget_period" value={d.budget_period} onChange={set('budget_period')}>
            <option value="none">No reset</option>
            <option value="monthly">Monthly</option>
          </select>
        </label>
        <label>
          Alert at (% of budget)
          <input
            name="alert_percent"
            type="number"
            min="1"
            max="100"
            value={d.alert_percent}
            onInput={set('alert_percent')}
          />
        </label>
        <label>
          Rate limit (requests / minute)
          <input name="rpm" type="number" min="1" step="1" value={d.rpm} onInput={set('rpm')} />
        </label>
      </div>
      {fields.map((f) => (
        <FieldError key={f} error={form.error} name={f} />
      ))}
      <FormError error={form.error} fields={fields} />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          {editing ? 'Save changes' : 'Create virtual key'}
        </button>
        {editing && (
          <button type="button" class="secondary" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function VirtualKeysPage({
  api,
  caller,
  workspace,
}: {
  api: GatewayApi;
  caller: Caller;
  workspace: string;
}) {
  const writable = can(caller, 'virtual_keys.write');
  const list = useLoad(
    () => api.get<ListReply<VirtualKeyView>>('/virtual-keys', { workspace: workspace || undefined }),
    [api, workspace],
  );
  const [editing, setEditing] = useState<VirtualKeyView | null>(null);
  const [dialog, confirm] = useConfirm();
  const keys = list.data?.data ?? [];
  return (
    <section data-page="virtual-keys">
      <h2>Virtual keys</h2>
      <p class="muted">
        A virtual key keeps a provider credential in the gateway, with a budget and a rate limit. Requests
        name it as <code>x-gateway-provider: @slug</code>.
      </p>
      {writable && (
        <VirtualKeyForm
          key={editing?.slug ?? 'new'}
          api={api}
          workspace={workspace}
          editing={editing}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
      <ListTable
        error={list.error}
        loaded={!!list.data}
        rows={keys}
        empty={
          <>
            No virtual keys yet.
            {writable
              ? ' Add your first provider credential with the form above.'
              : ' A key with virtual_keys.write adds them.'}
          </>
        }
        head={
          <>
            <th>Slug</th>
            <th>Provider</th>
            <th>Spend against budget</th>
            <th>Rate limit</th>
            <th>Updated</th>
          </>
        }
        actions={writable}
        row={(vk) => (
          <tr key={vk.id} data-row={vk.slug}>
            <td>
              <code>@{vk.slug}</code>
              <div class="muted small">{vk.name}</div>
            </td>
            <td>
              {vk.provider}
              {vk.custom_host && <div class="muted small">{vk.custom_host}</div>}
            </td>
            <td>
              <Budget vk={vk} />
            </td>
            <td>{vk.rate_limit ? `${vk.rate_limit.requests_per_minute}/min` : '—'}</td>
            <td class="nowrap">{formatDate(vk.updated_at)}</td>
            {writable && (
              <td class="row-actions">
                <button type="button" class="secondary small" onClick={() => setEditing(vk)}>
                  Edit
                </button>
                <DangerButton
                  confirm={confirm}
                  message={`Delete the virtual key @${vk.slug}? Requests that name it will fail.`}
                  confirmLabel="Delete virtual key"
                  action={async () => {
                    await api.send('DELETE', `/virtual-keys/${encodeURIComponent(vk.slug)}`, undefined, {
                      workspace: workspace || undefined,
                    });
                    if (editing?.slug === vk.slug) setEditing(null);
                    list.reload();
                  }}
                >
                  Delete
                </DangerButton>
              </td>
            )}
          </tr>
        )}
      />
      {dialog}
    </section>
  );
}

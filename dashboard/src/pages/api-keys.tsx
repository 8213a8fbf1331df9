import { useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import { BudgetMeter, type BudgetView } from '../budget';
import { POLICY_PARAMS, PolicyFields, type PolicyView, policyDraft, policyOf } from '../policy-form';
import {
  CopyButton,
  DangerButton,
  FieldError,
  FormError,
  fieldError,
  formatDate,
  ListTable,
  useConfirm,
  useFocusOnMount,
  useLoad,
  useSubmit,
} from '../ui';

// The scopes of functions/core/operations.ts, in its order; the API refuses any other.
export const SCOPES = [
  'completions.write',
  'logs.view',
  'virtual_keys.read',
  'virtual_keys.write',
  'prompts.read',
  'prompts.write',
  'configs.read',
  'configs.write',
  'api_keys.read',
  'api_keys.write',
] as const;
const DEFAULT_SCOPES = ['completions.write', 'logs.view'];

interface ApiKey {
  id: string;
  name: string;
  type: 'workspace' | 'organisation';
  workspace: string | null;
  scopes: string[];
  last_four: string;
  created_at: string;
  /** Not every version of the API reports it. */
  last_used_at?: string | null;
  policy: PolicyView | null;
  budget: BudgetView | null;
}

/** Renames a key and sets its policy (`PATCH /v1/api-keys/{id}`; the policy is replaced whole). */
function EditKey({
  api,
  caller,
  apiKey,
  onDone,
}: {
  api: GatewayApi;
  caller: Caller;
  apiKey: ApiKey;
  onDone: () => void;
}) {
  const [name, setName] = useState(apiKey.name);
  const first = useFocusOnMount<HTMLInputElement>();
  const [draft, setDraft] = useState(() => policyDraft(apiKey.policy));
  const form = useSubmit(async () => {
    await api.send('PATCH', `/api-keys/${encodeURIComponent(apiKey.id)}`, {
      name,
      policy: policyOf(draft, 'api_key'),
    });
    onDone();
  });
  return (
    <form
      class="card"
      onSubmit={form.submit}
      onKeyDown={(e) => e.key === 'Escape' && onDone()}
      aria-label={`Edit ${apiKey.name}`}
    >
      <h3>Edit {apiKey.name}</h3>
      <label>
        Name
        <input
          ref={first}
          name="name"
          required
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <FieldError error={form.error} name="name" />
      </label>
      <PolicyFields
        api={api}
        workspace={apiKey.workspace ?? caller.workspace}
        holder="api_key"
        value={draft}
        onChange={setDraft}
        error={form.error}
        canReadConfigs={can(caller, 'configs.read')}
      />
      <FormError error={form.error} fields={['name', ...POLICY_PARAMS]} />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Save changes
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ApiKeysPage({
  api,
  caller,
  workspace,
}: {
  api: GatewayApi;
  caller: Caller;
  workspace: string;
}) {
  const list = useLoad(() => api.get<ListReply<ApiKey>>('/api-keys'), [api]);
  const writable = can(caller, 'api_keys.write');
  const admin = can(caller, 'admin');
  const [draft, setDraft] = useState(() => policyDraft(null));
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<'workspace' | 'organisation'>('workspace');
  const [scopes, setScopes] = useState<string[]>(() => DEFAULT_SCOPES.filter((s) => can(caller, s)));
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [dialog, confirm] = useConfirm();
  const create = useSubmit(async () => {
    const body: Record<string, unknown> = { name, type };
    if (type === 'workspace') {
      body.scopes = scopes;
      if (workspace) body.workspace = workspace;
      const policy = policyOf(draft, 'api_key');
      if (policy) body.policy = policy;
    }
    const created = await api.send<ApiKey & { key: string }>('POST', '/api-keys', body);
    setSecret({ name: created.name, key: created.key });
    setName('');
    setDraft(policyDraft(null));
    list.reload();
  });
  const keys = list.data?.data ?? [];
  const showLastUsed = keys.some((k) => k.last_used_at !== undefined);

  return (
    <section data-page="api-keys">
      <h2>API keys</h2>
      {secret && (
        <div class="card secret" role="status" data-secret>
          <p>
            <strong>{secret.name}</strong>: copy the key now. It is shown only this once.
          </p>
          <div class="secret-row">
            <code data-secret-value>{secret.key}</code>
            <CopyButton text={secret.key} />
            <button type="button" class="secondary" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      {editing && (
        <EditKey
          key={editing.id}
          api={api}
          caller={caller}
          apiKey={editing}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
      {writable && (
        <form class="card" onSubmit={create.submit} aria-label="New API key">
          <div class="form-row">
            <label>
              Name
              <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
              <FieldError error={create.error} name="name" />
            </label>
            <label>
              Type
              <select
                name="type"
                value={type}
                onChange={(e) => setType(e.currentTarget.value as 'workspace' | 'organisation')}
              >
                <option value="workspace">Workspace key{workspace ? ` (${workspace})` : ''}</option>
                {admin && <option value="organisation">Organisation admin key</option>}
              </select>
              <FieldError error={create.error} name="type" />
            </label>
          </div>
          {type === 'workspace' && (
            <fieldset class="scopes">
              <legend>Scopes</legend>
              {SCOPES.map((s) => (
                <label key={s} class="check">
                  <input
                    type="checkbox"
                    name="scope"
                    value={s}
                    checked={scopes.includes(s)}
                    // A key cannot grant a scope it does not hold.
                    disabled={!can(caller, s)}
                    onChange={(e) =>
                      setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))
                    }
                  />
                  {s}
                </label>
              ))}
              <FieldError error={create.error} name="scopes" />
            </fieldset>
          )}
          {type === 'workspace' && (
            <details
              class="policy"
              open={create.error !== null && POLICY_PARAMS.some((f) => fieldError(create.error, f))}
            >
              <summary>Policy (optional): budget, rate limit, allowlists, guardrails</summary>
              <PolicyFields
                api={api}
                workspace={workspace || caller.workspace}
                holder="api_key"
                value={draft}
                onChange={setDraft}
                error={create.error}
                canReadConfigs={can(caller, 'configs.read')}
              />
            </details>
          )}
          <FormError error={create.error} fields={['name', 'type', 'scopes', ...POLICY_PARAMS]} />
          <button type="submit" disabled={create.busy}>
            Create key
          </button>
        </form>
      )}
      <ListTable
        error={list.error}
        loaded={!!list.data}
        rows={keys}
        empty={
          <>No API keys you can see.{writable ? ' Create one above and hand it to an application.' : ''}</>
        }
        head={
          <>
            <th>Name</th>
            <th>Key</th>
            <th>Type</th>
            <th>Workspace</th>
            <th>Scopes</th>
            <th>Budget</th>
            <th>Created</th>
            {showLastUsed && <th>Last used</th>}
          </>
        }
        actions={writable}
        row={(k) => (
          <tr key={k.id} data-row={k.id}>
            <td>
              {k.name}
              <div class="muted small">{k.id}</div>
            </td>
            <td class="nowrap">
              <code>gwk_…{k.last_four}</code>
            </td>
            <td>{k.type}</td>
            <td>{k.workspace ?? '—'}</td>
            <td>
              {k.type === 'organisation'
                ? 'all'
                : k.scopes.map((s) => (
                    <span class="chip" key={s}>
                      {s}
                    </span>
                  ))}
            </td>
            <td>
              {k.budget ? (
                <BudgetMeter
                  name={k.id}
                  limit={k.budget.limit}
                  spent={k.budget.spent}
                  remaining={k.budget.remaining}
                  periodStart={k.budget.period_start}
                  alertAt={k.policy?.budget_alert_threshold ?? null}
                />
              ) : (
                '—'
              )}
            </td>
            <td class="nowrap">{formatDate(k.created_at)}</td>
            {showLastUsed && <td class="nowrap">{formatDate(k.last_used_at)}</td>}
            {writable && (
              <td class="row-actions">
                <button type="button" class="secondary small" onClick={() => setEditing(k)}>
                  Edit
                </button>
                <DangerButton
                  confirm={confirm}
                  message={`Revoke "${k.name}" (…${k.last_four})? Applications using it stop working.`}
                  confirmLabel="Revoke key"
                  action={async () => {
                    await api.send('DELETE', `/api-keys/${encodeURIComponent(k.id)}`);
                    list.reload();
                  }}
                >
                  Revoke
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

import { useState } from 'preact/hooks';
import type { GatewayApi, ListReply } from '../api';
import {
  Alert,
  CopyButton,
  DangerButton,
  Empty,
  FieldError,
  FormError,
  formatDate,
  useConfirm,
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
}

export function ApiKeysPage({ api, workspace }: { api: GatewayApi; workspace: string }) {
  const list = useLoad(() => api.get<ListReply<ApiKey>>('/api-keys'), [api]);
  const [name, setName] = useState('');
  const [type, setType] = useState<'workspace' | 'organisation'>('workspace');
  const [scopes, setScopes] = useState<string[]>(DEFAULT_SCOPES);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [dialog, confirm] = useConfirm();
  const create = useSubmit(async () => {
    const body: Record<string, unknown> = { name, type };
    if (type === 'workspace') {
      body.scopes = scopes;
      if (workspace) body.workspace = workspace;
    }
    const created = await api.send<ApiKey & { key: string }>('POST', '/api-keys', body);
    setSecret({ name: created.name, key: created.key });
    setName('');
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
              <option value="organisation">Organisation admin key</option>
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
        <FormError error={create.error} fields={['name', 'type', 'scopes']} />
        <button type="submit" disabled={create.busy}>
          Create key
        </button>
      </form>
      <Alert text={list.error} />
      {list.data && keys.length === 0 && (
        <Empty>No API keys you can see. Create one above and hand it to an application.</Empty>
      )}
      {keys.length > 0 && (
        <div class="card table-wrap">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Type</th>
                <th>Workspace</th>
                <th>Scopes</th>
                <th>Created</th>
                {showLastUsed && <th>Last used</th>}
                <th>
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
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
                  <td class="nowrap">{formatDate(k.created_at)}</td>
                  {showLastUsed && <td class="nowrap">{formatDate(k.last_used_at)}</td>}
                  <td>
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
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {dialog}
    </section>
  );
}

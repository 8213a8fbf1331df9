import { useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import {
  Alert,
  DangerButton,
  errorText,
  FieldError,
  FormError,
  formatDate,
  ListTable,
  parseJsonField,
  useConfirm,
  useLoad,
  useSubmit,
} from '../ui';

interface SavedConfig {
  id: string;
  name: string | null;
  workspace: string;
  config: unknown;
  updated_at: string;
}

const EXAMPLE = `{
  "strategy": { "mode": "fallback" },
  "targets": [
    { "virtual_key": "primary" },
    { "virtual_key": "backup" }
  ]
}`;

function ConfigForm({
  api,
  workspace,
  editing,
  onDone,
}: {
  api: GatewayApi;
  workspace: string;
  editing: SavedConfig | null;
  onDone: () => void;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [text, setText] = useState(editing ? JSON.stringify(editing.config, null, 2) : EXAMPLE);
  const form = useSubmit(async () => {
    const body: Record<string, unknown> = {
      name: name.trim() || null,
      config: parseJsonField(text, 'config'),
    };
    if (editing) {
      await api.send('PUT', `/configs/${encodeURIComponent(editing.id)}`, body, {
        workspace: workspace || undefined,
      });
    } else {
      if (workspace) body.workspace = workspace;
      await api.send('POST', '/configs', body);
      setName('');
      setText(EXAMPLE);
    }
    onDone();
  });
  return (
    <form class="card" onSubmit={form.submit} aria-label={editing ? `Edit ${editing.id}` : 'New config'}>
      <h3>{editing ? `Edit ${editing.id}` : 'New config'}</h3>
      <label>
        Name
        <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <FieldError error={form.error} name="name" />
      </label>
      <label>
        Config (JSON)
        <textarea
          name="config"
          class="code"
          rows={12}
          spellcheck={false}
          value={text}
          aria-invalid={!!form.error}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <FieldError error={form.error} name="config" />
      </label>
      <FormError error={form.error} fields={['name', 'config']} />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          {editing ? 'Save config' : 'Create config'}
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

/** Sends one chat completion through the saved config, as an application would. */
function TryIt({ api, config, onClose }: { api: GatewayApi; config: SavedConfig; onClose: () => void }) {
  const [model, setModel] = useState('gpt-4o-mini');
  const [message, setMessage] = useState('Say hello.');
  const [reply, setReply] = useState<string | null>(null);
  const run = useSubmit(async () => {
    setReply(null);
    const res = await api.send<{ choices?: { message?: { content?: string } }[] }>(
      'POST',
      '/chat/completions',
      { model, messages: [{ role: 'user', content: message }] },
      {},
      { 'x-gateway-config': config.id },
    );
    setReply(res.choices?.[0]?.message?.content ?? JSON.stringify(res));
  });
  return (
    <form class="card" onSubmit={run.submit} aria-label={`Try ${config.id}`} data-try={config.id}>
      <h3>Try {config.name ?? config.id}</h3>
      <div class="form-row">
        <label>
          Model
          <input name="model" required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
        </label>
        <label class="grow">
          Message
          <input name="message" required value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
      </div>
      <div class="actions">
        <button type="submit" disabled={run.busy}>
          {run.busy ? 'Sending…' : 'Send'}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {run.error ? <Alert text={errorText(run.error)} /> : null}
      {reply !== null && (
        <pre class="json" data-try-reply>
          {reply}
        </pre>
      )}
    </form>
  );
}

export function ConfigsPage({
  api,
  caller,
  workspace,
}: {
  api: GatewayApi;
  caller: Caller;
  workspace: string;
}) {
  const writable = can(caller, 'configs.write');
  const canTry = can(caller, 'completions.write');
  const list = useLoad(
    () => api.get<ListReply<SavedConfig>>('/configs', { workspace: workspace || undefined }),
    [api, workspace],
  );
  const [editing, setEditing] = useState<SavedConfig | null>(null);
  const [trying, setTrying] = useState<SavedConfig | null>(null);
  const [dialog, confirm] = useConfirm();
  const configs = list.data?.data ?? [];
  return (
    <section data-page="configs">
      <h2>Saved configs</h2>
      <p class="muted">
        A saved config holds routing (fallback, load balancing, retries) and guardrails. Requests use it with{' '}
        <code>x-gateway-config: cfg_…</code>.
      </p>
      {writable && (
        <ConfigForm
          key={editing?.id ?? 'new'}
          api={api}
          workspace={workspace}
          editing={editing}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
      {trying && <TryIt key={trying.id} api={api} config={trying} onClose={() => setTrying(null)} />}
      <ListTable
        error={list.error}
        loaded={!!list.data}
        rows={configs}
        empty={
          <>
            No saved configs yet.
            {writable
              ? ' Write one above; the example falls back from one virtual key to another.'
              : ' A key with configs.write saves them.'}
          </>
        }
        head={
          <>
            <th>Config</th>
            <th>Targets</th>
            <th>Updated</th>
          </>
        }
        actions={writable || canTry}
        row={(c) => (
          <tr key={c.id} data-row={c.id}>
            <td>
              {c.name ?? <span class="muted">unnamed</span>}
              <div class="muted small">
                <code>{c.id}</code>
              </div>
            </td>
            <td>
              <code class="small">{JSON.stringify(c.config).slice(0, 120)}</code>
            </td>
            <td class="nowrap">{formatDate(c.updated_at)}</td>
            {(writable || canTry) && (
              <td class="row-actions">
                {canTry && (
                  <button type="button" class="secondary small" onClick={() => setTrying(c)}>
                    Try it
                  </button>
                )}
                {writable && (
                  <button type="button" class="secondary small" onClick={() => setEditing(c)}>
                    Edit
                  </button>
                )}
                {writable && (
                  <DangerButton
                    confirm={confirm}
                    message={`Delete the config ${c.name ?? c.id}? Requests that name it will fail.`}
                    confirmLabel="Delete config"
                    action={async () => {
                      await api.send('DELETE', `/configs/${encodeURIComponent(c.id)}`, undefined, {
                        workspace: workspace || undefined,
                      });
                      if (editing?.id === c.id) setEditing(null);
                      if (trying?.id === c.id) setTrying(null);
                      list.reload();
                    }}
                  >
                    Delete
                  </DangerButton>
                )}
              </td>
            )}
          </tr>
        )}
      />
      {dialog}
    </section>
  );
}

import Mustache from 'mustache';
import { useEffect, useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import { lineDiff } from '../diff';
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

interface Message {
  role: string;
  content: string;
}
interface Prompt {
  id: string;
  version: number;
  name: string;
  model: string;
  messages: { role: string; content: unknown }[];
  variables: string[];
  provider: string | null;
  virtual_key: string | null;
  hyperparameters: Record<string, unknown>;
  updated_at: string;
}

/** The variables of the templates as Mustache reads them (the gateway renders with Mustache too). */
export function templateVariables(messages: Message[]): { names: string[]; error: string | null } {
  const names = new Set<string>();
  try {
    const walk = (tokens: unknown[][]) => {
      for (const [type, value, , , children] of tokens) {
        if ((type === 'name' || type === '&' || type === '#' || type === '^') && value !== '.') {
          names.add(String(value));
        }
        if (Array.isArray(children)) walk(children as unknown[][]);
      }
    };
    for (const m of messages) walk(Mustache.parse(m.content) as unknown as unknown[][]);
    return { names: [...names], error: null };
  } catch (e) {
    return { names: [...names], error: (e as Error).message };
  }
}

const asText = (p: Prompt) =>
  [
    `model: ${p.model}`,
    `target: ${p.virtual_key ? `@${p.virtual_key}` : (p.provider ?? '—')}`,
    ...p.messages.map(
      (m) => `[${m.role}] ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
    ),
    ...(Object.keys(p.hyperparameters).length
      ? [`hyperparameters: ${JSON.stringify(p.hyperparameters)}`]
      : []),
  ].join('\n');

function PromptForm({
  api,
  workspace,
  editing,
  onDone,
}: {
  api: GatewayApi;
  workspace: string;
  editing: Prompt | null;
  onDone: (saved: Prompt | null) => void;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [model, setModel] = useState(editing?.model ?? 'gpt-4o-mini');
  const [target, setTarget] = useState(
    editing ? (editing.virtual_key ? `@${editing.virtual_key}` : (editing.provider ?? '')) : '',
  );
  const [messages, setMessages] = useState<Message[]>(
    editing
      ? editing.messages.map((m) => ({
          role: m.role,
          content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
        }))
      : [
          { role: 'system', content: 'You are a helpful assistant for {{company}}.' },
          { role: 'user', content: '{{question}}' },
        ],
  );
  const [hyper, setHyper] = useState(
    editing && Object.keys(editing.hyperparameters).length ? JSON.stringify(editing.hyperparameters) : '',
  );
  const variables = templateVariables(messages);
  const form = useSubmit(async () => {
    const body: Record<string, unknown> = { name, model, messages };
    const t = target.trim();
    if (t.startsWith('@')) body.virtual_key = t.slice(1);
    else if (t) body.provider = t;
    else if (editing) Object.assign(body, { provider: null, virtual_key: null });
    // Sent only when filled: an empty field keeps the version's hyperparameters.
    if (hyper.trim()) body.hyperparameters = parseJsonField(hyper, 'hyperparameters');
    let saved: Prompt;
    if (editing) {
      saved = await api.send<Prompt>('PUT', `/prompts/${encodeURIComponent(editing.id)}`, body, {
        workspace: workspace || undefined,
      });
    } else {
      if (workspace) body.workspace = workspace;
      saved = await api.send<Prompt>('POST', '/prompts', body);
    }
    onDone(saved);
  });
  const fields = ['name', 'model', 'messages', 'provider', 'virtual_key', 'hyperparameters'];
  return (
    <form class="card" onSubmit={form.submit} aria-label={editing ? `Edit ${editing.id}` : 'New prompt'}>
      <h3>{editing ? `Edit ${editing.name} (saving makes version ${editing.version + 1})` : 'New prompt'}</h3>
      <div class="form-grid">
        <label>
          Name
          <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={form.error} name="name" />
        </label>
        <label>
          Model
          <input name="model" required value={model} onInput={(e) => setModel(e.currentTarget.value)} />
          <FieldError error={form.error} name="model" />
        </label>
        <label>
          Target (provider or @slug)
          <input
            name="target"
            placeholder="openai or @team-a"
            value={target}
            onInput={(e) => setTarget(e.currentTarget.value)}
          />
          <FieldError error={form.error} name="provider" />
          <FieldError error={form.error} name="virtual_key" />
        </label>
        <label>
          Hyperparameters (JSON, optional)
          <input
            name="hyperparameters"
            placeholder='{"temperature": 0.2}'
            value={hyper}
            onInput={(e) => setHyper(e.currentTarget.value)}
          />
          <FieldError error={form.error} name="hyperparameters" />
        </label>
      </div>
      {messages.map((m, i) => (
        // Messages are edited in place; their position is their identity.
        <div class="message-row" key={i}>
          <select
            aria-label={`Role of message ${i + 1}`}
            name={`messages[${i}].role`}
            value={m.role}
            onChange={(e) =>
              setMessages(messages.map((x, j) => (j === i ? { ...x, role: e.currentTarget.value } : x)))
            }
          >
            <option value="system">system</option>
            <option value="developer">developer</option>
            <option value="user">user</option>
            <option value="assistant">assistant</option>
          </select>
          <textarea
            aria-label={`Message ${i + 1}`}
            name={`messages[${i}].content`}
            rows={2}
            value={m.content}
            onInput={(e) =>
              setMessages(messages.map((x, j) => (j === i ? { ...x, content: e.currentTarget.value } : x)))
            }
          />
          <button
            type="button"
            class="secondary small remove"
            aria-label={`Remove message ${i + 1}`}
            onClick={() => setMessages(messages.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <FieldError error={form.error} name="messages" />
      <p class="variables" data-variables={variables.names.join(',')}>
        Variables:{' '}
        {variables.names.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          variables.names.map((v) => <code class="chip" key={v}>{`{{${v}}}`}</code>)
        )}
        {variables.error && (
          <span class="field-error"> The template is not valid Mustache: {variables.error}</span>
        )}
      </p>
      <FormError error={form.error} fields={fields} />
      <div class="actions">
        <button
          type="button"
          class="secondary"
          onClick={() => setMessages([...messages, { role: 'user', content: '' }])}
        >
          Add message
        </button>
        <button type="submit" disabled={form.busy}>
          {editing ? 'Save new version' : 'Create prompt'}
        </button>
        {editing && (
          <button type="button" class="secondary" onClick={() => onDone(null)}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** Render and run a prompt with values for its variables. */
function RunPanel({ api, prompt, canRun }: { api: GatewayApi; prompt: Prompt; canRun: boolean }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [out, setOut] = useState<{ kind: 'render' | 'run'; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const call = async (kind: 'render' | 'run') => {
    setBusy(true);
    setError(null);
    setOut(null);
    try {
      const body = { variables: values, version: prompt.version };
      if (kind === 'render') {
        const r = await api.send<{ data: unknown }>(
          'POST',
          `/prompts/${encodeURIComponent(prompt.id)}/render`,
          body,
        );
        setOut({ kind, text: JSON.stringify(r.data, null, 2) });
      } else {
        const r = await api.send<{ choices?: { message?: { content?: string } }[] }>(
          'POST',
          `/prompts/${encodeURIComponent(prompt.id)}/completions`,
          body,
        );
        setOut({ kind, text: r.choices?.[0]?.message?.content ?? JSON.stringify(r, null, 2) });
      }
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card" data-run={prompt.id}>
      <h3>Render and test run (version {prompt.version})</h3>
      <div class="form-grid">
        {prompt.variables.map((v) => (
          <label key={v}>
            {v}
            <input
              name={`variables.${v}`}
              value={values[v] ?? ''}
              onInput={(e) => setValues({ ...values, [v]: e.currentTarget.value })}
            />
          </label>
        ))}
      </div>
      {prompt.variables.length === 0 && <p class="muted">This prompt has no variables.</p>}
      <div class="actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => call('render')}>
          Render
        </button>
        {canRun && (
          <button type="button" disabled={busy} onClick={() => call('run')}>
            Test run
          </button>
        )}
      </div>
      <Alert text={error} />
      {out && (
        <pre class="json" data-output={out.kind}>
          {out.text}
        </pre>
      )}
    </div>
  );
}

/** Two versions side by side as a line diff; the latest against the one before, by default. */
function Versions({ api, prompt, workspace }: { api: GatewayApi; prompt: Prompt; workspace: string }) {
  const [from, setFrom] = useState(Math.max(1, prompt.version - 1));
  const [to, setTo] = useState(prompt.version);
  const [texts, setTexts] = useState<[string, string] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const get = (v: number) =>
      api.get<Prompt>(`/prompts/${encodeURIComponent(prompt.id)}`, {
        version: String(v),
        workspace: workspace || undefined,
      });
    setError(null);
    Promise.all([get(from), get(to)]).then(
      ([a, b]) => setTexts([asText(a), asText(b)]),
      (e: unknown) => setError(errorText(e)),
    );
  }, [api, prompt.id, from, to, workspace]);
  const versions = Array.from({ length: prompt.version }, (_, i) => i + 1);
  const select = (label: string, value: number, set: (n: number) => void) => (
    <label>
      {label}
      <select name={label} value={value} onChange={(e) => set(Number(e.currentTarget.value))}>
        {versions.map((v) => (
          <option key={v} value={v}>
            v{v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="card" data-versions={prompt.id}>
      <h3>Versions ({prompt.version})</h3>
      <div class="form-row">
        {select('From', from, setFrom)}
        {select('To', to, setTo)}
      </div>
      <Alert text={error} />
      {texts && (
        <pre class="diff" data-diff>
          {lineDiff(texts[0], texts[1]).map((l, i) => (
            // A diff's lines are positional.
            <div key={i} class={`diff-${l.kind}`}>
              {l.kind === 'add' ? '+ ' : l.kind === 'del' ? '- ' : '  '}
              {l.text}
            </div>
          ))}
        </pre>
      )}
    </div>
  );
}

export function PromptsPage({
  api,
  caller,
  workspace,
}: {
  api: GatewayApi;
  caller: Caller;
  workspace: string;
}) {
  const writable = can(caller, 'prompts.write');
  const list = useLoad(
    () => api.get<ListReply<Prompt>>('/prompts', { workspace: workspace || undefined }),
    [api, workspace],
  );
  const [open, setOpen] = useState<Prompt | null>(null);
  const [editing, setEditing] = useState(false);
  const [dialog, confirm] = useConfirm();
  const prompts = list.data?.data ?? [];
  return (
    <section data-page="prompts">
      <h2>Prompts</h2>
      {writable && (
        <PromptForm
          key={open && editing ? `${open.id}-${open.version}` : 'new'}
          api={api}
          workspace={workspace}
          editing={open && editing ? open : null}
          onDone={(saved) => {
            setEditing(false);
            if (saved) setOpen(saved);
            list.reload();
          }}
        />
      )}
      {open && !editing && (
        <div class="open-head">
          <h3>
            {open.name} (v{open.version})
          </h3>
          <button type="button" class="secondary small" onClick={() => setOpen(null)}>
            Close
          </button>
        </div>
      )}
      {open && !editing && (
        <div class="grid2 open-panels">
          <RunPanel
            key={`${open.id}-${open.version}`}
            api={api}
            prompt={open}
            canRun={can(caller, 'completions.write')}
          />
          <Versions key={`${open.id}-${open.version}`} api={api} prompt={open} workspace={workspace} />
        </div>
      )}
      <ListTable
        error={list.error}
        loaded={!!list.data}
        rows={prompts}
        empty={
          <>
            No prompts yet.
            {writable ? (
              <> Write a template above; {'{{variables}}'} are filled in when it runs.</>
            ) : (
              ' A key with prompts.write writes them.'
            )}
          </>
        }
        head={
          <>
            <th>Prompt</th>
            <th>Model</th>
            <th>Variables</th>
            <th>Version</th>
            <th>Updated</th>
          </>
        }
        actions
        row={(p) => (
          <tr key={p.id} data-row={p.id} class={open?.id === p.id ? 'selected' : ''}>
            <td>
              {p.name}
              <div class="muted small">
                <code>{p.id}</code>
              </div>
            </td>
            <td>{p.model}</td>
            <td>{p.variables.join(', ') || '—'}</td>
            <td>v{p.version}</td>
            <td class="nowrap">{formatDate(p.updated_at)}</td>
            <td class="row-actions">
              <button
                type="button"
                class="secondary small"
                onClick={() => {
                  setOpen(p);
                  setEditing(false);
                }}
              >
                Open
              </button>
              {writable && (
                <button
                  type="button"
                  class="secondary small"
                  onClick={() => {
                    setOpen(p);
                    setEditing(true);
                  }}
                >
                  Edit
                </button>
              )}
              {writable && (
                <DangerButton
                  confirm={confirm}
                  message={`Delete the prompt ${p.name} and all its versions?`}
                  confirmLabel="Delete prompt"
                  action={async () => {
                    await api.send('DELETE', `/prompts/${encodeURIComponent(p.id)}`);
                    if (open?.id === p.id) setOpen(null);
                    list.reload();
                  }}
                >
                  Delete
                </DangerButton>
              )}
            </td>
          </tr>
        )}
      />
      {dialog}
    </section>
  );
}

import { useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import {
  DangerButton,
  FieldError,
  FormError,
  formatDate,
  ListTable,
  parseJsonField,
  useConfirm,
  useLoad,
  useSubmit,
} from '../ui';

// The check types of functions/guardrails/checks, each with its parameters as form fields.
type ParamKind = 'list' | 'count' | 'bool' | 'text' | 'json' | 'choice' | 'multi';
interface ParamSpec {
  name: string;
  label: string;
  kind: ParamKind;
  options?: string[];
  /** Shown for a checkbox left as the check's default. */
  fallback?: boolean;
}
interface CheckSpec {
  type: string;
  label: string;
  redacts: boolean;
  params: ParamSpec[];
}

const bounds: ParamSpec[] = [
  { name: 'min', label: 'At least', kind: 'count' },
  { name: 'max', label: 'At most', kind: 'count' },
];
export const CHECKS: CheckSpec[] = [
  {
    type: 'pii',
    label: 'Personal data',
    redacts: true,
    params: [
      {
        name: 'kinds',
        label: 'Kinds (none ticked: all)',
        kind: 'multi',
        options: ['email', 'phone', 'credit_card', 'iban', 'ip_address', 'us_ssn', 'uk_nino', 'es_dni'],
      },
    ],
  },
  {
    type: 'prompt_injection',
    label: 'Prompt injection',
    redacts: true,
    params: [{ name: 'extra_phrases', label: 'Extra phrases (comma separated)', kind: 'list' }],
  },
  {
    type: 'contains',
    label: 'Word list',
    redacts: true,
    params: [
      { name: 'words', label: 'Words (comma separated)', kind: 'list' },
      { name: 'operator', label: 'Passes when', kind: 'choice', options: ['none', 'any', 'all'] },
      { name: 'case_sensitive', label: 'Case sensitive', kind: 'bool', fallback: false },
      { name: 'whole_words', label: 'Whole words', kind: 'bool', fallback: true },
    ],
  },
  {
    type: 'regex',
    label: 'Regular expression',
    redacts: true,
    params: [
      { name: 'pattern', label: 'Pattern', kind: 'text' },
      { name: 'flags', label: 'Flags (i, m, s, u)', kind: 'text' },
      { name: 'must_match', label: 'Must match (fail when absent)', kind: 'bool', fallback: false },
    ],
  },
  {
    type: 'urls',
    label: 'URLs',
    redacts: true,
    params: [
      { name: 'allowed_domains', label: 'Allowed domains (comma separated)', kind: 'list' },
      { name: 'denied_domains', label: 'Denied domains (comma separated)', kind: 'list' },
    ],
  },
  {
    type: 'allowed_models',
    label: 'Allowed models',
    redacts: false,
    params: [{ name: 'models', label: 'Models (comma separated; a trailing * is a prefix)', kind: 'list' }],
  },
  {
    type: 'moderation',
    label: 'Moderation endpoint',
    redacts: false,
    params: [{ name: 'categories', label: 'Categories (comma separated; empty: any)', kind: 'list' }],
  },
  { type: 'valid_json', label: 'Valid JSON', redacts: false, params: [] },
  {
    type: 'json_schema',
    label: 'JSON Schema',
    redacts: false,
    params: [{ name: 'schema', label: 'Schema (JSON)', kind: 'json' }],
  },
  { type: 'character_count', label: 'Character count', redacts: false, params: bounds },
  { type: 'word_count', label: 'Word count', redacts: false, params: bounds },
  { type: 'sentence_count', label: 'Sentence count', redacts: false, params: bounds },
];
const specOf = (type: string) => CHECKS.find((c) => c.type === type) ?? (CHECKS[0] as CheckSpec);

type Value = string | boolean | string[];
interface CheckDraft {
  type: string;
  action: string;
  id: string;
  values: Record<string, Value>;
}

interface Guardrail {
  id: string;
  name: string;
  checks: Record<string, unknown>[];
  updated_at: string;
}

function draftOf(check: Record<string, unknown>): CheckDraft {
  const spec = specOf(String(check.type));
  const values: Record<string, Value> = {};
  for (const p of spec.params) {
    const v = check[p.name];
    if (v === undefined) continue;
    if (p.kind === 'list') values[p.name] = (v as string[]).join(', ');
    else if (p.kind === 'multi') values[p.name] = v as string[];
    else if (p.kind === 'bool') values[p.name] = v as boolean;
    else if (p.kind === 'json') values[p.name] = JSON.stringify(v, null, 2);
    else values[p.name] = String(v);
  }
  return { type: spec.type, action: String(check.action ?? 'deny'), id: String(check.id ?? ''), values };
}

/** A check as the API takes it: `{type, action, id?, ...params}`, fields left empty omitted. */
function checkOf(d: CheckDraft, at: string): Record<string, unknown> {
  const out: Record<string, unknown> = { type: d.type, action: d.action };
  if (d.id.trim()) out.id = d.id.trim();
  for (const p of specOf(d.type).params) {
    const v = d.values[p.name];
    if (v === undefined || v === '') continue;
    if (p.kind === 'list') {
      const items = String(v)
        .split(/[,\n]/)
        .map((s) => s.trim())
        .filter(Boolean);
      if (items.length > 0) out[p.name] = items;
    } else if (p.kind === 'multi') {
      if ((v as string[]).length > 0) out[p.name] = v;
    } else if (p.kind === 'count') out[p.name] = Number(v);
    else if (p.kind === 'json') out[p.name] = parseJsonField(String(v), `${at}.${p.name}`);
    else if (p.kind === 'bool') {
      if (v !== p.fallback) out[p.name] = v;
    } else out[p.name] = v;
  }
  return out;
}

function CheckEditor({
  draft,
  index,
  onChange,
  onRemove,
}: {
  draft: CheckDraft;
  index: number;
  onChange: (d: CheckDraft) => void;
  onRemove: () => void;
}) {
  const spec = specOf(draft.type);
  const setValue = (name: string, v: Value) => onChange({ ...draft, values: { ...draft.values, [name]: v } });
  return (
    <fieldset class="check-editor" data-check={index}>
      <legend>Check {index + 1}</legend>
      <div class="form-grid">
        <label>
          Type
          <select
            name={`checks[${index}].type`}
            value={draft.type}
            onChange={(e) =>
              onChange({ type: e.currentTarget.value, action: 'deny', id: draft.id, values: {} })
            }
          >
            {CHECKS.map((c) => (
              <option key={c.type} value={c.type}>
                {c.label} ({c.type})
              </option>
            ))}
          </select>
        </label>
        <label>
          On failure
          <select
            name={`checks[${index}].action`}
            value={draft.action}
            onChange={(e) => onChange({ ...draft, action: e.currentTarget.value })}
          >
            <option value="deny">Deny the request</option>
            <option value="log">Log only</option>
            {spec.redacts && <option value="redact">Redact the text</option>}
          </select>
        </label>
        <label>
          Id (optional)
          <input
            name={`checks[${index}].id`}
            value={draft.id}
            onInput={(e) => onChange({ ...draft, id: e.currentTarget.value })}
          />
        </label>
        {spec.params.map((p) => {
          const name = `checks[${index}].${p.name}`;
          const v = draft.values[p.name];
          if (p.kind === 'bool') {
            return (
              <label key={p.name} class="check">
                <input
                  type="checkbox"
                  name={name}
                  checked={v === undefined ? p.fallback : (v as boolean)}
                  onChange={(e) => setValue(p.name, e.currentTarget.checked)}
                />
                {p.label}
              </label>
            );
          }
          if (p.kind === 'choice') {
            return (
              <label key={p.name}>
                {p.label}
                <select
                  name={name}
                  value={(v as string) ?? p.options?.[0]}
                  onChange={(e) => setValue(p.name, e.currentTarget.value)}
                >
                  {p.options?.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              </label>
            );
          }
          if (p.kind === 'multi') {
            const chosen = (v as string[] | undefined) ?? [];
            return (
              <fieldset key={p.name} class="multi">
                <legend>{p.label}</legend>
                {p.options?.map((o) => (
                  <label key={o} class="check">
                    <input
                      type="checkbox"
                      name={name}
                      value={o}
                      checked={chosen.includes(o)}
                      onChange={(e) =>
                        setValue(
                          p.name,
                          e.currentTarget.checked ? [...chosen, o] : chosen.filter((x) => x !== o),
                        )
                      }
                    />
                    {o}
                  </label>
                ))}
              </fieldset>
            );
          }
          return p.kind === 'json' ? (
            <label key={p.name} class="wide">
              {p.label}
              <textarea
                name={name}
                class="code"
                rows={5}
                value={(v as string) ?? ''}
                onInput={(e) => setValue(p.name, e.currentTarget.value)}
              />
            </label>
          ) : (
            <label key={p.name}>
              {p.label}
              <input
                name={name}
                type={p.kind === 'count' ? 'number' : 'text'}
                min={p.kind === 'count' ? 0 : undefined}
                value={(v as string) ?? ''}
                onInput={(e) => setValue(p.name, e.currentTarget.value)}
              />
            </label>
          );
        })}
      </div>
      {spec.params.length === 0 && <p class="muted small">This check has no parameters.</p>}
      <button
        type="button"
        class="secondary small"
        onClick={onRemove}
        aria-label={`Remove check ${index + 1}`}
      >
        Remove check
      </button>
    </fieldset>
  );
}

const newCheck = (): CheckDraft => ({ type: 'pii', action: 'deny', id: '', values: {} });

function GuardrailForm({
  api,
  editing,
  onDone,
}: {
  api: GatewayApi;
  editing: Guardrail | null;
  onDone: () => void;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [checks, setChecks] = useState<CheckDraft[]>(editing ? editing.checks.map(draftOf) : [newCheck()]);
  const form = useSubmit(async () => {
    const body = { name, checks: checks.map((c, i) => checkOf(c, `checks[${i}]`)) };
    if (editing) await api.send('PUT', `/guardrails/${encodeURIComponent(editing.id)}`, body);
    else {
      await api.send('POST', '/guardrails', body);
      setName('');
      setChecks([newCheck()]);
    }
    onDone();
  });
  return (
    <form class="card" onSubmit={form.submit} aria-label={editing ? `Edit ${editing.id}` : 'New guardrail'}>
      <h3>{editing ? `Edit ${editing.name}` : 'New guardrail'}</h3>
      <label>
        Name
        <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {checks.map((c, i) => (
        <CheckEditor
          // Checks have no stable id while edited; their position is what they are.
          key={i}
          draft={c}
          index={i}
          onChange={(d) => setChecks(checks.map((x, j) => (j === i ? d : x)))}
          onRemove={() => setChecks(checks.filter((_, j) => j !== i))}
        />
      ))}
      <FieldError error={form.error} name="checks" />
      <FormError error={form.error} fields={['checks']} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => setChecks([...checks, newCheck()])}>
          Add check
        </button>
        <button type="submit" disabled={form.busy}>
          {editing ? 'Save guardrail' : 'Create guardrail'}
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

export function GuardrailsPage({ api, caller }: { api: GatewayApi; caller: Caller }) {
  const writable = can(caller, 'configs.write');
  const list = useLoad(() => api.get<ListReply<Guardrail>>('/guardrails'), [api]);
  const [editing, setEditing] = useState<Guardrail | null>(null);
  const [dialog, confirm] = useConfirm();
  const items = list.data?.data ?? [];
  return (
    <section data-page="guardrails">
      <h2>Guardrails</h2>
      <p class="muted">
        A guardrail is a named list of checks, kept in the signed-in key's workspace. A config runs it by id
        in <code>input_guardrails</code> or <code>output_guardrails</code>.
      </p>
      {writable && (
        <GuardrailForm
          key={editing?.id ?? 'new'}
          api={api}
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
        rows={items}
        empty={
          <>
            No guardrails yet.
            {writable
              ? ' Pick the checks above and create the first.'
              : ' A key with configs.write adds them.'}
          </>
        }
        head={
          <>
            <th>Guardrail</th>
            <th>Checks</th>
            <th>Updated</th>
          </>
        }
        actions={writable}
        row={(g) => (
          <tr key={g.id} data-row={g.id}>
            <td>
              {g.name}
              <div class="muted small">
                <code>{g.id}</code>
              </div>
            </td>
            <td>
              {g.checks.map((c, i) => (
                // The checks of a saved guardrail are listed in their order.
                <span class="chip" key={i}>
                  {String(c.type)} → {String(c.action ?? 'deny')}
                </span>
              ))}
            </td>
            <td class="nowrap">{formatDate(g.updated_at)}</td>
            {writable && (
              <td class="row-actions">
                <button type="button" class="secondary small" onClick={() => setEditing(g)}>
                  Edit
                </button>
                <DangerButton
                  confirm={confirm}
                  message={`Delete the guardrail ${g.name}? Configs that name it will refuse requests.`}
                  confirmLabel="Delete guardrail"
                  action={async () => {
                    await api.send('DELETE', `/guardrails/${encodeURIComponent(g.id)}`);
                    if (editing?.id === g.id) setEditing(null);
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

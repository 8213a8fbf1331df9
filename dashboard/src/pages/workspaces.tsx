import { useState } from 'preact/hooks';
import { type Caller, can, type GatewayApi, type ListReply } from '../api';
import { BudgetMeter, type BudgetView } from '../budget';
import { POLICY_PARAMS, PolicyFields, type PolicyView, policyDraft, policyOf } from '../policy-form';
import {
  Alert,
  DangerButton,
  FieldError,
  FormError,
  formatDate,
  ListTable,
  useConfirm,
  useFocusOnMount,
  useLoad,
  useSubmit,
} from '../ui';

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

interface WorkspaceDetail extends Workspace {
  policy: PolicyView | null;
  budget: BudgetView | null;
  updated_at: string;
}

/**
 * One workspace's policy and budget. An organisation admin edits the policy (`PATCH`, replaced whole);
 * anyone else reads their own workspace's, with the form disabled.
 */
function WorkspacePolicy({
  api,
  caller,
  slug,
  onClose,
}: {
  api: GatewayApi;
  caller: Caller;
  slug: string;
  onClose?: () => void;
}) {
  const heading = useFocusOnMount<HTMLHeadingElement>();
  const detail = useLoad(
    () => api.get<WorkspaceDetail>(`/workspaces/${encodeURIComponent(slug)}`),
    [api, slug],
  );
  return (
    <div class="card" data-workspace-policy={slug}>
      <h3 ref={heading} tabIndex={-1}>
        Policy of {slug}
      </h3>
      <Alert text={detail.error} />
      {detail.data && (
        <PolicyEditor
          key={detail.data.updated_at}
          api={api}
          caller={caller}
          ws={detail.data}
          onSaved={detail.reload}
          onClose={onClose}
        />
      )}
    </div>
  );
}

function PolicyEditor({
  api,
  caller,
  ws,
  onSaved,
  onClose,
}: {
  api: GatewayApi;
  caller: Caller;
  ws: WorkspaceDetail;
  onSaved: () => void;
  onClose?: () => void;
}) {
  const admin = can(caller, 'admin');
  const [draft, setDraft] = useState(() => policyDraft(ws.policy));
  const [dialog, confirm] = useConfirm();
  const path = `/workspaces/${encodeURIComponent(ws.slug)}`;
  const save = useSubmit(async () => {
    await api.send('PATCH', path, { policy: policyOf(draft, 'workspace') });
    onSaved();
  });
  return (
    <>
      {ws.budget ? (
        <BudgetMeter
          name={ws.slug}
          limit={ws.budget.limit}
          spent={ws.budget.spent}
          remaining={ws.budget.remaining}
          periodStart={ws.budget.period_start}
          alertAt={ws.policy?.budget_alert_threshold ?? null}
        />
      ) : (
        <p class="muted">No workspace budget.</p>
      )}
      <form
        onSubmit={save.submit}
        // Escape in a field closes the panel (the confirmation dialog is outside the form).
        onKeyDown={(e) => e.key === 'Escape' && onClose?.()}
        aria-label={`Policy of ${ws.slug}`}
      >
        {/* Only an organisation admin may change a policy: others see it, disabled. */}
        <fieldset disabled={!admin} class="plain">
          <legend class="sr-only">Policy fields</legend>
          <PolicyFields
            api={api}
            workspace={ws.slug}
            holder="workspace"
            value={draft}
            onChange={setDraft}
            error={save.error}
            canReadConfigs={can(caller, 'configs.read')}
          />
        </fieldset>
        <FormError error={save.error} fields={POLICY_PARAMS} />
        <p class="muted small" data-updated={ws.updated_at}>
          Updated {formatDate(ws.updated_at)}
        </p>
        <div class="actions">
          {admin && (
            <button type="submit" disabled={save.busy}>
              Save policy
            </button>
          )}
          {admin && ws.policy && (
            <DangerButton
              confirm={confirm}
              message={`Remove the policy of ${ws.slug}? Its budget, limits and allowlists stop applying.`}
              confirmLabel="Remove policy"
              action={async () => {
                await api.send('PATCH', path, { policy: null });
                onSaved();
              }}
            >
              Remove policy
            </DangerButton>
          )}
          {onClose && (
            <button type="button" class="secondary" onClick={onClose}>
              Close
            </button>
          )}
        </div>
      </form>
      {dialog}
    </>
  );
}

/** Workspaces of the organisation: an admin lists and creates them and sets their policies. */
export function WorkspacesPage({
  api,
  caller,
  onChange,
}: {
  api: GatewayApi;
  caller: Caller;
  onChange: () => void;
}) {
  const admin = can(caller, 'admin');
  const list = useLoad(
    () => (admin ? api.get<ListReply<Workspace>>('/workspaces').then((r) => r.data) : Promise.resolve([])),
    [api, admin],
  );
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const create = useSubmit(async () => {
    await api.send('POST', '/workspaces', { name, ...(slug.trim() ? { slug: slug.trim() } : {}) });
    setName('');
    setSlug('');
    list.reload();
    onChange();
  });

  if (!admin) {
    return (
      <section data-page="workspaces">
        <h2>Workspace</h2>
        <p class="muted">
          This key acts in <code>{caller.workspace}</code>. An organisation admin sets its policy.
        </p>
        <WorkspacePolicy api={api} caller={caller} slug={caller.workspace} />
      </section>
    );
  }

  const rows = list.data ?? [];
  return (
    <section data-page="workspaces">
      <h2>Workspaces</h2>
      <form class="card form-row" onSubmit={create.submit} aria-label="New workspace">
        <label>
          Name
          <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={create.error} name="name" />
        </label>
        <label>
          Slug (optional)
          <input
            name="slug"
            placeholder="from the name"
            value={slug}
            onInput={(e) => setSlug(e.currentTarget.value)}
          />
          <FieldError error={create.error} name="slug" />
        </label>
        <button type="submit" disabled={create.busy}>
          Create workspace
        </button>
        <FormError error={create.error} fields={['name', 'slug']} />
      </form>
      <Alert text={list.error} />
      {open && (
        <WorkspacePolicy key={open} api={api} caller={caller} slug={open} onClose={() => setOpen(null)} />
      )}
      <ListTable
        loaded={!!list.data}
        rows={rows}
        empty={<>No workspaces yet. Create one above, then give it API keys and virtual keys.</>}
        head={
          <>
            <th>Slug</th>
            <th>Name</th>
            <th>Id</th>
            <th>Created</th>
          </>
        }
        actions
        row={(w) => (
          <tr key={w.id} data-row={w.slug} class={open === w.slug ? 'selected' : ''}>
            <td class="nowrap">
              <code>{w.slug}</code>
            </td>
            <td>{w.name}</td>
            <td class="muted">{w.id}</td>
            <td class="nowrap">{formatDate(w.created_at)}</td>
            <td class="row-actions">
              <button type="button" class="secondary small" onClick={() => setOpen(w.slug)}>
                Policy
              </button>
            </td>
          </tr>
        )}
      />
    </section>
  );
}

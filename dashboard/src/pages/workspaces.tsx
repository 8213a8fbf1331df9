import { useState } from 'preact/hooks';
import type { GatewayApi, ListReply } from '../api';
import { Alert, Empty, FieldError, FormError, formatDate, useLoad, useSubmit } from '../ui';

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

/** Workspaces of the organisation: an organisation admin key lists and creates them. */
export function WorkspacesPage({ api, onChange }: { api: GatewayApi; onChange: () => void }) {
  const list = useLoad(() => api.get<ListReply<Workspace>>('/workspaces'), [api]);
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const create = useSubmit(async () => {
    await api.send('POST', '/workspaces', { name, ...(slug.trim() ? { slug: slug.trim() } : {}) });
    setName('');
    setSlug('');
    list.reload();
    onChange();
  });

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
      {list.data && list.data.data.length === 0 && (
        <Empty>No workspaces yet. Create one above, then give it API keys and virtual keys.</Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <div class="card table-wrap">
          <table>
            <thead>
              <tr>
                <th>Slug</th>
                <th>Name</th>
                <th>Id</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((w) => (
                <tr key={w.id} data-row={w.slug}>
                  <td>
                    <code>{w.slug}</code>
                  </td>
                  <td>{w.name}</td>
                  <td class="muted">{w.id}</td>
                  <td class="nowrap">{formatDate(w.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

import { useState } from 'preact/hooks';
import type { GatewayApi } from '../api';
import { Alert, FieldError, FormError, fieldError, formatDate, useLoad, useSubmit } from '../ui';

interface EgressSettings {
  allow_custom_hosts: boolean;
  allowed_hosts: string[];
  updated_at: string | null;
}

/** Which custom hosts requests may name (`PUT/GET /v1/organisation/egress`, admin). */
export function EgressPage({ api }: { api: GatewayApi }) {
  const current = useLoad(() => api.get<EgressSettings>('/organisation/egress'), [api]);
  return (
    <section data-page="egress">
      <h2>Egress</h2>
      <p class="muted">
        Whether a request may send its call to a host it names (<code>x-gateway-custom-host</code>, a config's{' '}
        <code>custom_host</code>), and to which. A virtual key's credential only ever goes to its own host,
        and every address still passes the gateway's address guard.
      </p>
      <Alert text={current.error} />
      {current.data && (
        <EgressForm key={current.data.updated_at ?? 'default'} api={api} value={current.data} />
      )}
    </section>
  );
}

function EgressForm({ api, value }: { api: GatewayApi; value: EgressSettings }) {
  const [allow, setAllow] = useState(value.allow_custom_hosts);
  const [hosts, setHosts] = useState(value.allowed_hosts.join('\n'));
  const [saved, setSaved] = useState(value);
  const save = useSubmit(async () => {
    const allowed_hosts = hosts
      .split(/[\n,]+/)
      .map((h) => h.trim())
      .filter(Boolean);
    setSaved(
      await api.send<EgressSettings>('PUT', '/organisation/egress', {
        allow_custom_hosts: allow,
        allowed_hosts,
      }),
    );
  });
  return (
    <form class="card" onSubmit={save.submit} aria-label="Egress settings">
      <p data-egress-state={saved.allow_custom_hosts ? 'allowed' : 'refused'}>
        Custom hosts are <strong>{saved.allow_custom_hosts ? 'allowed' : 'refused'}</strong>
        {saved.allow_custom_hosts && saved.allowed_hosts.length > 0
          ? ` for ${saved.allowed_hosts.length} host pattern(s)`
          : ''}
        {saved.updated_at ? `; updated ${formatDate(saved.updated_at)}.` : ' (the runtime default).'}
      </p>
      <label class="check">
        <input
          type="checkbox"
          name="allow_custom_hosts"
          checked={allow}
          onChange={(e) => setAllow(e.currentTarget.checked)}
        />
        Requests may name a custom host
      </label>
      <FieldError error={save.error} name="allow_custom_hosts" />
      <label>
        <span>
          Allowed hosts (one per line: <code>host</code>, <code>host:port</code> or <code>*.domain</code>,
          empty allows any host that passes the address guard)
        </span>
        <textarea
          name="allowed_hosts"
          class="code"
          rows={5}
          value={hosts}
          onInput={(e) => setHosts(e.currentTarget.value)}
          aria-invalid={fieldError(save.error, 'allowed_hosts') ? 'true' : undefined}
        />
        <FieldError error={save.error} name="allowed_hosts" />
      </label>
      <FormError error={save.error} fields={['allow_custom_hosts', 'allowed_hosts']} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          Save egress settings
        </button>
      </div>
    </form>
  );
}
